// GetStatus: model, backend, step, algorithm, LoRA settings, parameter counts and memory.
// Answers without a model too (model "" and step 0), so a mesh can see the learner is up.
import * as tf from "@tensorflow/tfjs-core";
import { create } from "@bufbuild/protobuf";
import { GetStatusResponseSchema, type GetStatusResponse } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import type { ModelWeights, ReasoningVocabulary } from "@lean-grpo/lm";
import type { LearnerHost } from "./learner-host.js";

function baseParameters(weights: ModelWeights): number {
  const seen = new Set<tf.Tensor>();
  const visit = (value: unknown): void => {
    if (value instanceof tf.Tensor) seen.add(value);
    else if (value && typeof value === "object") Object.values(value).forEach(visit);
  };
  visit(weights);
  return [...seen].reduce((n, t) => n + t.size, 0);
}

export function getStatus(host: LearnerHost): GetStatusResponse {
  const learner = host.current;
  // Before the model is loaded the tensor backend may still be initialising (asking
  // the engine then throws), and no tensors of ours exist yet.
  const memory = learner ? tf.memory() : { numTensors: 0, numBytes: 0 };
  const common = { tensors: BigInt(memory.numTensors), tensorBytes: BigInt(memory.numBytes), rssBytes: BigInt(process.memoryUsage().rss) };
  if (!learner) return create(GetStatusResponseSchema, { model: host.baseModel, ...common });
  const trainable = learner.policy.variables().reduce((n, v) => n + v.size, 0);
  const lora = learner.lora;
  return create(GetStatusResponseSchema, {
    model: host.baseModel,
    backend: learner.model.backendName,
    step: BigInt(learner.step),
    adapterVersion: BigInt(learner.adapterVersion),
    algorithm: learner.algorithm,
    lora: { rank: lora.rank, alpha: lora.alpha, targetModules: lora.targetModules, useRslora: lora.useRslora, dropout: lora.dropout },
    trainableParameters: BigInt(trainable),
    totalParameters: BigInt(baseParameters(learner.model.weights) + trainable),
    ...(learner.model.reasoning ? { reasoningVocabulary: reasoningVocabularyMessage(learner.model.reasoning) } : {}),
    ...common,
  });
}

/** The contract's ReasoningVocabulary of a model's vocabulary. */
export function reasoningVocabularyMessage(vocab: ReasoningVocabulary) {
  return {
    standardSize: vocab.standardSize,
    reasoningSize: vocab.reasoningSize,
    mapSha256: vocab.sha256,
    startMarker: vocab.markers.start,
    endMarker: vocab.markers.end,
    startMarkerIds: [...vocab.markers.startIds],
    endMarkerIds: [...vocab.markers.endIds],
  };
}
