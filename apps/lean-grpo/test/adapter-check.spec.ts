// An adapter that did not take fails loudly (adapter-check.ts). The inference service here is
// the real embedded one, in front of which LoadAdapter of version 2 silently loads a different
// adapter under policy-v2's name: version 1's files, as a sampler that kept serving the old
// LoRA would (verl #3516, TRL #5312). The run must stop at that sync, within one step, naming
// the version and both numbers; the same run without the fault, sync or async, never trips.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HandlerContext } from "@connectrpc/connect";
import { adapterMessages, loadAdapterEnvelope } from "@lean-grpo/adapter-files";
import type { InferenceService, LoadAdapterRequest } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createInferenceService, InferenceConfigSchema } from "@lean-grpo/inference";
import { loadConfig, serve, type RunningServer, type ServiceRegistration } from "@lean-grpo/kit";
import { RunOutputs, type StepRecord } from "@lean-grpo/orchestrator";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";
import { watchToEnd, withMesh } from "./support/orchestrator-client.js";

let fixture: MeshFixture;
beforeAll(async () => {
  fixture = await meshFixture();
});
afterAll(() => fixture?.cleanup());

/** The embedded inference service; with `staleFrom`, LoadAdapter of version 2 loads version 1's files from that run's adapters. */
async function inferenceService(staleRun?: string): Promise<RunningServer> {
  const config = loadConfig(InferenceConfigSchema, {
    flags: {
      server: { port: 0, shutdown: { drain_delay_ms: 0, grace_period_ms: 2000 } },
      embedded: { model_dir: fixture.modelDir, tensor_backend: "cpu" },
      adapters: { dir: path.join(fixture.dir, `adapters-${staleRun ?? "plain"}`) },
    },
  });
  const real = createInferenceService(config);
  const loadAdapter = async (requests: AsyncIterable<LoadAdapterRequest>, ctx: HandlerContext) => {
    if (!staleRun) return real.impl.loadAdapter!(requests, ctx);
    const messages: LoadAdapterRequest[] = [];
    for await (const message of requests) messages.push(message);
    const source = messages[0]?.part.case === "source" ? messages[0].part.value : undefined;
    if (source?.version !== 2n) return real.impl.loadAdapter!(replay(messages), ctx);
    const stale = await RunOutputs.for(fixture.runsDir, staleRun).readAdapter("adapters/policy-v1");
    return real.impl.loadAdapter!(replay([...adapterMessages(loadAdapterEnvelope, { version: 2 }, stale)] as LoadAdapterRequest[]), ctx);
  };
  const wrapped: ServiceRegistration<typeof InferenceService> = { ...real, impl: { ...real.impl, loadAdapter } };
  return serve({ name: "inference", services: [wrapped], config: config.server });
}

async function* replay(messages: readonly LoadAdapterRequest[]): AsyncGenerator<LoadAdapterRequest> {
  yield* messages;
}

async function stepsOf(outputDir: string): Promise<StepRecord[]> {
  const text = await readFile(path.join(outputDir, "metrics.jsonl"), "utf8").catch(() => "");
  return text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as StepRecord);
}

async function train(runId: string, async: boolean, staleRun?: string) {
  const inference = await inferenceService(staleRun);
  try {
    return await withMesh(await fixture.start({ inferenceUrl: inference.url }), async (client) => {
      await client.startRun({
        datasetPath: fixture.dataset,
        runId,
        config: { algorithm: { name: "grpo" }, reward: { preset: "shaped" }, training: tinyTraining(4, { async }) },
      });
      return watchToEnd(client, runId);
    });
  } finally {
    await inference.shutdown();
  }
}

describe("the adapter check after each LoadAdapter", () => {
  for (const async of [false, true]) {
    it(`${async ? "async" : "sync"}: a run whose adapters take never trips it, and records the probe's difference every step`, async () => {
      const run = await train(`check-ok-${async}`, async);
      expect(run.error).toBe("");
      expect(run.state).toBe(RunState.COMPLETED);
      const steps = await stepsOf(run.outputDir);
      expect(steps).toHaveLength(4);
      for (const s of steps) {
        expect(s.metrics.adapter_check_logp_difference).toBeTypeOf("number");
        expect(s.metrics.adapter_check_logp_difference).toBeLessThanOrEqual(2e-5);
      }
    }, 120_000);
  }

  it("a different adapter loaded as policy-v2 stops the run at that sync, naming the version and both numbers", async () => {
    const run = await train("check-stale", false, "check-stale");
    expect(run.state).toBe(RunState.FAILED);
    expect(run.error).toMatch(/adapter policy-v2 \(version 2\) did not take in the inference service/);
    expect(run.error).toMatch(
      /mean \|Δ\| = \d\.\d{3}e-\d+ \(max \d\.\d{3}e[-+]\d+\), above training\.adapter_check\.max_logp_difference = 0\.00002/,
    );
    // Step 1 trained and was recorded; step 2 trained, synced the wrong adapter and stopped there.
    expect((await stepsOf(run.outputDir)).map((s) => s.step)).toEqual([1]);
  }, 120_000);
});
