// TrainStep: a client stream of a header and samples. The whole stream is read and checked
// before the step runs, so a bad sample anywhere changes nothing.
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  TrainingMode,
  TrainStepResponseSchema,
  type TrainStepHeader,
  type TrainStepRequest,
  type TrainStepResponse,
} from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import type { TrainingExample } from "../training/training-example.js";
import type { LearnerHost } from "./learner-host.js";

export async function trainStep(
  host: LearnerHost,
  requests: AsyncIterable<TrainStepRequest>,
  ctx: HandlerContext,
): Promise<TrainStepResponse> {
  let header: TrainStepHeader | null = null;
  const examples: TrainingExample[] = [];
  for await (const message of requests) {
    const part = message.part;
    if (part.case === "header") {
      if (header) throw new ConnectError("TrainStep: a second header arrived; send exactly one header, first", Code.InvalidArgument);
      header = part.value;
    } else if (part.case === "sample") {
      if (!header) throw new ConnectError("TrainStep: the first message must be the header; a sample came first", Code.InvalidArgument);
      if (examples.length >= host.config.max_samples_per_step) {
        throw new ConnectError(
          `TrainStep: more than ${host.config.max_samples_per_step} samples (max_samples_per_step); split the batch`,
          Code.ResourceExhausted,
        );
      }
      const s = part.value;
      examples.push({
        sampleId: s.sampleId || `#${examples.length}`,
        groupId: s.groupId,
        promptIds: s.promptTokenIds,
        completionIds: s.completionTokenIds,
        samplerLogprobs: s.samplerLogprobs.length > 0 ? s.samplerLogprobs : null,
        reward: s.reward,
        truncated: s.truncated,
        completionMask: s.completionMask.length > 0 ? s.completionMask : null,
      });
    } else {
      throw new ConnectError(
        `TrainStep: message ${examples.length + (header ? 1 : 0)} has neither header nor sample`,
        Code.InvalidArgument,
      );
    }
  }
  if (!header) throw new ConnectError("TrainStep: the stream ended without a header", Code.InvalidArgument);
  const request = header;
  const mode = request.mode === TrainingMode.SFT ? "sft" : "rl";
  const learner = await host.learner();
  const result = await learner.exclusive(() =>
    learner.trainStep({
      algorithm: request.algorithm,
      algorithmConfig: request.algorithmConfig ?? {},
      mode,
      examples,
      step: Number(request.step),
      expectedSamples: request.expectedSamples,
      numGenerations: request.numGenerations,
      sampling: request.sampling,
      signal: ctx.signal,
    }),
  );
  return create(TrainStepResponseSchema, {
    step: BigInt(result.step),
    adapterVersion: BigInt(result.adapterVersion),
    adapterName: result.adapterName,
    metrics: result.metrics,
    zeroStdGroups: result.zeroStdGroups,
  });
}
