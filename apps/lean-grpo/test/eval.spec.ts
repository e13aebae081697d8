// `lean-grpo eval` through OrchestratorService.Evaluate: with the base model, a run's latest
// adapter and a checkpoint's adapter, on the embedded mesh started for the call and against a
// running mesh (`--url`, as against `serve all`); and `buf curl` calling Evaluate by reflection.
import { execFile } from "node:child_process";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { type EvaluatedProblem, OrchestratorService, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createServiceClient } from "@lean-grpo/kit";
import { runConfigToMessage } from "@lean-grpo/orchestrator";
import { evaluateThroughOrchestrator, type EvaluateOptions } from "../src/eval/evaluate-through-orchestrator.js";
import type { RunningMesh } from "../src/mesh/start-mesh.js";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";

const BUF = path.resolve(import.meta.dirname, "../../../node_modules/.bin/buf");

describe("lean-grpo eval through Evaluate", () => {
  let fixture: MeshFixture;
  let base: Omit<EvaluateOptions, "ks">;
  let running: RunningMesh;
  beforeAll(async () => {
    fixture = await meshFixture();
    base = {
      // As a user types it (resolved against the working directory), inside the mesh's data_root.
      data: path.join(fixture.dir, fixture.dataset),
      runsDir: fixture.runsDir,
      dataRoot: fixture.dir,
      modelDir: fixture.modelDir,
      maxTokens: 6,
      services: {
        inference: { embedded: { tensor_backend: "cpu" }, adapters: { dir: path.join(fixture.dir, "eval-adapters") } },
        learner: { backend: "cpu" },
      },
    };
    running = await fixture.start();
    const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [running.urls.orchestrator!] });
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
    }
  }, 120_000);
  afterAll(async () => {
    await running?.shutdown();
    await fixture?.cleanup();
  });

  it("greedy pass@1 of the base model on the mesh started for the call: one completion per problem, the same twice", async () => {
    const first = await evaluateThroughOrchestrator({ ...base, ks: [1] });
    expect(first.evaluated).toBe("base model");
    expect(first.greedy).toBe(true);
    expect(first.problems).toBe(6);
    expect(first.results.map((r) => r.id)).toEqual(["row-1", "row-2", "row-3", "row-4", "row-5", "row-6"]);
    expect(first.results.every((r) => r.samples === 1 && (r.solved === 0 || r.solved === 1))).toBe(true);
    expect(first.pass_at_1).toBe(first.results.filter((r) => r.solved === 1).length / 6);
    // Math problems: how the completions answered comes with the summary.
    expect(first.forms?.completions).toBe(6);
    const second = await evaluateThroughOrchestrator({ ...base, ks: [1] });
    expect(second.results).toEqual(first.results);
  }, 60_000);

  it("pass@k for several k with a run's latest adapter, through a running orchestrator (--url), every completion with its check", async () => {
    // A running orchestrator is given the data as it names it: relative to its data_root.
    const problems: EvaluatedProblem[] = [];
    const report = await evaluateThroughOrchestrator({
      ...base,
      url: running.urls.orchestrator!,
      data: fixture.dataset,
      ks: [2, 1, 3],
      samples: 3,
      topK: 20,
      topP: 0.9,
      run: "trained",
      onProblem: (problem) => {
        problems.push(problem);
      },
    });
    expect(report.evaluated).toBe(path.join(fixture.runsDir, "trained", "adapters", "policy-v2"));
    expect(report.greedy).toBe(false);
    expect(report.results.map((r) => r.samples)).toEqual([3, 3, 3, 3, 3, 3]);
    expect(report.pass_at.map((p) => p.k)).toEqual([1, 2, 3]);
    expect(report.pass_at[0]!.value).toBeCloseTo(report.pass_at_1, 12);
    expect(report.pass_at[2]!.value).toBeCloseTo(report.pass_at_k, 12);
    // Math problems: each completion with what the answer check said, no Lean fields.
    expect(problems).toHaveLength(6);
    for (const problem of problems) {
      expect(problem.completions).toHaveLength(3);
      expect(problem.solved).toBe(problem.completions.filter((c) => c.solved).length);
      for (const completion of problem.completions) {
        expect(completion.mathCheck).not.toBe("");
        expect(completion.firstError).toBe("");
      }
    }
    expect(report.pass_at_k).toBeGreaterThanOrEqual(report.pass_at_1);
  }, 60_000);

  it("evaluates a checkpoint's adapter/ folder, scoring as the run's adapter of that step, and unloads what it loaded", async () => {
    const url = running.urls.orchestrator!;
    // Relative to the orchestrator's data_root (the fixture's directory, which holds runs/).
    const checkpoint = path.join("runs", "trained", "checkpoints", "step-2");
    const remote = { ...base, url, data: fixture.dataset };
    const fromCheckpoint = await evaluateThroughOrchestrator({ ...remote, ks: [1], checkpoint });
    const fromAdapter = await evaluateThroughOrchestrator({
      ...remote,
      ks: [1],
      adapter: path.join("runs", "trained", "adapters", "policy-v2"),
    });
    expect(fromCheckpoint.evaluated).toBe(path.join(checkpoint, "adapter"));
    expect(fromCheckpoint.results).toEqual(fromAdapter.results);
    // Every evaluation unloads its adapter again: only the run's own remain loaded.
    const inference = createServiceClient(InferenceService, { endpoints: [running.urls.inference!] });
    try {
      const models = await inference.client.listModels({});
      expect(models.adapters.map((a) => a.name).filter((name) => name.startsWith("eval-"))).toEqual([]);
    } finally {
      inference.transport.close();
    }
  }, 60_000);

  it("buf curl calls Evaluate by reflection and reads the stream: one message per problem, then the summary", async () => {
    const { stdout } = await promisify(execFile)(
      BUF,
      [
        "curl",
        "--protocol",
        "grpc",
        "--http2-prior-knowledge",
        "-d",
        JSON.stringify({ datasetPath: fixture.dataset, maxTokens: 4, maxProblems: 3 }),
        `${running.urls.orchestrator}/leangrpo.v1.OrchestratorService/Evaluate`,
      ],
      { cwd: "/" },
    );
    // buf curl prints each streamed message as a JSON object.
    const messages = stdout
      .split(/\n(?=\{)/)
      .filter((m) => m.trim())
      .map((m) => JSON.parse(m));
    expect(
      messages
        .filter((m) => m.problem)
        .map((m) => m.problem.theoremId ?? "")
        .sort(),
    ).toEqual(["row-1", "row-2", "row-3"]);
    expect(messages.at(-1).summary).toMatchObject({ evaluated: "base model", problems: 3, k: 1, samples: 1, greedy: true });
  }, 60_000);

  it("answers Evaluate's bad requests with the status code that says why", async () => {
    const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [running.urls.orchestrator!] });
    const code = async (request: Parameters<typeof client.evaluate>[0]) => {
      try {
        for await (const _ of client.evaluate(request));
      } catch (error) {
        return Code[ConnectError.from(error).code];
      }
      return "OK";
    };
    try {
      expect(await code({ datasetPath: fixture.dataset, runId: "nope" })).toBe("NotFound");
      expect(await code({ datasetPath: fixture.dataset, runId: "trained", adapterPath: "x" })).toBe("InvalidArgument");
      expect(await code({})).toBe("InvalidArgument");
      expect(await code({ datasetPath: fixture.dataset, k: 2, samples: 1 })).toBe("InvalidArgument");
      expect(await code({ datasetPath: fixture.dataset, ks: [1, 4], samples: 3 })).toBe("InvalidArgument");
      expect(await code({ datasetPath: fixture.dataset, samples: 5000 })).toBe("InvalidArgument");
      expect(await code({ datasetPath: fixture.dataset, samples: 2, topP: 1.5 })).toBe("InvalidArgument");
      expect(await code({ datasetPath: fixture.dataset, checkpointPath: "no-such" })).toBe("NotFound");
      expect(await code({ datasetPath: fixture.dataset, maxProblems: 1, maxTokens: 2 })).toBe("OK");
    } finally {
      transport.close();
    }
  }, 60_000);

  it("says what is wrong with the target, the dataset and samples", async () => {
    const url = running.urls.orchestrator!;
    // A running orchestrator is given paths as they are on its side: relative to its data_root.
    const remote = { ...base, url, data: fixture.dataset };
    await expect(evaluateThroughOrchestrator({ ...remote, ks: [1], run: "nope" })).rejects.toThrow(/run nope not found in/);
    await expect(evaluateThroughOrchestrator({ ...remote, ks: [1], run: "trained", adapter: "x" })).rejects.toThrow(
      /give one of --run, --adapter and --checkpoint, not --run and --adapter/,
    );
    await mkdir(path.join(fixture.dir, "empty-adapter"), { recursive: true });
    await expect(evaluateThroughOrchestrator({ ...remote, ks: [1], adapter: "empty-adapter" })).rejects.toThrow(
      /adapter_path: empty-adapter is not a PEFT adapter directory \(no adapter_config.json\)/,
    );
    await expect(evaluateThroughOrchestrator({ ...remote, ks: [1], checkpoint: "no-such" })).rejects.toThrow(
      /checkpoint_path "no-such" does not exist under data_root/,
    );
    await expect(evaluateThroughOrchestrator({ ...remote, ks: [3], samples: 2 })).rejects.toThrow(
      /ks: 3 is larger than samples \(2\); pass@k needs at least k completions per problem: raise samples to 3 or more/,
    );
    await expect(evaluateThroughOrchestrator({ ...remote, ks: [1], data: "missing.jsonl" })).rejects.toThrow(
      /dataset_path "missing.jsonl" does not exist under data_root/,
    );
    await expect(
      evaluateThroughOrchestrator({ ...remote, ks: [1], runConfig: runConfigToMessage({ prompt: { format: "html" } }) }),
    ).rejects.toThrow(/prompt\.format/);
  }, 60_000);

  it("evaluates through the embedded mesh with paths as the user types them, and refuses one outside the data root", async () => {
    await expect(evaluateThroughOrchestrator({ ...base, ks: [1], data: "/etc/passwd" })).rejects.toThrow(
      /data \/etc\/passwd is outside .*: run lean-grpo from a directory that holds it/,
    );
  }, 60_000);
});
