// The embedded backend: the learner core's tfjs model sampling in this process, so
// the mesh runs with no GPU and no vLLM. Same RPCs as on vLLM: token-id prompts,
// ids and sampler logprobs back, PEFT adapters loaded by name. Concurrent calls share
// decode passes (the core's ContinuousDecoder), as on vLLM; max_batch_rows 0 makes them
// take turns instead.
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { FinishReason, type Prompt } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  checkSameReasoningMap,
  decodeReasoningCompletion,
  loadReasoningModel,
  resolveModelReasoning,
  type ReasoningMaskMode,
  type ReasoningSettings,
  type ReasoningVocabulary,
  type CausalLM,
  ContinuousDecoder,
  ModelLibraryError,
  ModelTokenizer,
  generate,
  importPeftAdapter,
  useBackend,
  type GeneratedSequence,
  type LoraAdapter,
} from "@lean-grpo/lm";
import type { AdapterSource } from "../../adapters/adapter-source.js";
import type { BaseModel, GenerateInput, GenerateOutput, InferenceBackend, StreamDelta, TokenizedPrompt } from "../inference-backend.js";
import { ConcurrencyGate } from "../concurrency-gate.js";
import { truncateAtStop } from "./stop-strings.js";
import { tokenizeLocally } from "../tokenize-locally.js";

export interface EmbeddedBackendOptions {
  /** A Hugging Face model directory (config.json, model.safetensors, tokenizer.json). */
  modelDir: string;
  tensorBackend: "auto" | "cpu" | "wasm" | "tensorflow";
  /** Rows decoded at once across concurrent calls; 0: calls take turns (each batched over its n). */
  maxBatchRows: number;
  /** The model's reasoning vocabulary settings (model.reasoning_*); absent or size 0: none. */
  reasoning?: ReasoningSettings;
}

const MASK_MODES: Record<number, ReasoningMaskMode | undefined> = { 0: undefined, 1: "free", 2: "gated", 3: "strict" };

/** The mode a request samples under: its own, else the configured one; gated/strict need a vocabulary. */
export function requestedMask(
  mask: number,
  vocab: ReasoningVocabulary | undefined,
  configured: ReasoningMaskMode | undefined,
): ReasoningMaskMode {
  if (!(mask in MASK_MODES)) {
    throw new ConnectError(
      `sampling.reasoning_mask is ${mask}; accepted: REASONING_MASK_FREE, _GATED, _STRICT (or unset)`,
      Code.InvalidArgument,
    );
  }
  const mode = MASK_MODES[mask] ?? configured ?? "free";
  if (mode !== "free" && !vocab) {
    throw new ConnectError(
      `sampling.reasoning_mask is ${mode.toUpperCase()} but the served model has no reasoning vocabulary (model.reasoning_vocab_size is 0); send REASONING_MASK_FREE or configure one`,
      Code.InvalidArgument,
    );
  }
  return mode;
}

interface Loaded {
  model: CausalLM;
  vocab: ReasoningVocabulary | undefined;
  tokenizer: ModelTokenizer | undefined;
  /** Absent when batching across calls is off. */
  decoder: ContinuousDecoder | undefined;
}

export function createEmbeddedBackend(options: EmbeddedBackendOptions): InferenceBackend {
  // Without the decoder: one model, one tensor engine, so calls take turns.
  const gate = new ConcurrencyGate(1);
  const adapters = new Map<string, LoraAdapter>();
  let loading: Promise<Loaded> | undefined;

  function loaded(): Promise<Loaded> {
    loading ??= (async () => {
      await useBackend(options.tensorBackend);
      const vocab = options.reasoning ? await resolveModelReasoning(options.modelDir, options.reasoning) : undefined;
      const model = await loadReasoningModel(options.modelDir, vocab);
      const tokenizer = existsSync(join(options.modelDir, "tokenizer.json")) ? await ModelTokenizer.load(options.modelDir) : undefined;
      const decoder = options.maxBatchRows > 0 ? new ContinuousDecoder(model, { maxRows: options.maxBatchRows }) : undefined;
      return { model, vocab, tokenizer, decoder };
    })().catch((error) => {
      loading = undefined;
      throw asConnectError(error, `cannot load the embedded model from ${options.modelDir} (embedded.model_dir)`);
    });
    return loading;
  }

  async function needTokenizer(): Promise<ModelTokenizer> {
    const { tokenizer } = await loaded();
    if (!tokenizer) {
      throw new ConnectError(`${options.modelDir} has no tokenizer.json: send prompt.token_ids`, Code.FailedPrecondition);
    }
    return tokenizer;
  }

  async function run(input: GenerateInput): Promise<GenerateOutput> {
    const { model, vocab, tokenizer, decoder } = await loaded();
    const adapter = input.adapter === "" ? null : adapters.get(input.adapter);
    if (adapter === undefined) throw new ConnectError(`adapter "${input.adapter}" is not loaded`, Code.NotFound);
    const s = input.sampling;
    const stopTokenIds = [...new Set([...model.config.eosTokenIds, ...s.stopTokenIds])];
    const mode = requestedMask(s.reasoningMask, vocab, options.reasoning?.mask);
    const sampling = {
      temperature: s.temperature ?? 1,
      topK: s.topK ?? 0,
      topP: s.topP ?? 1,
      ...(vocab ? { reasoning: { vocab, mode } } : {}),
    };
    // Each row draws from its own stream of the seed, so the request is reproducible.
    const seed = s.seed !== undefined ? Number(s.seed) : Math.floor(Math.random() * 2 ** 32);
    const decoded: Promise<GeneratedSequence[]> = decoder
      ? decoder.decode({
          prompt: input.promptIds,
          n: input.n,
          maxNewTokens: input.maxTokens,
          sampling,
          seed,
          stopTokenIds,
          adapter,
          signal: input.signal,
        })
      : gate.run(input.signal, () =>
          generate(
            model,
            Array.from({ length: input.n }, () => input.promptIds),
            { maxNewTokens: input.maxTokens, ...sampling, seed, stopTokenIds, adapter, signal: input.signal },
          ),
        );
    const sequences = await decoded.catch((error) => {
      throw asConnectError(error, "embedded generation failed");
    });
    // Reasoning ids read as their sources (stop strings too); a stock decoder would drop them.
    const decode = (ids: number[]) => tokenizer?.decode(vocab ? ids.map((id) => vocab.source(id)) : ids, { skipSpecialTokens: true }) ?? "";
    return {
      promptTokenIds: input.promptIds,
      completions: sequences.map((sequence, index) => {
        const cut = truncateAtStop(sequence.tokenIds, s.stop, decode);
        const stoppedByToken = cut === undefined && sequence.finishReason === "stop";
        const tokenIds = cut ? sequence.tokenIds.slice(0, cut.keep) : sequence.tokenIds;
        const traced = vocab && tokenizer ? decodeReasoningCompletion(tokenizer, tokenIds, vocab, { skipSpecialTokens: true }) : undefined;
        return {
          index,
          text: traced ? traced.text : decode(tokenIds),
          ...(traced ? { reasoning: { ...traced.trace, spans: traced.spans } } : {}),
          tokenIds,
          logprobs: sequence.logprobs.slice(0, tokenIds.length),
          finishReason: cut || sequence.finishReason === "stop" ? FinishReason.STOP : FinishReason.LENGTH,
          stopReason: cut ? cut.stop : stoppedByToken ? String(sequence.tokenIds.at(-1)) : "",
        };
      }),
    };
  }

  return {
    name: "embedded",

    async baseModel(): Promise<BaseModel> {
      const { model, vocab } = await loaded();
      return {
        id: basename(options.modelDir),
        maxModelLen: model.config.maxPositionEmbeddings,
        vocabSize: model.config.vocabSize,
        ...(vocab
          ? {
              reasoningVocabulary: {
                standardSize: vocab.standardSize,
                reasoningSize: vocab.reasoningSize,
                mapSha256: vocab.sha256,
                startMarker: vocab.markers.start,
                endMarker: vocab.markers.end,
                startMarkerIds: [...vocab.markers.startIds],
                endMarkerIds: [...vocab.markers.endIds],
              },
            }
          : {}),
      };
    },

    async tokenize(prompt: Prompt): Promise<TokenizedPrompt> {
      if (prompt.kind.case === "tokenIds") return { ids: prompt.kind.value.ids, text: "" };
      return tokenizeLocally(await needTokenizer(), prompt);
    },

    async detokenize(ids: number[]): Promise<string> {
      const { vocab } = await loaded();
      return (await needTokenizer()).decode(vocab ? ids.map((id) => vocab.source(id)) : ids);
    },

    generate: run,

    // The core decodes a whole batch at once, so each completion arrives as one piece.
    async *generateStream(input: GenerateInput): AsyncIterable<StreamDelta> {
      const out = await run(input);
      for (const c of out.completions) {
        yield {
          index: c.index,
          tokenIds: c.tokenIds,
          logprobs: c.logprobs,
          text: c.text,
          finishReason: c.finishReason,
          promptTokenIds: c.index === 0 ? out.promptTokenIds : [],
        };
      }
    },

    async loadAdapter(name: string, source: AdapterSource) {
      const { model, vocab } = await loaded();
      // The very files the service checked, read through its walk from adapters.dir, never reopened by path.
      const files = await source.read();
      // Rows trained for another map would read as other tokens.
      try {
        checkSameReasoningMap(files.reasoningMap?.toString("utf8") ?? null, vocab?.map, `adapter "${name}"`);
      } catch (error) {
        throw new ConnectError((error as Error).message, Code.FailedPrecondition);
      }
      if (files.config === null || files.weights === null)
        throw new ConnectError(
          `cannot load the adapter in ${source.dir}: it has no ${files.config === null ? ADAPTER_CONFIG_FILE : ADAPTER_WEIGHTS_FILE}`,
          Code.InvalidArgument,
        );
      const peft = { [ADAPTER_CONFIG_FILE]: new Uint8Array(files.config), [ADAPTER_WEIGHTS_FILE]: new Uint8Array(files.weights) };
      const adapter = await importPeftAdapter(peft, model.config).catch((error) => {
        throw asConnectError(error, `cannot load the adapter in ${source.dir}`);
      });
      adapters.get(name)?.dispose();
      adapters.set(name, adapter);
    },

    async unloadAdapter(name: string) {
      adapters.get(name)?.dispose();
      adapters.delete(name);
    },

    async healthy() {
      try {
        await loaded();
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** The core's input errors are the caller's fault; everything else is ours. */
function asConnectError(error: unknown, context: string): ConnectError {
  if (error instanceof ConnectError) return error;
  if (error instanceof ModelLibraryError) {
    const code = error.name === "ModelInputError" ? Code.InvalidArgument : Code.FailedPrecondition;
    return new ConnectError(`${context}: ${error.message}`, code);
  }
  return ConnectError.from(error);
}
