// The inference service on its embedded tfjs backend (the learner core), served for
// real and called over gRPC, on the learner's tiny Qwen2 fixture.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { FinishReason } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { type GenerateResponse, InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { loadConfig, serve, type RunningServer } from "@lean-grpo/kit";
import { CausalLM, generate, loadPeftAdapter, useBackend } from "@lean-grpo/lm";
import { InferenceConfigSchema } from "../src/config.js";
import { createInferenceService } from "../src/service.js";

const fixtures = fileURLToPath(new URL("../../../packages/lm/test/fixtures/", import.meta.url));
const modelDir = `${fixtures}qwen2-tiny`;
const adapterDir = `${fixtures}qwen2-tiny-lora`;
const prompts = [
  [3, 17, 42, 5],
  [9, 8, 7],
];

let server: RunningServer;
let client: ReturnType<typeof createClient<typeof InferenceService>>;
let model: CausalLM;

async function* messagesOf<T>(messages: T[]): AsyncIterable<T> {
  yield* messages;
}

beforeAll(async () => {
  const config = loadConfig(InferenceConfigSchema, {
    overrides: [
      `embedded.model_dir=${modelDir}`,
      "embedded.tensor_backend=cpu",
      "server.port=0",
      "server.shutdown.drain_delay_ms=0",
      // LoadAdapter by path reads under adapters.dir only.
      `adapters.dir=${fixtures}`,
    ],
  });
  server = await serve({ name: "inference", services: [createInferenceService(config)], config: config.server });
  client = createClient(InferenceService, createGrpcTransport({ baseUrl: server.url }));
  await useBackend("cpu");
  model = await CausalLM.load(modelDir);
});
afterAll(() => server?.shutdown());

const tokenIds = (ids: number[]) => ({ kind: { case: "tokenIds" as const, value: { ids } } });

describe("embedded backend", () => {
  it("greedy Generate equals the learner core's argmax by full recomputation", async () => {
    for (const prompt of prompts) {
      const res = await client.generate({
        prompt: tokenIds(prompt),
        n: 2,
        sampling: { maxTokens: 6, temperature: 0, stop: [], stopTokenIds: [] },
      });
      const [reference] = await generate(model, [prompt], { maxNewTokens: 6, temperature: 0, useKvCache: false, stopTokenIds: [] });
      expect(res.promptTokenIds).toEqual(prompt);
      for (const completion of res.completions) {
        expect(completion.tokenIds).toEqual(reference!.tokenIds.slice(0, completion.tokenIds.length));
        expect(completion.logprobs).toHaveLength(completion.tokenIds.length);
      }
    }
  });

  it("samples reproducibly with a seed and returns the sampler's logprobs", async () => {
    const request = {
      prompt: tokenIds(prompts[0]!),
      n: 3,
      sampling: { maxTokens: 8, temperature: 1, seed: 11n, stop: [], stopTokenIds: [] },
    };
    const a = await client.generate(request);
    const b = await client.generate(request);
    expect(a.completions.map((c) => c.tokenIds)).toEqual(b.completions.map((c) => c.tokenIds));
    for (const c of a.completions) {
      for (const lp of c.logprobs) expect(lp).toBeLessThan(0);
      expect([FinishReason.STOP, FinishReason.LENGTH]).toContain(c.finishReason);
    }
  });

  it("gives a seeded call the same tokens alone and among concurrent calls (continuous batching)", async () => {
    const calls = [
      [3, 17, 42, 5],
      [9, 8, 7],
      [1, 2],
      [60, 61, 62, 63, 64, 65, 66],
      [9, 8, 7],
    ].map((prompt, i) => ({
      prompt: tokenIds(prompt),
      n: 1 + (i % 3),
      sampling: { maxTokens: 10, temperature: i === 1 ? 0 : 1, seed: BigInt(100 + i), stop: [], stopTokenIds: [] },
    }));
    const alone: GenerateResponse[] = [];
    for (const call of calls) alone.push(await client.generate(call));
    const together = await Promise.all(calls.map((call) => client.generate(call)));
    const tokens = (r: GenerateResponse) => r.completions.map((c) => [c.tokenIds, c.logprobs]);
    expect(together.map(tokens)).toEqual(alone.map(tokens));
  });

  it("samples with a loaded adapter as the adapter's weights say", async () => {
    const load = await client.loadAdapter(
      messagesOf([{ part: { case: "source", value: { name: "policy-v1", version: 1n, path: "qwen2-tiny-lora", files: [] } } }]),
    );
    expect(load.adapter?.name).toBe("policy-v1");
    const adapter = await loadPeftAdapter(adapterDir, model.config);
    let differs = false;
    for (const prompt of prompts) {
      const sampling = { maxTokens: 6, temperature: 0, stop: [], stopTokenIds: [] };
      const withAdapter = await client.generate({ prompt: tokenIds(prompt), adapter: "policy-v1", sampling });
      const base = await client.generate({ prompt: tokenIds(prompt), sampling });
      const [reference] = await generate(model, [prompt], {
        maxNewTokens: 6,
        temperature: 0,
        useKvCache: false,
        adapter,
        stopTokenIds: [],
      });
      const got = withAdapter.completions[0]!.tokenIds;
      expect(got).toEqual(reference!.tokenIds.slice(0, got.length));
      expect(withAdapter.completions[0]!.policyVersion).toBe(1n);
      if (got.join() !== base.completions[0]!.tokenIds.join()) differs = true;
    }
    adapter.dispose();
    expect(differs).toBe(true); // the fixture adapter changes what is sampled
  });

  it("lists the embedded model and refuses ids outside the vocabulary", async () => {
    const models = await client.listModels({});
    expect(models.backend).toBe("embedded");
    expect(models.baseModel).toMatchObject({ id: "qwen2-tiny", vocabSize: model.config.vocabSize });
    const error = await client
      .generate({ prompt: tokenIds([1, model.config.vocabSize + 5]), sampling: { maxTokens: 2, stop: [], stopTokenIds: [] } })
      .then(
        () => undefined,
        (e) => ConnectError.from(e),
      );
    expect(error?.code).toBe(Code.InvalidArgument);
  });

  it("says what to configure when no model is set", async () => {
    const config = loadConfig(InferenceConfigSchema, { overrides: ["server.port=0", "server.shutdown.drain_delay_ms=0"] });
    const bare = await serve({ name: "inference", services: [createInferenceService(config)], config: config.server });
    try {
      const bareClient = createClient(InferenceService, createGrpcTransport({ baseUrl: bare.url }));
      const error = await bareClient.generate({ prompt: tokenIds([1, 2]) }).then(
        () => undefined,
        (e) => ConnectError.from(e),
      );
      expect(error?.code).toBe(Code.FailedPrecondition);
      expect(error?.rawMessage).toContain("embedded.model_dir");
    } finally {
      await bare.shutdown();
    }
  });
});
