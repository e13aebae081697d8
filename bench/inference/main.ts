// bench/inference: what the inference proxy adds per Generate, measured in one run:
// the same completion request sent (a) straight to the vLLM stand-in with the openai
// SDK, and (b) through the inference service over gRPC (tokenless prompt, so both
// do one HTTP call). Also embedded decoding tokens/s through gRPC on the learner's
// tiny Qwen2 fixture. Prints JSON. Usage: npx tsx bench/inference/main.ts [calls]
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { loadConfig, serve } from "@lean-grpo/kit";
import { InferenceConfigSchema, createInferenceService } from "@lean-grpo/inference";
import { startVllmStandIn } from "../../tests/fakes/vllm/vllm-stand-in.js";
import { percentile } from "../support/percentile.js";

process.env.LOG_LEVEL ??= "warn";
const calls = Number(process.argv[2] ?? 500);
const prompt = [1, 40, 41, 42, 43, 44, 45, 46];

async function timeEach(n: number, call: () => Promise<unknown>) {
  for (let i = 0; i < 50; i++) await call(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50Ms: percentile(times, 50), p99Ms: percentile(times, 99) };
}

const standIn = await startVllmStandIn();
const proxyConfig = loadConfig(InferenceConfigSchema, {
  overrides: [`vllm.url=${standIn.url}`, "server.port=0", "server.shutdown.drain_delay_ms=0"],
});
const proxy = await serve({ name: "inference", services: [createInferenceService(proxyConfig)], config: proxyConfig.server });
const grpc = createClient(InferenceService, createGrpcTransport({ baseUrl: proxy.url }));
const openai = new OpenAI({ baseURL: `${standIn.url}/v1`, apiKey: "EMPTY", maxRetries: 0 });

const body = {
  model: "Qwen/Qwen2.5-0.5B-Instruct",
  prompt,
  n: 4,
  max_tokens: 16,
  temperature: 1,
  seed: 1,
  logprobs: 0,
  return_token_ids: true,
  return_tokens_as_token_ids: true,
};
const direct = await timeEach(calls, () => openai.completions.create(body as unknown as OpenAI.CompletionCreateParamsNonStreaming));
const viaProxy = await timeEach(calls, () =>
  grpc.generate({
    prompt: { kind: { case: "tokenIds", value: { ids: prompt } } },
    n: 4,
    sampling: { maxTokens: 16, temperature: 1, seed: 1n, stop: [] },
  }),
);

const modelDir = fileURLToPath(new URL("../../packages/lm/test/fixtures/qwen2-tiny", import.meta.url));
const embeddedConfig = loadConfig(InferenceConfigSchema, {
  overrides: [`embedded.model_dir=${modelDir}`, "embedded.tensor_backend=wasm", "server.port=0", "server.shutdown.drain_delay_ms=0"],
});
const embedded = await serve({ name: "inference", services: [createInferenceService(embeddedConfig)], config: embeddedConfig.server });
const embeddedClient = createClient(InferenceService, createGrpcTransport({ baseUrl: embedded.url }));
const decodeRequest = {
  prompt: { kind: { case: "tokenIds" as const, value: { ids: prompt } } },
  n: 4,
  sampling: { maxTokens: 64, temperature: 1, seed: 3n, stop: [], stopTokenIds: [] },
};
await embeddedClient.generate(decodeRequest); // loads the model
let tokens = 0;
const t0 = performance.now();
for (let i = 0; i < 5; i++) {
  const res = await embeddedClient.generate(decodeRequest);
  tokens += res.completions.reduce((sum, c) => sum + c.tokenIds.length, 0);
}
const seconds = (performance.now() - t0) / 1000;

console.log(
  JSON.stringify(
    {
      benchmark: "inference",
      calls,
      request: "n=4, 16 tokens each, 8-token id prompt, against the vLLM stand-in on loopback",
      directToStandIn: direct,
      throughInferenceGrpc: viaProxy,
      proxyOverheadP50Ms: Number((viaProxy.p50Ms - direct.p50Ms).toFixed(3)),
      goal: "proxy overhead <= 1 ms p50",
      embedded: { model: "learner fixture qwen2-tiny (wasm)", batch: 4, tokensPerSecond: Math.round(tokens / seconds) },
    },
    null,
    2,
  ),
);
await Promise.all([proxy.shutdown(), embedded.shutdown(), standIn.close()]);
