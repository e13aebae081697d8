// `lean-grpo eval`: an evaluation over the embedded mesh with the base model and with a
// run's latest adapter.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OrchestratorService, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createServiceClient } from "@lean-grpo/kit";
import { evaluateWithMesh, type EvalWithMeshOptions } from "../src/eval/evaluate-with-mesh.js";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";

describe("evaluateWithMesh", () => {
  let fixture: MeshFixture;
  let base: Omit<EvalWithMeshOptions, "k">;
  beforeAll(async () => {
    fixture = await meshFixture();
    base = {
      data: fixture.dataset,
      runsDir: fixture.runsDir,
      modelDir: fixture.modelDir,
      maxTokens: 6,
      services: {
        inference: { embedded: { tensor_backend: "cpu" }, adapters: { dir: path.join(fixture.dir, "eval-adapters") } },
        learner: { backend: "cpu" },
      },
    };
    const mesh = await fixture.start();
    const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [mesh.urls.orchestrator!] });
    try {
      await client.startRun({
        datasetPath: fixture.dataset,
        runId: "trained",
        config: { reward: { preset: "shaped" }, training: tinyTraining(2) },
      });
      for await (const event of client.watchRun({ runId: "trained" })) {
        if (event.event.case === "stateChange" && event.event.value.state === RunState.FAILED) throw new Error(event.event.value.error);
      }
    } finally {
      transport.close();
      await mesh.shutdown();
    }
  }, 120_000);
  afterAll(() => fixture?.cleanup());

  it("greedy pass@1 of the base model: one completion per problem, the same twice", async () => {
    const first = await evaluateWithMesh({ ...base, k: 1 });
    expect(first.evaluated).toBe("base model");
    expect(first.greedy).toBe(true);
    expect(first.problems).toBe(6);
    expect(first.results.every((r) => r.samples === 1 && (r.solved === 0 || r.solved === 1))).toBe(true);
    expect(first.pass_at_1).toBe(first.results.filter((r) => r.solved === 1).length / 6);
    const second = await evaluateWithMesh({ ...base, k: 1 });
    expect(second.results).toEqual(first.results);
  }, 60_000);

  it("pass@k with a run's latest adapter samples n completions per problem", async () => {
    const report = await evaluateWithMesh({ ...base, k: 2, samples: 3, run: "trained" });
    expect(report.evaluated).toBe(path.join(fixture.runsDir, "trained", "adapters", "policy-v2"));
    expect(report.greedy).toBe(false);
    expect(report.results.map((r) => r.samples)).toEqual([3, 3, 3, 3, 3, 3]);
    expect(report.pass_at_k).toBeGreaterThanOrEqual(report.pass_at_1);
  }, 60_000);

  it("says what is wrong with --run, --adapter and --samples", async () => {
    await expect(evaluateWithMesh({ ...base, k: 1, run: "nope" })).rejects.toThrow(/run nope not found in/);
    await expect(evaluateWithMesh({ ...base, k: 1, run: "trained", adapter: "x" })).rejects.toThrow(/--run or --adapter, not both/);
    const empty = path.join(fixture.dir, "empty-adapter");
    await mkdir(empty, { recursive: true });
    await expect(evaluateWithMesh({ ...base, k: 1, adapter: empty })).rejects.toThrow(
      /is not a PEFT adapter directory \(no adapter_config.json\)/,
    );
    await expect(evaluateWithMesh({ ...base, k: 3, samples: 2 })).rejects.toThrow(/--samples must be an integer ≥ k \(3\), got 2/);
  }, 60_000);
});
