// ComputeLogprobs: per-token logprobs (and entropies) under the current policy or the reference.
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  ComputeLogprobsResponseSchema,
  type ComputeLogprobsRequest,
  type ComputeLogprobsResponse,
} from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import type { LearnerHost } from "./learner-host.js";

export async function computeLogprobs(
  host: LearnerHost,
  request: ComputeLogprobsRequest,
  ctx: HandlerContext,
): Promise<ComputeLogprobsResponse> {
  if (request.sequences.length === 0) throw new ConnectError("sequences is empty; send at least one", Code.InvalidArgument);
  request.sequences.forEach((s, i) => {
    if (s.promptTokenIds.length === 0)
      throw new ConnectError(`sequences[${i}].prompt_token_ids is empty; at least one prompt token is needed`, Code.InvalidArgument);
    if (s.completionTokenIds.length === 0) throw new ConnectError(`sequences[${i}].completion_token_ids is empty`, Code.InvalidArgument);
  });
  const temperature = request.temperature === 0 ? 1 : request.temperature;
  if (!(temperature > 0) || !Number.isFinite(temperature)) {
    throw new ConnectError(`temperature ${request.temperature} must be a positive number (0 means 1)`, Code.InvalidArgument);
  }
  const learner = await host.learner();
  const sequences = request.sequences.map((s) => ({ promptIds: s.promptTokenIds, completionIds: s.completionTokenIds }));
  const scores = await learner.exclusive(() => learner.computeLogprobs(sequences, request.reference, temperature, ctx.signal));
  return create(ComputeLogprobsResponseSchema, {
    sequences: scores.logprobs.map((logprobs, i) => ({ logprobs, entropies: request.includeEntropy ? scores.entropies[i]! : [] })),
    adapterVersion: BigInt(scores.adapterVersion),
  });
}
