// A Lean step's trace reaches the verifier: the orchestrator's rollout.step → rollout.score
// → ScoreGroup (client, then the reward service's server span) → Verify (the reward
// service's client span, then the verifier's server span), all in the step's one trace.
// The verifier's Lean is the REPL stand-in; spans are recorded in memory in this process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { SpanKind } from "@opentelemetry/api";
import { RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { setupTracing, type TracingSetup } from "@lean-grpo/kit";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";
import { watchToEnd, withMesh } from "./support/orchestrator-client.js";
import { replStandIn, type ReplStandIn } from "./support/repl-stand-in.js";

const STATEMENT = "theorem t (p : Prop) (h : p) : p";
const exporter = new InMemorySpanExporter();
let tracing: TracingSetup;
let fixture: MeshFixture;
let repl: ReplStandIn;

beforeAll(async () => {
  tracing = setupTracing({ serviceName: "lean-step-trace-test", spanProcessors: [new SimpleSpanProcessor(exporter)], env: {} });
  const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("");
  fixture = await meshFixture({ extraChars: ascii });
  // Every command elaborates without messages: whatever the tiny model writes is checked by "Lean".
  repl = replStandIn({ rules: [{ when: { cmd: { regex: "" } } }] });
});
afterAll(async () => {
  repl?.cleanup();
  await fixture?.cleanup();
  await tracing?.shutdown();
});

const parentOf = (spans: readonly ReadableSpan[], span: ReadableSpan) =>
  spans.find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId);

describe("a Lean step's trace", () => {
  it("runs from rollout.step down to the verifier's Verify server span", async () => {
    const dataset = path.join(fixture.dir, "lean.jsonl");
    await writeFile(dataset, ["t-1", "t-2"].map((id) => JSON.stringify({ id, name: "t", statement: STATEMENT })).join("\n"));
    const final = await withMesh(await fixture.start({ verifier: repl.verifierSection }), async (client) => {
      await client.startRun({ runId: "lean-trace", datasetPath: path.basename(dataset), config: { training: tinyTraining(1) } });
      return watchToEnd(client, "lean-trace");
    });
    expect(final.error).toBe("");
    expect(final.state).toBe(RunState.COMPLETED);

    const spans = exporter.getFinishedSpans();
    const step = spans.find((s) => s.name === "rollout.step")!;
    const inStep = spans.filter((s) => s.spanContext().traceId === step.spanContext().traceId);
    const verifyServed = inStep.filter((s) => s.name === "leangrpo.v1.LeanVerifierService/Verify" && s.kind === SpanKind.SERVER);
    expect(verifyServed.length).toBeGreaterThan(0);
    for (const served of verifyServed) {
      // Walk up: Verify server ← Verify client ← ScoreGroup server ← ScoreGroup client ← rollout.score ← rollout.group ← rollout.step.
      const chain: string[] = [];
      for (let span: ReadableSpan | undefined = served; span; span = parentOf(inStep, span))
        chain.push(`${span.name}${span.kind === SpanKind.SERVER ? " (server)" : span.kind === SpanKind.CLIENT ? " (client)" : ""}`);
      expect(chain).toEqual([
        "leangrpo.v1.LeanVerifierService/Verify (server)",
        "leangrpo.v1.LeanVerifierService/Verify (client)",
        "leangrpo.v1.RewardService/ScoreGroup (server)",
        "leangrpo.v1.RewardService/ScoreGroup (client)",
        "rollout.score",
        "rollout.group",
        "rollout.step",
      ]);
    }
  }, 60_000);
});
