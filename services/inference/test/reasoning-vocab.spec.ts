// The inference service with a reasoning vocabulary (docs/concepts/reasoning-vocabulary.md),
// served for real on arith-tiny expanded with one copy of every id, markers ":" / "\boxed{":
// the mask is applied per request, the text is the mapped ids' text with the reasoning spans
// marked, ListModels describes the vocabulary, and what cannot be served is refused naming
// the key: gated without a vocabulary, gated through vLLM without the logits processor, an
// adapter saved for another map.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ReasoningMask } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { loadConfig, serve } from "@lean-grpo/kit";
import {
  blockStates,
  decodeReasoningCompletion,
  defaultReasoningMap,
  isAllowed,
  LoraAdapter,
  loadReasoningModel,
  ModelTokenizer,
  resolveModelReasoning,
  savePeftAdapter,
  useBackend,
  writeReasoningMapFile,
  type CausalLM,
  type ReasoningVocabulary,
} from "@lean-grpo/lm";
import { InferenceConfigSchema } from "../src/config.js";
import { createInferenceService } from "../src/service.js";
import { vllmReasoningArgs } from "../src/backend/vllm/vllm-backend.js";

const ARITH = fileURLToPath(new URL("../../../models/arith-tiny", import.meta.url));
const N_S = 147;

async function start(overrides: string[], adaptersDir: string) {
  const config = loadConfig(InferenceConfigSchema, {
    overrides: [
      `embedded.model_dir=${ARITH}`,
      "embedded.tensor_backend=cpu",
      "server.port=0",
      "server.shutdown.drain_delay_ms=0",
      `adapters.dir=${adaptersDir}`,
      ...overrides,
    ],
  });
  const server = await serve({ name: "inference", services: [createInferenceService(config)], config: config.server });
  return { server, client: createClient(InferenceService, createGrpcTransport({ baseUrl: server.url })) };
}

describe("inference with a reasoning vocabulary", { timeout: 300_000 }, () => {
  let served: Awaited<ReturnType<typeof start>>;
  let plain: Awaited<ReturnType<typeof start>>;
  let tokenizer: ModelTokenizer;
  let vocab: ReasoningVocabulary;
  let model: CausalLM;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "inference-reasoning-"));
    served = await start(
      [`model.reasoning_vocab_size=${N_S}`, `model.reasoning_markers=[":", "\\\\boxed{"]`, "model.reasoning_mask=gated"],
      dir,
    );
    plain = await start([], dir);
    tokenizer = await ModelTokenizer.load(ARITH);
    await useBackend("cpu");
    vocab = (await resolveModelReasoning(ARITH, { size: N_S, markers: [":", "\\boxed{"], mask: "gated" }))!;
    model = await loadReasoningModel(ARITH, vocab);
  }, 300_000);
  afterAll(async () => {
    await served?.server.shutdown();
    await plain?.server.shutdown();
    model?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  const chat = (content: string) => ({
    kind: { case: "chat" as const, value: { messages: [{ role: "user", content }], addGenerationPrompt: true } },
  });

  it("describes the vocabulary in ListModels", async () => {
    const models = await served.client.listModels({});
    expect(models.baseModel?.vocabSize).toBe(2 * N_S);
    expect(models.baseModel?.reasoningVocabulary).toMatchObject({
      standardSize: N_S,
      reasoningSize: N_S,
      mapSha256: defaultReasoningMap(N_S, N_S).sha256,
      startMarker: ":",
      endMarker: "\\boxed{",
      startMarkerIds: [27],
      endMarkerIds: [114],
    });
    expect((await plain.client.listModels({})).baseModel?.reasoningVocabulary).toBeUndefined();
  });

  it.each([
    ["gated", ReasoningMask.GATED],
    ["strict", ReasoningMask.STRICT],
    ["free", ReasoningMask.FREE],
    ["the configured mode (gated)", ReasoningMask.UNSPECIFIED],
  ] as const)("samples under %s and returns the mapped text with its reasoning spans", async (_name, mask) => {
    const res = await served.client.generate({
      prompt: chat("What is 27 + 45?"),
      n: 6,
      sampling: { maxTokens: 24, temperature: 1, seed: 5n, stop: [], stopTokenIds: [], reasoningMask: mask },
    });
    const mode = mask === ReasoningMask.FREE ? "free" : mask === ReasoningMask.STRICT ? "strict" : "gated";
    for (const c of res.completions) {
      const states = blockStates(c.tokenIds, vocab);
      c.tokenIds.forEach((id, t) => expect(isAllowed(id, states[t]!, mode, vocab)).toBe(true));
      const decoded = decodeReasoningCompletion(tokenizer, c.tokenIds, vocab, { skipSpecialTokens: true });
      expect(c.text).toBe(
        tokenizer.decode(
          c.tokenIds.map((id) => vocab.source(id)),
          { skipSpecialTokens: true },
        ),
      );
      expect(c.reasoning).toMatchObject({ ...decoded.trace, spans: decoded.spans });
      // The highlighted characters are exactly what the reasoning tokens wrote.
      const written = c.reasoning!.spans.map((s) => Array.from(c.text).slice(s.start, s.end).join("")).join("");
      expect(written).toBe(
        tokenizer.decode(
          c.tokenIds.filter((id) => id >= N_S).map((id) => id - N_S),
          { skipSpecialTokens: true },
        ),
      );
    }
    if (mode !== "free") expect(res.completions.some((c) => c.reasoning!.opened)).toBe(true);
  });

  it("refuses gated without a reasoning vocabulary, and gated through vLLM without the logits processor, naming the key", async () => {
    const error = await plain.client
      .generate({
        prompt: chat("What is 1 + 2?"),
        n: 1,
        sampling: { maxTokens: 2, stop: [], stopTokenIds: [], reasoningMask: ReasoningMask.GATED },
      })
      .catch((e: unknown) => ConnectError.from(e));
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
    expect((error as ConnectError).rawMessage).toMatch(
      /sampling\.reasoning_mask is GATED but the served model has no reasoning vocabulary \(model\.reasoning_vocab_size is 0\)/,
    );

    expect(vllmReasoningArgs(ReasoningMask.FREE, {})).toEqual({});
    expect(vllmReasoningArgs(ReasoningMask.UNSPECIFIED, { reasoningMask: "free" })).toEqual({});
    expect(() => vllmReasoningArgs(ReasoningMask.GATED, {})).toThrow(/inference\.vllm\.reasoning_logits_processor: true/);
    expect(() => vllmReasoningArgs(ReasoningMask.UNSPECIFIED, { reasoningMask: "strict" })).toThrow(/model\.reasoning_mask: strict/);
    expect(vllmReasoningArgs(ReasoningMask.STRICT, { reasoningLogitsProcessor: true })).toEqual({
      vllm_xargs: { reasoning_mask: "strict" },
    });
  });

  it("loads an adapter with trained rows and its map, and refuses one saved for another map", async () => {
    const rows = { start: N_S, embedding: tf.slice(model.weights.embedding, [N_S, 0], [N_S, model.config.hiddenSize]), head: null };
    const adapter = LoraAdapter.create(
      model.config,
      { rank: 2, alpha: 4, targetModules: ["q_proj"], dropout: 0, useRslora: false },
      1,
      rows,
    );
    rows.embedding.dispose();
    const good = path.join(dir, "good");
    await savePeftAdapter(adapter, good, { baseModel: "arith-tiny" });
    await writeReasoningMapFile(good, vocab.map, vocab.markers);
    const bad = path.join(dir, "bad");
    await savePeftAdapter(adapter, bad, { baseModel: "arith-tiny" });
    await writeReasoningMapFile(bad, defaultReasoningMap(N_S, 20));
    adapter.dispose();
    await served.client.loadAdapter(
      (async function* () {
        yield { part: { case: "source" as const, value: { name: "rows-good", version: 1n, path: "good", files: [] } } };
      })(),
    );
    const error = await served.client
      .loadAdapter(
        (async function* () {
          yield { part: { case: "source" as const, value: { name: "rows-bad", version: 2n, path: "bad", files: [] } } };
        })(),
      )
      .catch((e: unknown) => ConnectError.from(e));
    expect((error as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((error as ConnectError).rawMessage).toMatch(/adapter "rows-bad" was saved with another reasoning map/);
    const res = await served.client.generate({
      prompt: chat("What is 27 + 45?"),
      n: 2,
      adapter: "rows-good",
      sampling: { maxTokens: 8, seed: 1n, stop: [], stopTokenIds: [], reasoningMask: ReasoningMask.GATED },
    });
    expect(res.completions).toHaveLength(2);
  });
});
