// A run with a reasoning vocabulary (docs/concepts/reasoning-vocabulary.md) through the whole
// mesh: it trains, records n_s, n_r, the map hash and the mask in run.json and its step metrics,
// stops and resumes from its checkpoint; and StartRun refuses, naming the key and leaving no
// directory, a gated run through vLLM without the logits processor and a mesh whose inference
// service and learner hold different maps.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { startMesh } from "../src/mesh/start-mesh.js";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";
import { watchToEnd, withMesh } from "./support/orchestrator-client.js";
import { startVllmStandIn } from "../../../tests/fakes/vllm/vllm-stand-in.js";

const REASONING = { reasoning_vocab_size: 10, reasoning_markers: [":", "="], reasoning_mask: "gated" };
const STEPS = 3;
const CONFIG = {
  algorithm: { name: "grpo" },
  reward: { preset: "shaped" },
  training: tinyTraining(STEPS, { seed: 3 }),
  model: { reasoning_mask: "gated" },
};

let fixture: MeshFixture;
beforeAll(async () => {
  fixture = await meshFixture();
});
afterAll(() => fixture?.cleanup());

const mesh = (reasoning: { inference?: Record<string, unknown>; learner?: Record<string, unknown> }, inference?: Record<string, unknown>) =>
  startMesh({
    modelDir: fixture.modelDir,
    reasoning: REASONING,
    services: {
      inference: inference ?? {
        embedded: { tensor_backend: "cpu" },
        adapters: { dir: path.join(fixture.dir, "adapters") },
        model: reasoning.inference ?? {},
      },
      learner: {
        backend: "cpu",
        lora: { rank: 2, alpha: 4 },
        optimizer: { learning_rate: 1e-2 },
        checkpoint_dir: path.join(fixture.dir, "ckpt"),
        model: reasoning.learner ?? {},
      },
    },
    orchestrator: { runs_dir: fixture.runsDir, data_root: fixture.dir },
  });

describe("a run with a reasoning vocabulary", () => {
  it("trains, records the vocabulary and its metrics, and resumes from its checkpoint", async () => {
    const stopped = await withMesh(await mesh({}), async (client) => {
      await client.startRun({ datasetPath: fixture.dataset, runId: "reasoning", config: CONFIG });
      return watchToEnd(client, "reasoning", (step) => step === 1 && client.stopRun({ runId: "reasoning" }));
    });
    expect(stopped.state).toBe(RunState.STOPPED);
    expect(stopped.reasoningVocabulary).toMatchObject({ reasoningSize: 10, startMarker: ":", endMarker: "=" });
    const run = JSON.parse(await readFile(path.join(fixture.runsDir, "reasoning", "run.json"), "utf8"));
    expect(run.reasoning).toMatchObject({ n_r: 10, mask: "gated", markers: [":", "="] });
    expect(run.reasoning.map_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(run.reasoning.n_s).toBe(stopped.reasoningVocabulary!.standardSize);

    const resumed = await withMesh(await mesh({}), async (client) => {
      await client.startRun({ resumeRunId: "reasoning", datasetPath: fixture.dataset });
      return watchToEnd(client, "reasoning");
    });
    expect(resumed.state).toBe(RunState.COMPLETED);
    const steps = (await readFile(path.join(fixture.runsDir, "reasoning", "metrics.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { step: number; metrics: Record<string, number> });
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3].slice(0, steps.length));
    expect(steps.at(-1)!.step).toBe(STEPS);
    for (const s of steps)
      for (const key of ["reasoning_share", "reasoning_block_opened", "reasoning_block_closed"])
        expect(s.metrics[key]).toBeTypeOf("number");
    const adapter = path.join(fixture.runsDir, "reasoning", "adapters", `policy-v${STEPS}`);
    const map = JSON.parse(await readFile(path.join(adapter, "reasoning_token_map.json"), "utf8"));
    expect(map.sha256).toBe(run.reasoning.map_sha256);
    expect(JSON.parse(await readFile(path.join(adapter, "adapter_config.json"), "utf8")).trainable_token_indices.embed_tokens).toHaveLength(
      10,
    );
  }, 300_000);

  it("is refused at StartRun when the inference service and the learner hold different maps, naming the keys", async () => {
    await withMesh(
      await mesh({ learner: { reasoning_vocab_size: 6, reasoning_markers: [":", "="], reasoning_mask: "gated" } }),
      async (client) => {
        const error = await client.startRun({ datasetPath: fixture.dataset, runId: "mismatch", config: CONFIG }).then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
        expect(error?.code).toBe(Code.FailedPrecondition);
        expect(error?.rawMessage).toMatch(
          /inference service's model has reasoning vocabulary n_s \d+, n_r 10.*learner's has n_s \d+, n_r 6.*model\.reasoning_vocab_size/,
        );
        expect(existsSync(path.join(fixture.runsDir, "mismatch"))).toBe(false);
      },
    );
  }, 300_000);

  it("is refused at StartRun when vLLM cannot apply the gated mask, naming the keys", async () => {
    const vllm = await startVllmStandIn({ logprobsMode: "processed_logprobs" });
    try {
      await withMesh(await mesh({}, { vllm: { url: vllm.url, logprobs_mode: "processed_logprobs" } }), async (client) => {
        const error = await client.startRun({ datasetPath: fixture.dataset, runId: "vllm-gated", config: CONFIG }).then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
        expect(error?.code).toBe(Code.FailedPrecondition);
        expect(error?.rawMessage).toMatch(/model\.reasoning_mask=gated.*inference\.vllm\.reasoning_logits_processor: true/s);
        expect(existsSync(path.join(fixture.runsDir, "vllm-gated"))).toBe(false);
      });
    } finally {
      await vllm.close();
    }
  }, 300_000);
});
