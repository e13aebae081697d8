// A whole mesh on loopback over a tiny random model, and a small arithmetic dataset.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startMesh, type MeshOptions, type RunningMesh } from "../../src/mesh/start-mesh.js";
import { writeTinyModel } from "../../../../tests/support/tiny-model.js";

export interface MeshFixture {
  dir: string;
  modelDir: string;
  /** The dataset, relative to `dir` (the orchestrator's data_root). */
  dataset: string;
  runsDir: string;
  /** The learner's settings, also as `lean-grpo serve learner` dotted overrides (a learner in its own process). */
  learnerOverrides: string[];
  /**
   * Starts the mesh; `learnerUrl` (`inferenceUrl`) uses a learner (inference service) running elsewhere instead of starting one,
   * `verifier` is the verifier's config section (e.g. a REPL stand-in as repl.command).
   */
  start(options?: {
    learnerUrl?: string;
    inferenceUrl?: string;
    verifier?: Record<string, unknown>;
    /** Where the mesh token comes from (MeshOptions.auth); by default the process's LEANGRPO_AUTH_TOKEN. */
    auth?: MeshOptions["auth"];
  }): Promise<RunningMesh>;
  cleanup(): Promise<void>;
}

/** `extraChars`: characters the tiny model's vocabulary adds (its prompts must tokenise). */
export async function meshFixture(options: { extraChars?: string } = {}): Promise<MeshFixture> {
  const dir = await mkdtemp(path.join(tmpdir(), "orchestrator-"));
  const modelDir = await writeTinyModel(path.join(dir, "model"), 1, options.extraChars);
  const dataset = "arith.jsonl";
  const problems = [
    ["1+1", "2"],
    ["2+2", "4"],
    ["3+1", "4"],
    ["2*3", "6"],
    ["5-2", "3"],
    ["4+4", "8"],
  ];
  await writeFile(path.join(dir, dataset), problems.map(([problem, answer]) => JSON.stringify({ problem, answer })).join("\n"));
  const runsDir = path.join(dir, "runs");
  const learner = {
    backend: "cpu",
    "lora.rank": 2,
    "lora.alpha": 4,
    "optimizer.learning_rate": 1e-2,
    // A learner sharing the orchestrator's filesystem writes checkpoints into runs_dir (shared-runs-dir.ts).
    checkpoint_dir: runsDir,
    "model.dir": modelDir,
  };
  return {
    dir,
    modelDir,
    dataset,
    runsDir,
    learnerOverrides: Object.entries(learner).map(([key, value]) => `${key}=${value}`),
    start: (options = {}) =>
      startMesh({
        modelDir,
        services: {
          inference: options.inferenceUrl
            ? { url: options.inferenceUrl }
            : { embedded: { tensor_backend: "cpu" }, adapters: { dir: path.join(dir, "adapters") } },
          learner: options.learnerUrl
            ? { url: options.learnerUrl }
            : { backend: "cpu", lora: { rank: 2, alpha: 4 }, optimizer: { learning_rate: 1e-2 } },
          ...(options.verifier ? { verifier: options.verifier } : {}),
        },
        orchestrator: { runs_dir: runsDir, data_root: dir, retry_backoff_ms: 50, service_retries: 1 },
        ...(options.auth ? { auth: options.auth } : {}),
      }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Small, fast training settings for tests. */
export function tinyTraining(steps: number, extra: Record<string, unknown> = {}) {
  return { steps, batch_size: 2, num_generations: 2, max_tokens: 6, checkpoint_every: 2, ...extra };
}
