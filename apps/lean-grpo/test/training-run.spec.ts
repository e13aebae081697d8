// The loop end to end over real gRPC: every algorithm trains 3 steps on a tiny model,
// writing run.json, metrics.jsonl, checkpoints, adapters and the HTML report.
import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { OrchestratorService, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createServiceClient } from "@lean-grpo/kit";
import { ALGORITHM_NAMES } from "@lean-grpo/learner";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";

let fixture: MeshFixture;
beforeAll(async () => {
  fixture = await meshFixture();
});
afterAll(() => fixture?.cleanup());

async function watchToEnd(client: ReturnType<typeof createServiceClient<typeof OrchestratorService>>["client"], runId: string) {
  const steps: number[] = [];
  let final: RunState = RunState.UNSPECIFIED;
  for await (const event of client.watchRun({ runId, fromStart: true })) {
    if (event.event.case === "step") steps.push(Number(event.event.value.step));
    if (event.event.case === "stateChange") final = event.event.value.state;
  }
  return { steps, final };
}

describe("a run over the mesh", () => {
  for (const algorithm of ALGORITHM_NAMES) {
    it(`${algorithm}: 3 steps end to end`, async () => {
      const mesh = await fixture.start();
      const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [mesh.urls.orchestrator!] });
      try {
        const { run } = await client.startRun({
          datasetPath: fixture.dataset,
          runId: `run-${algorithm}`,
          config: { algorithm: { name: algorithm }, training: tinyTraining(3) },
        });
        expect(run?.state).toBe(RunState.PENDING);
        const { steps, final } = await watchToEnd(client, `run-${algorithm}`);
        const done = (await client.getRun({ runId: `run-${algorithm}` })).run!;
        expect(done.error).toBe("");
        expect(final).toBe(RunState.COMPLETED);
        expect(steps).toEqual([1, 2, 3]);
        expect(done.step).toBe(3n);
        expect(done.lastCheckpointStep).toBe(3n);
        for (const key of ["reward_mean", "pass_rate"]) expect(Number.isFinite(done.lastMetrics[key])).toBe(true);

        const dir = done.outputDir;
        const lines = (await readFile(path.join(dir, "metrics.jsonl"), "utf8"))
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l));
        expect(lines.map((l) => l.step)).toEqual([1, 2, 3]);
        expect(lines[2].timings.total_s).toBeGreaterThan(0);
        for (const step of [0, 2, 3]) expect(existsSync(path.join(dir, "checkpoints", `step-${step}`))).toBe(true);
        // DAPO trains only on groups whose rewards differ, so it may have trained fewer times.
        const trainedSteps = lines.filter((l) => l.metrics.trained === 1);
        if (algorithm !== "dapo") expect(trainedSteps).toHaveLength(3);
        for (const l of trainedSteps) expect(Number.isFinite(l.metrics.loss)).toBe(true);
        const version = lines[2].adapter_version;
        if (version > 0) expect(existsSync(path.join(dir, "adapters", `policy-v${version}`, "adapter_model.safetensors"))).toBe(true);
        // report.html: the dashboard page with the run's GetRun answer and step events inside.
        const report = await readFile(path.join(dir, "report.html"), "utf8");
        const data = JSON.parse(/<script type="application\/json" id="run-data">([\s\S]*?)<\/script>/.exec(report)![1]!);
        expect(data.events.filter((e: { step?: unknown }) => e.step).length).toBe(3);
        expect(JSON.parse(await readFile(path.join(dir, "config.json"), "utf8")).run.algorithm.name).toBe(algorithm);
      } finally {
        transport.close();
        await mesh.shutdown();
      }
    }, 120_000);
  }

  it("evaluates held-out greedy accuracy before the first step, every N steps and after the last", async () => {
    const mesh = await fixture.start();
    const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [mesh.urls.orchestrator!] });
    try {
      await client.startRun({
        datasetPath: fixture.dataset,
        runId: "run-eval",
        config: { training: tinyTraining(3), eval: { data: fixture.dataset, every: 2, max_problems: 4 } },
      });
      const logs: string[] = [];
      for await (const event of client.watchRun({ runId: "run-eval", fromStart: true })) {
        if (event.event.case === "log") logs.push(event.event.value);
      }
      const done = (await client.getRun({ runId: "run-eval" })).run!;
      expect(done.state).toBe(RunState.COMPLETED);
      const evals = (await readFile(path.join(done.outputDir, "eval.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(evals.map((e) => e.step)).toEqual([0, 2, 3]);
      for (const e of evals) {
        expect(e.problems).toBe(4);
        expect(e.heldout_accuracy).toBe(e.solved / 4);
      }
      const lines = (await readFile(path.join(done.outputDir, "metrics.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines.map((l) => l.metrics.heldout_accuracy)).toEqual([undefined, evals[1].heldout_accuracy, evals[2].heldout_accuracy]);
      expect(logs.filter((l) => l.startsWith("held-out greedy accuracy after step"))).toHaveLength(3);
      // report.html carries the three evaluations (step 0 included) for its held-out chart.
      const report = await readFile(path.join(done.outputDir, "report.html"), "utf8");
      const data = JSON.parse(/<script type="application\/json" id="run-data">([\s\S]*?)<\/script>/.exec(report)![1]!);
      expect(data.details.evaluations.map((e: { step?: string }) => Number(e.step ?? 0))).toEqual([0, 2, 3]);
    } finally {
      transport.close();
      await mesh.shutdown();
    }
  }, 120_000);

  it("refuses a bad dataset, an unknown config key and an unknown algorithm knob before starting", async () => {
    const mesh = await fixture.start();
    const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [mesh.urls.orchestrator!] });
    try {
      const bad = path.join(fixture.dir, "bad.jsonl");
      await import("node:fs/promises").then((fs) => fs.writeFile(bad, '{"problem":"1+1","answer":"2"}\n{"problem":"2+2"}\n'));
      const err = (p: Promise<unknown>) =>
        p.then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
      const dataset = await err(client.startRun({ datasetPath: path.basename(bad) }));
      expect(dataset?.code).toBe(Code.InvalidArgument);
      expect(dataset?.rawMessage).toMatch(/line 2, field "answer": is missing/);
      const heldout = await err(client.startRun({ datasetPath: fixture.dataset, config: { eval: { data: path.basename(bad) } } }));
      expect(heldout?.code).toBe(Code.InvalidArgument);
      expect(heldout?.rawMessage).toMatch(/bad\.jsonl/);
      expect(heldout?.rawMessage).toMatch(/line 2, field "answer": is missing/);
      const key = await err(client.startRun({ datasetPath: fixture.dataset, config: { training: { stepz: 3 } } }));
      expect(key?.code).toBe(Code.InvalidArgument);
      expect(key?.rawMessage).toMatch(/stepz/);
      const knob = await err(
        client.startRun({ datasetPath: fixture.dataset, config: { algorithm: { name: "dapo", config: { epsilon_hi: 0.3 } } } }),
      );
      expect(knob?.code).toBe(Code.InvalidArgument);
      expect(knob?.rawMessage).toMatch(/epsilon_hi.*accepted: .*epsilon_high/);
      expect((await client.listRuns({})).runs.map((r) => r.id)).not.toContain("");
    } finally {
      transport.close();
      await mesh.shutdown();
    }
  });
});
