// Validates a Generate/GenerateStream request and turns it into backend input.
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { Prompt, SamplingParams } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { InferenceBackend, GenerateInput } from "../backend/inference-backend.js";
import type { InferenceConfig } from "../config.js";

interface GenerateFields {
  prompt?: Prompt;
  n: number;
  sampling?: SamplingParams;
  adapter: string;
}

export async function toGenerateInput(
  req: GenerateFields,
  ctx: HandlerContext,
  backend: InferenceBackend,
  limits: InferenceConfig["limits"],
): Promise<GenerateInput> {
  if (!req.prompt || req.prompt.kind.case === undefined) {
    throw new ConnectError("prompt is required: set prompt.text, prompt.chat or prompt.token_ids", Code.InvalidArgument);
  }
  const n = req.n === 0 ? 1 : req.n;
  if (n > limits.max_n) throw new ConnectError(`n is ${n}; accepted: 1..${limits.max_n} (limits.max_n)`, Code.InvalidArgument);
  const sampling = req.sampling ?? ({ stop: [], stopTokenIds: [], maxTokens: 0, minTokens: 0 } as unknown as SamplingParams);
  checkSampling(sampling);
  const prompt = await backend.tokenize(req.prompt, ctx.signal);
  if (prompt.ids.length === 0) throw new ConnectError("the prompt is empty after tokenization", Code.InvalidArgument);
  return {
    promptIds: prompt.ids,
    n,
    sampling,
    maxTokens: sampling.maxTokens === 0 ? limits.default_max_tokens : sampling.maxTokens,
    adapter: req.adapter,
    signal: ctx.signal,
    timeoutMs: ctx.timeoutMs(),
  };
}

function checkSampling(s: SamplingParams) {
  const bad = (field: string, value: unknown, accepted: string) => {
    throw new ConnectError(`sampling.${field} is ${value}; accepted: ${accepted}`, Code.InvalidArgument);
  };
  if (s.temperature !== undefined && !(s.temperature >= 0 && Number.isFinite(s.temperature)))
    bad("temperature", s.temperature, ">= 0 (0 is greedy)");
  if (s.topP !== undefined && !(s.topP > 0 && s.topP <= 1)) bad("top_p", s.topP, "(0, 1]");
  if (s.repetitionPenalty !== undefined && !(s.repetitionPenalty > 0)) bad("repetition_penalty", s.repetitionPenalty, "> 0 (1 disables)");
  if (s.minTokens > 0 && s.maxTokens > 0 && s.minTokens > s.maxTokens) bad("min_tokens", s.minTokens, `<= max_tokens (${s.maxTokens})`);
}
