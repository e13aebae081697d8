// Reads token ids and sampler logprobs out of a vLLM completion choice. vLLM
// returns ids directly with `return_token_ids` (since 0.10.2); older servers only
// encode them in the logprob tokens as "token_id:N" (`return_tokens_as_token_ids`).
import { Code, ConnectError } from "@connectrpc/connect";
import { FinishReason } from "@lean-grpo/gen/leangrpo/v1/common_pb";

export interface VllmChoice {
  index: number;
  text: string;
  finish_reason: string | null;
  stop_reason?: string | number | null;
  token_ids?: number[] | null;
  prompt_token_ids?: number[] | null;
  logprobs?: { tokens?: string[]; token_logprobs?: (number | null)[] } | null;
}

export function choiceTokenIds(choice: VllmChoice): number[] {
  if (Array.isArray(choice.token_ids)) return choice.token_ids;
  const tokens = choice.logprobs?.tokens;
  if (!tokens) {
    throw new ConnectError("vLLM returned neither token_ids nor logprob tokens; is it older than 0.6?", Code.Internal);
  }
  return tokens.map((token) => {
    const match = /^token_id:(\d+)$/.exec(token);
    if (!match) throw new ConnectError(`vLLM logprob token "${token}" is not "token_id:N"`, Code.Internal);
    return Number(match[1]);
  });
}

export function choiceLogprobs(choice: VllmChoice, expected: number): number[] {
  const values = choice.logprobs?.token_logprobs ?? [];
  if (values.length !== expected) {
    throw new ConnectError(`vLLM returned ${values.length} logprobs for ${expected} tokens`, Code.Internal);
  }
  return values.map((v) => (v === null ? Number.NaN : v));
}

export function finishReason(value: string | null): FinishReason {
  switch (value) {
    case "stop":
      return FinishReason.STOP;
    case "length":
      return FinishReason.LENGTH;
    case "abort":
      return FinishReason.ABORT;
    default:
      return FinishReason.UNSPECIFIED;
  }
}

export function stopReason(value: string | number | null | undefined): string {
  return value === null || value === undefined ? "" : String(value);
}
