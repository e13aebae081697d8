// The inference service on its vLLM backend, served for real on loopback and
// called over gRPC, against an OpenAI-compatible stand-in that answers as vLLM does.
import { afterEach, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, existsSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { FinishReason } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { InferenceService, LoadAdapterRequestSchema, type LoadAdapterRequest } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { loadConfig, serve } from "@lean-grpo/kit";
import { InferenceConfigSchema } from "../src/config.js";
import { createInferenceService } from "../src/service.js";
import {
  applyChatTemplate,
  sampledToken,
  processedTokenLogprob,
  startVllmStandIn,
  tokenizeText,
  tokenLogprob,
  type VllmStandIn,
} from "../../../tests/fakes/vllm/vllm-stand-in.js";
import { writeCharTokenizer } from "../../../packages/lm/test/support/char-tokenizer.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

async function start(options: { overrides?: string[]; standIn?: Parameters<typeof startVllmStandIn>[0]; url?: string } = {}) {
  const vllm = await startVllmStandIn(options.standIn);
  cleanup.push(() => vllm.close());
  const adapterDir = realpathSync(mkdtempSync(join(tmpdir(), "adapters-")));
  // Adapter directories a LoadAdapter by path names, relative to adapters.dir.
  for (const dir of ["v1", "v2", "v3", "a/1", "a/2"]) mkdirSync(join(adapterDir, dir), { recursive: true });
  const config = loadConfig(InferenceConfigSchema, {
    overrides: [
      `vllm.url=${options.url ?? vllm.url}`,
      `adapters.dir=${adapterDir}`,
      "vllm.health_interval_ms=100",
      "server.port=0",
      "server.shutdown.drain_delay_ms=0",
      ...(options.overrides ?? []),
    ],
  });
  const server = await serve({ name: "inference", services: [createInferenceService(config)], config: config.server });
  cleanup.push(() => server.shutdown());
  const client = createClient(InferenceService, createGrpcTransport({ baseUrl: server.url }));
  return { vllm, server, client, adapterDir };
}

/** LoadAdapter is client-streaming: its messages go out as an async iterable. */
async function* messagesOf<T>(messages: T[]): AsyncIterable<T> {
  yield* messages;
}

const completionRequests = (vllm: VllmStandIn) => vllm.requests.filter((r) => r.path === "/v1/completions");
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "ok" as const,
    (e) => ConnectError.from(e).code,
  );

describe("Generate on vLLM", () => {
  it("sends token ids and sampling to /v1/completions and returns every completion's token ids and logprobs", async () => {
    const { client, vllm } = await start({
      overrides: ["vllm.logprobs_mode=processed_logprobs"],
      standIn: { logprobsMode: "processed_logprobs" },
    });
    const prompt = [1, 50, 51, 52];
    const res = await client.generate({
      prompt: { kind: { case: "tokenIds", value: { ids: prompt } } },
      n: 3,
      sampling: { maxTokens: 5, temperature: 0.7, topP: 0.9, topK: 20, seed: 42n, stop: [] },
    });
    const sent = completionRequests(vllm)[0]!.body;
    expect(sent).toMatchObject({
      model: "Qwen/Qwen2.5-0.5B-Instruct",
      prompt,
      n: 3,
      max_tokens: 5,
      top_k: 20,
      seed: 42,
      logprobs: 0,
      return_token_ids: true,
      return_tokens_as_token_ids: true,
    });
    expect(sent.temperature).toBeCloseTo(0.7, 6);
    expect(sent.top_p).toBeCloseTo(0.9, 6);
    expect(res.promptTokenIds).toEqual(prompt);
    expect(res.completions).toHaveLength(3);
    for (const [i, completion] of res.completions.entries()) {
      const expected = Array.from({ length: 5 }, (_, pos) => sampledToken(42, "", prompt, i, pos));
      expect(completion.index).toBe(i);
      expect(completion.tokenIds).toEqual(expected);
      // vLLM started with --logprobs-mode processed_logprobs: logprobs of the distribution sampled.
      expected.forEach((t, k) => expect(completion.logprobs[k]).toBeCloseTo(processedTokenLogprob(t, 0.7), 5));
      expect(completion.finishReason).toBe(FinishReason.LENGTH);
      expect(completion.text).toBe(Buffer.from(expected.map((t) => t - 3)).toString());
    }
    expect(res.usage).toMatchObject({ promptTokens: 4, completionTokens: 15 });
    expect(res.model).toBe("Qwen/Qwen2.5-0.5B-Instruct");
  });

  it("refuses, naming vllm.logprobs_mode, to sample at T ≠ 1 or with top-k/top-p from a vLLM that reports raw logprobs", async () => {
    const { client, vllm } = await start();
    const prompt = { kind: { case: "tokenIds" as const, value: { ids: [1, 50] } } };
    for (const sampling of [{ temperature: 0.7 }, { topP: 0.9 }, { topK: 20 }]) {
      const refused = client.generate({ prompt, n: 1, sampling: { maxTokens: 2, stop: [], ...sampling } });
      await expect(refused).rejects.toMatchObject({ code: Code.FailedPrecondition });
      await expect(refused).rejects.toThrow(/vllm\.logprobs_mode is raw_logprobs.*--logprobs-mode processed_logprobs/);
      const stream = (async () => {
        for await (const _ of client.generateStream({ prompt, n: 1, sampling: { maxTokens: 2, stop: [], ...sampling } }));
      })();
      await expect(stream).rejects.toMatchObject({ code: Code.FailedPrecondition });
    }
    expect(completionRequests(vllm)).toHaveLength(0);
    // T = 1 without truncation, and greedy decoding, are the same under raw logprobs.
    const plain = await client.generate({ prompt, n: 1, sampling: { maxTokens: 2, temperature: 1, stop: [] } });
    expect(plain.completions[0]!.logprobs[0]).toBeCloseTo(tokenLogprob(plain.completions[0]!.tokenIds[0]!), 6);
    await client.generate({ prompt, n: 1, sampling: { maxTokens: 2, temperature: 0, topP: 0.5, stop: [] } });
  });

  it("tokenizes text and chat prompts with vLLM's own /tokenize, so the ids are the ones vLLM used", async () => {
    const { client, vllm } = await start();
    const text = await client.generate({ prompt: { kind: { case: "text", value: "2+2=" } }, sampling: { maxTokens: 2, stop: [] } });
    expect(text.promptTokenIds).toEqual(tokenizeText("2+2=", true));
    const messages = [{ role: "user", content: "Prove 1 + 1 = 2" }];
    const chat = await client.generate({ prompt: { kind: { case: "chat", value: { messages } } }, sampling: { maxTokens: 2, stop: [] } });
    expect(chat.promptTokenIds).toEqual(tokenizeText(applyChatTemplate(messages), false));
    const tokenizeCall = vllm.requests.find((r) => r.path === "/tokenize" && r.body.messages);
    expect(tokenizeCall!.body).toMatchObject({ add_generation_prompt: true, add_special_tokens: false });
    const tokenized = await client.tokenize({ prompt: { kind: { case: "chat", value: { messages } } } });
    expect(tokenized.tokenIds).toEqual(chat.promptTokenIds);
    expect(tokenized.templatedText).toBe(applyChatTemplate(messages));
  });

  it("reports a stop string as STOP with the string that ended it", async () => {
    const { client } = await start();
    const prompt = [1, 60];
    const first = sampledToken(0, "", prompt, 0, 1);
    const stop = String.fromCharCode(first - 3);
    const res = await client.generate({
      prompt: { kind: { case: "tokenIds", value: { ids: prompt } } },
      sampling: { maxTokens: 8, seed: 0n, stop: [stop] },
    });
    const completion = res.completions[0]!;
    expect(completion.finishReason).toBe(FinishReason.STOP);
    expect(completion.stopReason).toBe(stop);
    expect(completion.text.includes(stop)).toBe(false);
    expect(completion.tokenIds.length).toBeLessThanOrEqual(1);
  });

  it("streams the same tokens as Generate, prompt ids first and a finish reason per completion", async () => {
    const { client } = await start();
    const prompt = [1, 70, 71];
    const request = {
      prompt: { kind: { case: "tokenIds" as const, value: { ids: prompt } } },
      n: 2,
      sampling: { maxTokens: 4, seed: 7n, stop: [] },
    };
    const whole = await client.generate(request);
    const streamed: Record<number, number[]> = { 0: [], 1: [] };
    const finished: Record<number, FinishReason> = {};
    let firstPrompt: number[] | undefined;
    for await (const delta of client.generateStream(request)) {
      firstPrompt ??= delta.promptTokenIds;
      streamed[delta.index]!.push(...delta.tokenIds);
      if (delta.finishReason !== FinishReason.UNSPECIFIED) finished[delta.index] = delta.finishReason;
    }
    expect(firstPrompt).toEqual(prompt);
    expect(streamed[0]).toEqual(whole.completions[0]!.tokenIds);
    expect(streamed[1]).toEqual(whole.completions[1]!.tokenIds);
    expect(finished).toEqual({ 0: FinishReason.LENGTH, 1: FinishReason.LENGTH });
  });

  it("refuses bad requests naming the field and what is accepted", async () => {
    const { client } = await start(["limits.max_n=8"].length ? { overrides: ["limits.max_n=8"] } : {});
    const ids = { kind: { case: "tokenIds" as const, value: { ids: [1, 2] } } };
    const err = async (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e) => ConnectError.from(e),
      );
    const noPrompt = await err(client.generate({ n: 1 }));
    expect(noPrompt?.code).toBe(Code.InvalidArgument);
    expect(noPrompt?.rawMessage).toMatch(/prompt is required/);
    const bigN = await err(client.generate({ prompt: ids, n: 9 }));
    expect(bigN?.rawMessage).toBe("n is 9; accepted: 1..8 (limits.max_n)");
    const topP = await err(client.generate({ prompt: ids, sampling: { topP: 0, stop: [] } }));
    expect(topP?.rawMessage).toBe("sampling.top_p is 0; accepted: (0, 1]");
    expect(await codeOf(client.generate({ prompt: ids, adapter: "policy-v9" }))).toBe(Code.NotFound);
  });
});

describe("resilience", () => {
  it("retries a 503 from vLLM and succeeds", async () => {
    const { client, vllm } = await start({ standIn: { failNext: { count: 2, status: 503 } } });
    const res = await client.generate({
      prompt: { kind: { case: "tokenIds", value: { ids: [1, 5] } } },
      sampling: { maxTokens: 2, stop: [] },
    });
    expect(res.completions[0]!.tokenIds).toHaveLength(2);
    expect(completionRequests(vllm)).toHaveLength(3);
  });

  it("passes the RPC deadline to the HTTP request", async () => {
    const { client, vllm } = await start({ standIn: { delayMs: 3_000 } });
    const t0 = performance.now();
    const code = await codeOf(
      client.generate(
        { prompt: { kind: { case: "tokenIds", value: { ids: [1, 5] } } }, sampling: { maxTokens: 2, stop: [] } },
        { timeoutMs: 300 },
      ),
    );
    expect(code).toBe(Code.DeadlineExceeded);
    expect(performance.now() - t0).toBeLessThan(1_500);
    expect(completionRequests(vllm)).toHaveLength(1); // no retry past the deadline
  });

  it("answers UNAVAILABLE naming vLLM's URL when it is down, and health turns NOT_SERVING", async () => {
    const dead = "http://127.0.0.1:9"; // discard port: nothing listens
    const { client, server } = await start({ url: dead, overrides: ["vllm.max_retries=0"] });
    const error = await client.generate({ prompt: { kind: { case: "tokenIds", value: { ids: [1] } } } }).then(
      () => undefined,
      (e) => ConnectError.from(e),
    );
    expect(error?.code).toBe(Code.Unavailable);
    expect(error?.rawMessage).toContain(dead);
    const health = createClient(Health, createGrpcTransport({ baseUrl: server.url }));
    await expect
      .poll(async () => (await health.check({ service: "leangrpo.v1.InferenceService" })).status, { timeout: 3_000 })
      .toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
  });
});

describe("adapters", () => {
  it("loads each policy version under its own name, samples with it, and unloads versions beyond `keep`", async () => {
    const { client, vllm, adapterDir } = await start({ overrides: ["adapters.keep=2"] });
    for (const v of [1, 2]) {
      const res = await client.loadAdapter(
        messagesOf([{ part: { case: "source", value: { name: `policy-v${v}`, version: BigInt(v), path: `v${v}`, files: [] } } }]),
      );
      expect(res.adapter?.name).toBe(`policy-v${v}`);
      expect(res.unloaded).toEqual([]);
    }
    expect(vllm.requests.find((r) => r.path === "/v1/load_lora_adapter")!.body).toEqual({
      lora_name: "policy-v1",
      lora_path: join(adapterDir, "v1"),
    });
    const prompt = [1, 80];
    const withAdapter = await client.generate({
      prompt: { kind: { case: "tokenIds", value: { ids: prompt } } },
      adapter: "policy-v2",
      sampling: { maxTokens: 3, seed: 1n, stop: [] },
    });
    expect(completionRequests(vllm).at(-1)!.body.model).toBe("policy-v2");
    expect(withAdapter.completions[0]!.tokenIds).toEqual([0, 1, 2].map((p) => sampledToken(1, "policy-v2", prompt, 0, p)));
    expect(withAdapter.completions[0]!.policyVersion).toBe(2n);

    const third = await client.loadAdapter(
      messagesOf([{ part: { case: "source", value: { name: "policy-v3", version: 3n, path: "v3", files: [] } } }]),
    );
    expect(third.unloaded).toEqual(["policy-v1"]);
    await expect.poll(() => [...vllm.adapters.keys()].sort()).toEqual(["policy-v2", "policy-v3"]);
    const models = await client.listModels({});
    expect(models.backend).toBe("vllm");
    expect(models.adapters.map((a) => a.name)).toEqual(["policy-v2", "policy-v3"]);
    expect(await codeOf(client.generate({ prompt: { kind: { case: "tokenIds", value: { ids: prompt } } }, adapter: "policy-v1" }))).toBe(
      Code.NotFound,
    );
  });

  it("lets a request in flight finish on its version before that version is unloaded", async () => {
    const { client, vllm } = await start({ overrides: ["adapters.keep=1"], standIn: { delayMs: 400 } });
    await client.loadAdapter(messagesOf([{ part: { case: "source", value: { name: "policy-v1", version: 1n, path: "a/1", files: [] } } }]));
    const running = client.generate({
      prompt: { kind: { case: "tokenIds", value: { ids: [1, 9] } } },
      adapter: "policy-v1",
      sampling: { maxTokens: 2, stop: [] },
    });
    await expect.poll(() => completionRequests(vllm).length).toBe(1);
    const load = await client.loadAdapter(
      messagesOf([{ part: { case: "source", value: { name: "policy-v2", version: 2n, path: "a/2", files: [] } } }]),
    );
    expect(load.unloaded).toEqual(["policy-v1"]);
    expect(vllm.adapters.has("policy-v1")).toBe(true); // still in use
    expect((await running).completions[0]!.tokenIds).toHaveLength(2);
    await expect.poll(() => vllm.adapters.has("policy-v1")).toBe(false);
  });

  it("writes streamed PEFT files, checks their digests, and loads the directory", async () => {
    const { client, vllm, adapterDir } = await start();
    const config = Buffer.from(JSON.stringify({ r: 8, lora_alpha: 16, peft_type: "LORA" }));
    const weights = Buffer.alloc(300_000, 7);
    const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
    const messages: LoadAdapterRequest[] = [
      create(LoadAdapterRequestSchema, {
        part: {
          case: "source",
          value: {
            name: "policy-v5",
            version: 5n,
            files: [
              { path: "adapter_config.json", size: BigInt(config.length), sha256: sha(config) },
              { path: "adapter_model.safetensors", size: BigInt(weights.length), sha256: sha(weights) },
            ],
          },
        },
      }),
      create(LoadAdapterRequestSchema, {
        part: { case: "chunk", value: { path: "adapter_config.json", offset: 0n, data: config, eof: true } },
      }),
      ...[0, 1, 2].map((i) =>
        create(LoadAdapterRequestSchema, {
          part: {
            case: "chunk",
            value: {
              path: "adapter_model.safetensors",
              offset: BigInt(i * 100_000),
              data: weights.subarray(i * 100_000, (i + 1) * 100_000),
              eof: i === 2,
            },
          },
        }),
      ),
    ];
    const res = await client.loadAdapter(messagesOf(messages));
    const dir = join(adapterDir, "policy-v5");
    expect(res.adapter?.path).toBe(dir);
    expect(readFileSync(join(dir, "adapter_model.safetensors")).equals(weights)).toBe(true);
    expect(vllm.adapters.get("policy-v5")).toBe(dir);

    const corrupt = messages.map((m) => create(LoadAdapterRequestSchema, m));
    (corrupt[0]!.part.value as { name: string }).name = "policy-v6";
    (corrupt[2]!.part.value as { data: Uint8Array }).data = Buffer.alloc(100_000, 8);
    const error = await client.loadAdapter(messagesOf(corrupt)).then(
      () => undefined,
      (e) => ConnectError.from(e),
    );
    expect(error?.code).toBe(Code.DataLoss);
    expect(error?.rawMessage).toMatch(/adapter_model.safetensors": sha256 .* does not match/);
    expect(existsSync(join(adapterDir, "policy-v6"))).toBe(false);
    expect(vllm.adapters.has("policy-v6")).toBe(false);
  });

  it("refuses paths that leave the adapter directory", async () => {
    const { client } = await start();
    const error = await client
      .loadAdapter(
        messagesOf([
          { part: { case: "source", value: { name: "evil", version: 1n, files: [{ path: "../../etc/x", size: 1n, sha256: "" }] } } },
        ]),
      )
      .then(
        () => undefined,
        (e) => ConnectError.from(e),
      );
    expect(error?.code).toBe(Code.InvalidArgument);
    expect(error?.rawMessage).toContain("must be relative and stay inside the adapter directory");
  });

  it("writes an upload into a real directory even where a symlink out was planted under its name", async () => {
    const { client, vllm, adapterDir } = await start();
    const outside = mkdtempSync(join(tmpdir(), "adapter-outside-"));
    writeFileSync(join(outside, "adapter_config.json"), "VICTIM");
    symlinkSync(outside, join(adapterDir, "policy-v7"));
    const config = Buffer.from(JSON.stringify({ r: 8, lora_alpha: 16, peft_type: "LORA" }));
    const sha = createHash("sha256").update(config).digest("hex");
    await client.loadAdapter(
      messagesOf([
        {
          part: {
            case: "source",
            value: { name: "policy-v7", version: 7n, files: [{ path: "adapter_config.json", size: BigInt(config.length), sha256: sha }] },
          },
        },
        { part: { case: "chunk", value: { path: "adapter_config.json", offset: 0n, data: config, eof: true } } },
      ]),
    );
    expect(readFileSync(join(outside, "adapter_config.json"), "utf8")).toBe("VICTIM");
    expect(readFileSync(join(adapterDir, "policy-v7", "adapter_config.json")).equals(config)).toBe(true);
    expect(vllm.adapters.get("policy-v7")).toBe(join(realpathSync(adapterDir), "policy-v7"));
  });

  it("loads a directory by path only under adapters.dir: no absolute path, no .., no symlink out", async () => {
    const { client, vllm, adapterDir } = await start();
    symlinkSync(tmpdir(), join(adapterDir, "out"));
    const load = (path: string) =>
      client
        .loadAdapter(messagesOf([{ part: { case: "source", value: { name: `p-${path.length}`, version: 1n, path, files: [] } } }]))
        .then(
          () => undefined,
          (e) => ConnectError.from(e),
        );
    expect((await load("/etc"))?.rawMessage).toBe('source.path "/etc" is absolute; give a path relative to adapters.dir');
    expect((await load("../x"))?.rawMessage).toContain('contains ".."');
    expect((await load("out"))?.rawMessage).toBe('source.path "out" is a symlink; symlinks inside adapters.dir are refused');
    // A file of an adapter directory planted as a link to one elsewhere.
    mkdirSync(join(adapterDir, "planted"));
    writeFileSync(join(adapterDir, "planted", "adapter_model.safetensors"), "");
    symlinkSync("/etc/hostname", join(adapterDir, "planted", "adapter_config.json"));
    expect((await load("planted"))?.rawMessage).toBe(
      'source.path "planted/adapter_config.json" is a symlink; symlinks inside adapters.dir are refused',
    );
    expect((await load("none"))?.code).toBe(Code.NotFound);
    expect(vllm.requests.filter((r) => r.path === "/v1/load_lora_adapter")).toEqual([]);
  });
});

describe("local tokenization (vllm.tokenizer_dir)", () => {
  it("templates chat prompts with the model's own tokenizer and sends vLLM only ids", async () => {
    const tokenizerDir = new URL("../../../packages/lm/test/fixtures/tokenizer", import.meta.url).pathname;
    const { client, vllm } = await start({ overrides: [`vllm.tokenizer_dir=${tokenizerDir}`] });
    const { ModelTokenizer } = await import("@lean-grpo/lm/tokenizer");
    const tokenizer = await ModelTokenizer.load(tokenizerDir);
    const messages = [{ role: "user", content: "Prove that 2 + 2 = 4" }];
    const res = await client.generate({ prompt: { kind: { case: "chat", value: { messages } } }, sampling: { maxTokens: 2, stop: [] } });
    expect(res.promptTokenIds).toEqual(tokenizer.encodeChat(messages, { addGenerationPrompt: true }));
    expect(vllm.requests.some((r) => r.path === "/tokenize")).toBe(false);
    expect(completionRequests(vllm)[0]!.body.prompt).toEqual(res.promptTokenIds);
    const tokenized = await client.tokenize({ prompt: { kind: { case: "chat", value: { messages } } } });
    expect(tokenized.templatedText).toBe(tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true }));
  });
  it("answers INVALID_ARGUMENT naming a character the model's vocabulary cannot encode, and sends vLLM nothing", async () => {
    // Character-level, no unk_token, no byte fallback: like models/arith-tiny.
    const tokenizerDir = await writeCharTokenizer(mkdtempSync(join(tmpdir(), "char-tokenizer-")));
    const { client, vllm } = await start({ overrides: [`vllm.tokenizer_dir=${tokenizerDir}`] });
    const sampling = { maxTokens: 2, stop: [] };
    const text = "theorem foo (n : ℕ) : n = n";
    for (const call of [
      () => client.generate({ prompt: { kind: { case: "text", value: text } }, sampling }),
      () => client.tokenize({ prompt: { kind: { case: "text", value: text } } }),
    ]) {
      const error = await call().then(
        () => undefined,
        (e) => ConnectError.from(e),
      );
      expect(error?.code).toBe(Code.InvalidArgument);
      expect(error?.rawMessage).toContain('prompt.text cannot be tokenized: cannot encode "ℕ" (U+2115) at index 17 of the text');
      expect(error?.rawMessage).toContain("has no token for it");
    }
    const messages = [{ role: "user", content: "Prove ∀ n, n = n" }];
    const chat = await client.generate({ prompt: { kind: { case: "chat", value: { messages } } }, sampling }).then(
      () => undefined,
      (e) => ConnectError.from(e),
    );
    expect(chat?.code).toBe(Code.InvalidArgument);
    expect(chat?.rawMessage).toContain('prompt.chat cannot be tokenized: cannot encode "∀" (U+2200)');
    expect(vllm.requests.filter((r) => r.path === "/v1/completions" || r.path === "/tokenize")).toEqual([]);
    // Text it can encode still goes through.
    const ok = await client.generate({ prompt: { kind: { case: "text", value: "theorem foo (n : N) : n = n" } }, sampling });
    expect(ok.promptTokenIds.length).toBeGreaterThan(0);
  });
});
