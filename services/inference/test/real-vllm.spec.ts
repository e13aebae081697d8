// Against a real vLLM server (VLLM_URL=http://host:8000, started with --enable-lora
// and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True); skipped when VLLM_URL is not set.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { loadConfig, serve, type RunningServer } from "@lean-grpo/kit";
import { InferenceConfigSchema } from "../src/config.js";
import { createInferenceService } from "../src/service.js";

const url = process.env.VLLM_URL;
if (!url) console.warn("skipping the real-vLLM suite: set VLLM_URL=http://host:8000 to run it");

describe.skipIf(!url)("InferenceService on a real vLLM", () => {
  let server: RunningServer;
  beforeAll(async () => {
    const config = loadConfig(InferenceConfigSchema, {
      overrides: [`vllm.url=${url}`, "server.port=0", "server.shutdown.drain_delay_ms=0"],
    });
    server = await serve({ name: "inference", services: [createInferenceService(config)], config: config.server });
  });
  afterAll(() => server?.shutdown());

  it("returns as many logprobs as token ids for every completion, and the prompt ids it used", async () => {
    const client = createClient(InferenceService, createGrpcTransport({ baseUrl: server.url }));
    const res = await client.generate(
      {
        prompt: { kind: { case: "chat", value: { messages: [{ role: "user", content: "What is 2 + 2?" }] } } },
        n: 4,
        sampling: { maxTokens: 32, seed: 1n, stop: [] },
      },
      { timeoutMs: 120_000 },
    );
    const tokenized = await client.tokenize({
      prompt: { kind: { case: "chat", value: { messages: [{ role: "user", content: "What is 2 + 2?" }] } } },
    });
    expect(res.promptTokenIds).toEqual(tokenized.tokenIds);
    expect(res.completions).toHaveLength(4);
    for (const c of res.completions) {
      expect(c.tokenIds.length).toBeGreaterThan(0);
      expect(c.logprobs).toHaveLength(c.tokenIds.length);
      for (const lp of c.logprobs) expect(lp).toBeLessThanOrEqual(0);
    }
  });
});
