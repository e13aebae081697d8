// Which logprobs vLLM returns is fixed when it starts (`--logprobs-mode`), not per request.
// vLLM V1's default, raw_logprobs, reports log-softmax of the raw logits, before temperature
// and top-k/top-p; an RL trainer needs the logprobs of the distribution actually sampled,
// processed_logprobs (learner-facts §4; ServiceNow PipelineRL, "vLLM V0 to V1: Correctness
// Before Corrections in RL", 2026). With raw logprobs only T = 1 without truncation (or greedy,
// whose logprobs nobody trains on) gives the right numbers; anything else is refused.
import { Code, ConnectError } from "@connectrpc/connect";
import type { SamplingParams } from "@lean-grpo/gen/leangrpo/v1/common_pb";

export type VllmLogprobsMode = "raw_logprobs" | "processed_logprobs";

export function checkLogprobsMode(mode: VllmLogprobsMode, sampling: SamplingParams): void {
  if (mode === "processed_logprobs") return;
  const temperature = sampling.temperature ?? 1;
  const reasons = [
    temperature !== 0 && temperature !== 1 ? `temperature ${temperature}` : null,
    sampling.topP !== undefined && sampling.topP < 1 && temperature !== 0 ? `top_p ${sampling.topP}` : null,
    sampling.topK !== undefined && sampling.topK > 0 && temperature !== 0 ? `top_k ${sampling.topK}` : null,
  ].filter((r) => r !== null);
  if (reasons.length === 0) return;
  throw new ConnectError(
    `sampling with ${reasons.join(", ")} needs vLLM's processed logprobs, but vllm.logprobs_mode is raw_logprobs ` +
      "(vLLM's default: logprobs of the raw logits, not of the distribution sampled); start vLLM with " +
      "--logprobs-mode processed_logprobs and set vllm.logprobs_mode: processed_logprobs, or sample at temperature 1 without top_k/top_p",
    Code.FailedPrecondition,
  );
}
