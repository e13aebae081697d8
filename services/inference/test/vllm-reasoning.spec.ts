// The reasoning mask through vLLM (docs/concepts/reasoning-vocabulary.md, "vLLM"), against the
// OpenAI-compatible stand-in: gated and strict are refused naming the keys (nothing is sent)
// unless vLLM runs the project's logits processor, in which case the mode rides in vllm_xargs;
// free (and a service configured free) sends nothing extra.
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ReasoningMask } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { loadConfig, serve } from "@lean-grpo/kit";
import { InferenceConfigSchema } from "../src/config.js";
import { createInferenceService } from "../src/service.js";
import { startVllmStandIn } from "../../../tests/fakes/vllm/vllm-stand-in.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

async function start(overrides: string[]) {
  const vllm = await startVllmStandIn();
  cleanup.push(() => vllm.close());
  const config = loadConfig(InferenceConfigSchema, {
    overrides: [
      `vllm.url=${vllm.url}`,
      `adapters.dir=${mkdtempSync(join(tmpdir(), "adapters-"))}`,
      "server.port=0",
      "server.shutdown.drain_delay_ms=0",
      ...overrides,
    ],
  });
  const server = await serve({ name: "inference", services: [createInferenceService(config)], config: config.server });
  cleanup.push(() => server.shutdown());
  return { vllm, client: createClient(InferenceService, createGrpcTransport({ baseUrl: server.url })) };
}

const prompt = { kind: { case: "tokenIds" as const, value: { ids: [1, 50] } } };
const sent = (vllm: Awaited<ReturnType<typeof start>>["vllm"]) =>
  vllm.requests.filter((r) => r.path === "/v1/completions").map((r) => r.body);

describe("the reasoning mask through vLLM", () => {
  it("refuses gated and strict without the logits processor, naming the keys, and sends nothing", async () => {
    const { client, vllm } = await start([]);
    for (const reasoningMask of [ReasoningMask.GATED, ReasoningMask.STRICT]) {
      const refused = client.generate({ prompt, n: 1, sampling: { maxTokens: 2, temperature: 1, stop: [], reasoningMask } });
      await expect(refused).rejects.toMatchObject({ code: Code.FailedPrecondition });
      await expect(refused).rejects.toThrow(/inference\.vllm\.reasoning_logits_processor: true/);
    }
    // A service configured gated refuses requests that name no mode too.
    const gated = await start(["model.reasoning_vocab_size=10", "model.reasoning_mask=gated"]);
    await expect(gated.client.generate({ prompt, n: 1, sampling: { maxTokens: 2, temperature: 1, stop: [] } })).rejects.toThrow(
      /model\.reasoning_mask: gated/,
    );
    expect(sent(vllm)).toEqual([]);
    expect(sent(gated.vllm)).toEqual([]);
    // Free sends no mask.
    await client.generate({ prompt, n: 1, sampling: { maxTokens: 2, temperature: 1, stop: [], reasoningMask: ReasoningMask.FREE } });
    expect(sent(vllm)[0]).not.toHaveProperty("vllm_xargs");
  });

  it("passes gated and strict to the project's logits processor in vllm_xargs", async () => {
    const { client, vllm } = await start(["vllm.reasoning_logits_processor=true"]);
    await client.generate({ prompt, n: 1, sampling: { maxTokens: 2, temperature: 1, stop: [], reasoningMask: ReasoningMask.STRICT } });
    await client.generate({ prompt, n: 1, sampling: { maxTokens: 2, temperature: 1, stop: [], reasoningMask: ReasoningMask.GATED } });
    expect(sent(vllm).map((b) => b.vllm_xargs)).toEqual([{ reasoning_mask: "strict" }, { reasoning_mask: "gated" }]);
  });
});
