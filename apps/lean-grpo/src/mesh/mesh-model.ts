// The model of a whole mesh: the top-level `model:` of `serve all` and of `lean-grpo train`
// (one schema for both, so a key added here means the same in each): the embedded sampler samples from it and the learner trains adapters of it, so the
// two cannot disagree. A service's own section still wins (inference.embedded.model_dir,
// learner.model.dir), and an inference service proxying vLLM serves vLLM's model.
import { z } from "zod";
import type { InferenceConfig } from "@lean-grpo/inference";
import type { LearnerConfig } from "@lean-grpo/learner";

export const MeshModelSchema = z
  .object({
    /** Hugging Face model directory; the default is the small model the repo ships, as for `train`. */
    dir: z.string().min(1).default("models/arith-tiny"),
  })
  .strict()
  .prefault({});

export type MeshModel = z.infer<typeof MeshModelSchema>;

/** Sets the model where the sections leave it unset; returns the services that now use `model.dir`. */
export function applyMeshModel(model: MeshModel, inference: InferenceConfig | undefined, learner: LearnerConfig | undefined): string[] {
  const using: string[] = [];
  if (inference) {
    const proxiesVllm = inference.backend === "vllm" || (inference.backend === "auto" && inference.vllm.url !== undefined);
    if (!proxiesVllm && inference.embedded.model_dir === undefined) inference.embedded.model_dir = model.dir;
    if (inference.embedded.model_dir === model.dir && !proxiesVllm) using.push("inference");
  }
  if (learner) {
    learner.model.dir ??= model.dir;
    if (learner.model.dir === model.dir) using.push("learner");
  }
  return using;
}
