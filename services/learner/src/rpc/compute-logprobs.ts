// ComputeLogprobs: per-token logprobs (and entropies) under the current policy or the reference.
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  ComputeLogprobsResponseSchema,
  type ComputeLogprobsRequest,
  type ComputeLogprobsResponse,
} from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { resolveSampling } from "../training/step-sampling.js";
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
  if (!(request.temperature >= 0) || !Number.isFinite(request.temperature)) {
    throw new ConnectError(
      `temperature ${request.temperature} must be a positive number (0: not given; the field is deprecated, set sampling instead)`,
      Code.InvalidArgument,
    );
  }
  // The deprecated `temperature` is read in resolveSampling, with `sampling`.
  const legacy = request.temperature !== 0 ? { temperature: request.temperature, field: "temperature" } : undefined;
  const distribution = resolveSampling(request.sampling, legacy, "sampling");
  const learner = await host.learner();
  const sequences = request.sequences.map((s) => ({ promptIds: s.promptTokenIds, completionIds: s.completionTokenIds }));
  const scores = await learner.exclusive(() => learner.computeLogprobs(sequences, request.reference, distribution, ctx.signal));
  return create(ComputeLogprobsResponseSchema, {
    sequences: scores.logprobs.map((logprobs, i) => ({ logprobs, entropies: request.includeEntropy ? scores.entropies[i]! : [] })),
    adapterVersion: BigInt(scores.adapterVersion),
  });
}
