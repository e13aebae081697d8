// What the inference service needs from a model server, whichever it is: vLLM
// over its OpenAI-compatible API, or the embedded tfjs sampler. Token ids are the
// currency: prompts are resolved to ids first, completions come back as ids with
// the sampler's logprob of each.
import type { AdapterSource } from "../adapters/adapter-source.js";
import type { FinishReason, Prompt, SamplingParams } from "@lean-grpo/gen/leangrpo/v1/common_pb";

export interface GenerateInput {
  promptIds: number[];
  n: number;
  sampling: SamplingParams;
  maxTokens: number;
  /** Adapter name, "" for the base model. */
  adapter: string;
  signal: AbortSignal;
  /** Remaining deadline, ms. */
  timeoutMs: number | undefined;
}

export interface GeneratedCompletion {
  index: number;
  /** With a reasoning vocabulary: the text of the mapped ids. */
  text: string;
  tokenIds: number[];
  logprobs: number[];
  finishReason: FinishReason;
  stopReason: string;
  /** With a reasoning vocabulary: where the reasoning tokens and the block were. */
  reasoning?: ReasoningTraceMessage;
}

/** The contract's ReasoningTrace, as plain fields. */
export interface ReasoningTraceMessage {
  opened: boolean;
  closed: boolean;
  blockStart: number;
  blockEnd: number;
  reasoningInside: number;
  reasoningOutside: number;
  spans: Array<{ start: number; end: number }>;
}

/** The contract's ReasoningVocabulary, as plain fields. */
export interface ReasoningVocabularyMessage {
  standardSize: number;
  reasoningSize: number;
  mapSha256: string;
  startMarker: string;
  endMarker: string;
  startMarkerIds: number[];
  endMarkerIds: number[];
}

export interface GenerateOutput {
  promptTokenIds: number[];
  completions: GeneratedCompletion[];
}

/** A piece of one completion, as produced. */
export interface StreamDelta {
  index: number;
  tokenIds: number[];
  logprobs: number[];
  text: string;
  finishReason: FinishReason;
  /** Set on the first delta of the stream. */
  promptTokenIds: number[];
}

export interface BaseModel {
  id: string;
  maxModelLen: number;
  vocabSize: number;
  /** The model's reasoning vocabulary; absent when it has none. */
  reasoningVocabulary?: ReasoningVocabularyMessage;
}

export interface TokenizedPrompt {
  ids: number[];
  /** The text that was tokenized (after the chat template); "" for id prompts. */
  text: string;
}

export interface InferenceBackend {
  readonly name: "vllm" | "embedded";
  baseModel(signal: AbortSignal): Promise<BaseModel>;
  tokenize(prompt: Prompt, signal: AbortSignal): Promise<TokenizedPrompt>;
  detokenize(ids: number[], signal: AbortSignal): Promise<string>;
  generate(input: GenerateInput): Promise<GenerateOutput>;
  generateStream(input: GenerateInput): AsyncIterable<StreamDelta>;
  /** Loads the PEFT adapter the service checked (`source`) under `name`. */
  loadAdapter(name: string, source: AdapterSource, signal: AbortSignal): Promise<void>;
  unloadAdapter(name: string, signal: AbortSignal): Promise<void>;
  /** True when the model server answers. */
  healthy(signal: AbortSignal): Promise<boolean>;
}
