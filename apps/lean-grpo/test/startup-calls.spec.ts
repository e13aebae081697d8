// What StartRun calls before step 1 (the algorithm, sampling and prompt checks) must not
// grow with the dataset: the prompt check sends a whole set as one TokenizeBatch stream.
// Counted from the RPC client spans in StartRun's trace, recorded in memory.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { SpanKind } from "@opentelemetry/api";
import { Code, ConnectError } from "@connectrpc/connect";
import { setupTracing, type TracingSetup } from "@lean-grpo/kit";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";
import { watchToEnd, withMesh } from "./support/orchestrator-client.js";
import { startMesh } from "../src/mesh/start-mesh.js";
import { repoRoot } from "../../../tests/support/interop-verifier.js";

const exporter = new InMemorySpanExporter();
let tracing: TracingSetup;
let fixture: MeshFixture;

beforeAll(async () => {
  tracing = setupTracing({ serviceName: "startup-calls-test", spanProcessors: [new SimpleSpanProcessor(exporter)], env: {} });
  fixture = await meshFixture();
});
afterAll(async () => {
  await fixture?.cleanup();
  await tracing?.shutdown();
});

/** A math dataset of `size` records the tiny model's tokenizer encodes. */
async function dataset(size: number, extra: string[] = []): Promise<string> {
  const file = path.join(fixture.dir, `arith-${size}-${extra.length}.jsonl`);
  const lines = Array.from({ length: size }, (_, i) => JSON.stringify({ problem: `${i}+1`, answer: `${i + 1}` }));
  await writeFile(file, [...lines, ...extra].join("\n"));
  // As StartRun names it: relative to the orchestrator's data_root (the fixture's directory).
  return path.basename(file);
}

/** The RPCs the orchestrator made while serving StartRun, by method. */
function startRunCalls(): Record<string, number> {
  const spans = exporter.getFinishedSpans();
  const startRun = spans.find((s) => s.name === "leangrpo.v1.OrchestratorService/StartRun" && s.kind === SpanKind.SERVER)!;
  const calls: Record<string, number> = {};
  for (const span of spans) {
    if (span.kind !== SpanKind.CLIENT || span.spanContext().traceId !== startRun.spanContext().traceId) continue;
    calls[span.name] = (calls[span.name] ?? 0) + 1;
  }
  return calls;
}

describe("start-up checks", () => {
  it("make as many calls for 600 records as for 6", async () => {
    const counts: Record<string, number>[] = [];
    for (const size of [6, 600]) {
      exporter.reset();
      const datasetPath = await dataset(size);
      await withMesh(await fixture.start(), async (client) => {
        const runId = `startup-${size}`;
        await client.startRun({ runId, datasetPath, config: { training: tinyTraining(1) } });
        counts.push(startRunCalls());
        expect((await watchToEnd(client, runId)).error).toBe("");
      });
    }
    expect(counts[1]).toEqual(counts[0]);
    expect(counts[0]!["leangrpo.v1.InferenceService/TokenizeBatch"]).toBe(1);
    expect(counts[0]!["leangrpo.v1.InferenceService/Tokenize"] ?? 0).toBeLessThanOrEqual(1);
  }, 60_000);

  it("still names the prompts the tokenizer cannot encode, from the one batch", async () => {
    // ∀ and ℕ are outside the shipped model's vocabulary (the fixture's model maps them to its unk token).
    const datasetPath = await dataset(40, [JSON.stringify({ problem: "∀ n : ℕ, n = n", answer: "1" })]);
    const mesh = await startMesh({
      modelDir: `${repoRoot}models/arith-tiny`,
      services: { inference: { embedded: { tensor_backend: "cpu" } }, learner: { backend: "cpu" } },
      orchestrator: { runs_dir: fixture.runsDir, data_root: fixture.dir },
    });
    await withMesh(mesh, async (client) => {
      const error = await client.startRun({ runId: "startup-refused", datasetPath, config: { training: tinyTraining(1) } }).then(
        () => undefined,
        (e) => ConnectError.from(e),
      );
      expect(error?.code).toBe(Code.InvalidArgument);
      expect(error?.rawMessage).toMatch(/cannot encode 1 of the 41 prompts of the dataset .*arith-40-1\.jsonl \(.*41: /);
    });
  }, 60_000);
});
