// A whole mesh on loopback over a tiny random model, and a small arithmetic dataset.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startMesh, type RunningMesh } from "../../src/cli/start-mesh.js";
import { writeTinyModel } from "./tiny-model.js";

export interface MeshFixture {
  dir: string;
  modelDir: string;
  dataset: string;
  runsDir: string;
  start(): Promise<RunningMesh>;
  cleanup(): Promise<void>;
}

export async function meshFixture(): Promise<MeshFixture> {
  const dir = await mkdtemp(path.join(tmpdir(), "orchestrator-"));
  const modelDir = await writeTinyModel(path.join(dir, "model"));
  const dataset = path.join(dir, "arith.jsonl");
  const problems = [["1+1", "2"], ["2+2", "4"], ["3+1", "4"], ["2*3", "6"], ["5-2", "3"], ["4+4", "8"]];
  await writeFile(dataset, problems.map(([problem, answer]) => JSON.stringify({ problem, answer })).join("\n"));
  const runsDir = path.join(dir, "runs");
  return {
    dir, modelDir, dataset, runsDir,
    start: () =>
      startMesh({
        modelDir,
        services: {
          inference: { embedded: { tensor_backend: "cpu" }, adapters: { dir: path.join(dir, "adapters") } },
          learner: { backend: "cpu", lora: { rank: 2, alpha: 4 }, optimizer: { learning_rate: 1e-2 }, checkpoint_dir: path.join(dir, "ckpt") },
        },
        orchestrator: { runs_dir: runsDir, retry_backoff_ms: 50, service_retries: 1 },
      }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Small, fast training settings for tests. */
export function tinyTraining(steps: number, extra: Record<string, unknown> = {}) {
  return { steps, batch_size: 2, num_generations: 2, max_tokens: 6, checkpoint_every: 2, ...extra };
}
