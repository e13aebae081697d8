// The vLLM backend: the openai SDK against vLLM's OpenAI-compatible server.
//
// Prompts go to vLLM as token ids, so the ids the learner trains on are exactly the
// ids vLLM conditioned on. Text and chat prompts are tokenized here with the model's
// tokenizer and chat template when `tokenizerDir` is given, else by vLLM's /tokenize
// (which applies the served model's own template).
import OpenAI from "openai";
import type { Prompt } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { Code, ConnectError } from "@connectrpc/connect";
import type { AdapterSource } from "../../adapters/adapter-source.js";
import type { BaseModel, GenerateInput, GenerateOutput, InferenceBackend, StreamDelta, TokenizedPrompt } from "../inference-backend.js";
import { ConcurrencyGate } from "../concurrency-gate.js";
import { choiceLogprobs, choiceTokenIds, finishReason, stopReason, type VllmChoice } from "./completion-choice.js";
import { vllmError } from "./vllm-errors.js";
import { ModelTokenizer } from "@lean-grpo/lm/tokenizer";
import { tokenizeLocally } from "../tokenize-locally.js";
import { checkLogprobsMode, type VllmLogprobsMode } from "./logprobs-mode.js";

export interface VllmBackendOptions {
  /** Root URL, e.g. http://127.0.0.1:8000 (the SDK talks to <url>/v1). */
  url: string;
  apiKey: string;
  /** Served base model name; looked up from /v1/models when unset. */
  model?: string;
  /** Directory of the model's tokenizer, for tokenizing prompts locally. */
  tokenizerDir?: string;
  maxConcurrency: number;
  maxRetries: number;
  /** How vLLM was started (`--logprobs-mode`); default raw_logprobs, vLLM's. */
  logprobsMode?: VllmLogprobsMode;
  /** vLLM runs the project's reasoning-mask logits processor (inference.vllm.reasoning_logits_processor). */
  reasoningLogitsProcessor?: boolean;
  /** The mask a request that names none samples under (model.reasoning_mask). */
  reasoningMask?: "free" | "gated" | "strict";
}

const MASK_NAMES: Record<number, "free" | "gated" | "strict" | undefined> = { 0: undefined, 1: "free", 2: "gated", 3: "strict" };

/**
 * The request's reasoning mask as vLLM's logits processor reads it (vllm_xargs), or nothing for
 * free. Gated and strict need the processor; without it they are refused naming the key
 * (a request sampled without the mask would be trained as if masked).
 */
export function vllmReasoningArgs(
  mask: number,
  options: Pick<VllmBackendOptions, "reasoningLogitsProcessor" | "reasoningMask">,
): Record<string, unknown> {
  if (!(mask in MASK_NAMES)) {
    throw new ConnectError(
      `sampling.reasoning_mask is ${mask}; accepted: REASONING_MASK_FREE, _GATED, _STRICT (or unset)`,
      Code.InvalidArgument,
    );
  }
  const mode = MASK_NAMES[mask] ?? options.reasoningMask ?? "free";
  if (mode === "free") return {};
  if (!options.reasoningLogitsProcessor) {
    throw new ConnectError(
      `sampling.reasoning_mask ${mode.toUpperCase()} (model.reasoning_mask: ${mode}) cannot be applied by vLLM without the project's logits processor: ` +
        "start vLLM with --logits-processors leangrpo_learner.reasoning.vllm_logits_processor:ReasoningMaskLogitsProcessor on an expanded base " +
        "and set inference.vllm.reasoning_logits_processor: true, or use model.reasoning_mask: free",
      Code.FailedPrecondition,
    );
  }
  return { vllm_xargs: { reasoning_mask: mode } };
}

interface VllmModel {
  id: string;
  parent?: string | null;
  max_model_len?: number | null;
}

export function createVllmBackend(options: VllmBackendOptions): InferenceBackend {
  const root = options.url.replace(/\/+$/, "");
  const client = new OpenAI({ baseURL: `${root}/v1`, apiKey: options.apiKey, maxRetries: options.maxRetries });
  const gate = new ConcurrencyGate(options.maxConcurrency);
  let base: Promise<BaseModel> | undefined;
  let localTokenizer: Promise<ModelTokenizer> | undefined;
  const tokenizerDir = options.tokenizerDir;
  const tokenizer = tokenizerDir
    ? () =>
        (localTokenizer ??= ModelTokenizer.load(tokenizerDir).catch((error) => {
          localTokenizer = undefined;
          throw new ConnectError(
            `cannot load the tokenizer in ${tokenizerDir} (vllm.tokenizer_dir): ${(error as Error).message}`,
            Code.FailedPrecondition,
          );
        }))
    : undefined;

  const call = <T>(signal: AbortSignal, work: () => Promise<T>) =>
    gate.run(signal, work).catch((e) => {
      throw vllmError(e, root, signal);
    });

  async function lookUpBase(signal: AbortSignal): Promise<BaseModel> {
    const list = await call(signal, () => client.models.list({ signal }));
    const models = list.data as unknown as VllmModel[];
    const model = options.model ? models.find((m) => m.id === options.model) : models.find((m) => !m.parent);
    if (!model) {
      const served = models.map((m) => m.id).join(", ");
      throw new ConnectError(
        `vLLM at ${root} serves no model "${options.model ?? "(base)"}"; it serves: ${served}`,
        Code.FailedPrecondition,
      );
    }
    // vLLM does not report the vocabulary size; 0 means unknown.
    return { id: model.id, maxModelLen: model.max_model_len ?? 0, vocabSize: 0 };
  }

  function baseModel(signal: AbortSignal): Promise<BaseModel> {
    base ??= lookUpBase(signal).catch((e) => {
      base = undefined; // look again next time: vLLM may not be up yet
      throw e;
    });
    return base;
  }

  async function tokenize(prompt: Prompt, signal: AbortSignal): Promise<TokenizedPrompt> {
    const kind = prompt.kind;
    if (kind.case === "tokenIds") return { ids: kind.value.ids, text: "" };
    if (tokenizer) return tokenizeLocally(await tokenizer(), prompt);
    const model = (await baseModel(signal)).id;
    const body =
      kind.case === "chat"
        ? {
            model,
            messages: kind.value.messages.map((m) => ({ role: m.role, content: m.content })),
            add_generation_prompt: true,
            add_special_tokens: false,
          }
        : { model, prompt: kind.value ?? "", add_special_tokens: true };
    // /tokenize lives at the server root, beside /v1.
    const res = await call(signal, () => client.post<{ tokens: number[] }>(`${root}/tokenize`, { body, signal }));
    return { ids: res.tokens, text: kind.case === "text" ? kind.value : "" };
  }

  function completionBody(input: GenerateInput, model: string, stream: boolean) {
    const s = input.sampling;
    return {
      model: input.adapter || model,
      prompt: input.promptIds,
      n: input.n,
      max_tokens: input.maxTokens,
      temperature: s.temperature ?? 1,
      top_p: s.topP ?? 1,
      stop: s.stop.length > 0 ? s.stop : undefined,
      seed: s.seed === undefined ? undefined : Number(s.seed),
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
      // logprobs: 0 returns the sampled token's logprob only.
      logprobs: 0,
      // vLLM extensions (sent as extra body fields).
      top_k: s.topK ?? -1,
      min_tokens: s.minTokens,
      repetition_penalty: s.repetitionPenalty,
      stop_token_ids: s.stopTokenIds.length > 0 ? s.stopTokenIds : undefined,
      return_token_ids: true,
      return_tokens_as_token_ids: true,
      ...vllmReasoningArgs(s.reasoningMask, options),
    };
  }

  async function detokenize(ids: number[], signal: AbortSignal): Promise<string> {
    if (tokenizer) return (await tokenizer()).decode(ids);
    const model = (await baseModel(signal)).id;
    const res = await call(signal, () => client.post<{ prompt: string }>(`${root}/detokenize`, { body: { model, tokens: ids }, signal }));
    return res.prompt;
  }

  return {
    name: "vllm",
    baseModel,
    tokenize,
    detokenize,

    async generate(input: GenerateInput): Promise<GenerateOutput> {
      checkLogprobsMode(options.logprobsMode ?? "raw_logprobs", input.sampling);
      const model = (await baseModel(input.signal)).id;
      const res = await call(input.signal, () =>
        client.completions.create(completionBody(input, model, false) as unknown as OpenAI.CompletionCreateParamsNonStreaming, {
          signal: input.signal,
          ...(input.timeoutMs !== undefined ? { timeout: Math.max(1, input.timeoutMs) } : {}),
        }),
      );
      const choices = res.choices as unknown as VllmChoice[];
      const completions = choices
        .map((choice) => {
          const tokenIds = choiceTokenIds(choice);
          return {
            index: choice.index,
            text: choice.text,
            tokenIds,
            logprobs: choiceLogprobs(choice, tokenIds.length),
            finishReason: finishReason(choice.finish_reason),
            stopReason: stopReason(choice.stop_reason),
          };
        })
        .sort((a, b) => a.index - b.index);
      return { promptTokenIds: choices[0]?.prompt_token_ids ?? input.promptIds, completions };
    },

    async *generateStream(input: GenerateInput): AsyncIterable<StreamDelta> {
      checkLogprobsMode(options.logprobsMode ?? "raw_logprobs", input.sampling);
      const model = (await baseModel(input.signal)).id;
      const stream = await call(input.signal, () =>
        client.completions.create(completionBody(input, model, true) as unknown as OpenAI.CompletionCreateParamsStreaming, {
          signal: input.signal,
          ...(input.timeoutMs !== undefined ? { timeout: Math.max(1, input.timeoutMs) } : {}),
        }),
      );
      let first = true;
      try {
        for await (const chunk of stream) {
          for (const choice of chunk.choices as unknown as VllmChoice[]) {
            const tokenIds = choiceTokenIds(choice);
            yield {
              index: choice.index,
              tokenIds,
              logprobs: choiceLogprobs(choice, tokenIds.length),
              text: choice.text,
              finishReason: finishReason(choice.finish_reason),
              promptTokenIds: first ? (choice.prompt_token_ids ?? input.promptIds) : [],
            };
            first = false;
          }
        }
      } catch (e) {
        throw vllmError(e, root, input.signal);
      }
    },

    async loadAdapter(name: string, source: AdapterSource, signal: AbortSignal) {
      // A fresh name per policy version: requests in flight keep their version. vLLM is another
      // process and reads by path (docs/guide/security.md: what adapters.dir must guarantee).
      await call(signal, () => client.post(`${root}/v1/load_lora_adapter`, { body: { lora_name: name, lora_path: source.dir }, signal }));
    },

    async unloadAdapter(name: string, signal: AbortSignal) {
      await call(signal, () => client.post(`${root}/v1/unload_lora_adapter`, { body: { lora_name: name }, signal }));
    },

    async healthy(signal: AbortSignal) {
      try {
        const res = await fetch(`${root}/health`, { signal });
        return res.ok;
      } catch {
        return false;
      }
    },
  };
}
