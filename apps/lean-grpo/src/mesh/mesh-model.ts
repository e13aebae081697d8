// The model of a whole mesh: the top-level `model:` of `serve all` and of `lean-grpo train`
// (one schema for both, so a key added here means the same in each): the embedded sampler samples from it and the learner trains adapters of it, so the
// two cannot disagree. A service's own section still wins (inference.embedded.model_dir,
// learner.model.dir), and an inference service proxying vLLM serves vLLM's model.
import { z } from "zod";
import { validateReasoningSettings } from "@lean-grpo/lm/reasoning-vocab";
import type { InferenceConfig } from "@lean-grpo/inference";
import type { LearnerConfig } from "@lean-grpo/learner";

export const MeshModelSchema = z
  .object({
    /** Hugging Face model directory; the default is the small model the repo ships, as for `train`. */
    dir: z.string().min(1).default("models/arith-tiny"),
    /**
     * The reasoning vocabulary (docs/concepts/reasoning-vocabulary.md): n_r rows, each a copy of
     * a standard token, for the model's thinking; 0 (the default) is off. Seed 003's key.
     */
    reasoning_vocab_size: z.number().int().min(0).default(0),
    /** [start, end] of the thinking block as text; tokenized with the model's tokenizer and checked at load. */
    reasoning_markers: z.tuple([z.string(), z.string()]).default(["<think>", "</think>"]),
    /** free: reasoning ids anywhere; gated: only inside the block; strict: inside it only reasoning ids and the end marker. */
    reasoning_mask: z.enum(["free", "gated", "strict"]).default("free"),
    /** A reasoning_token_map.json (or a directory holding one) giving any source ids; its length is n_r. */
    reasoning_map: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((model, ctx) => {
    try {
      validateReasoningSettings({
        size: model.reasoning_vocab_size,
        markers: model.reasoning_markers,
        mask: model.reasoning_mask,
        ...(model.reasoning_map !== undefined ? { mapFile: model.reasoning_map } : {}),
      });
    } catch (error) {
      ctx.addIssue({ code: "custom", message: (error as Error).message });
    }
  })
  .prefault({});

/** The `model.reasoning_*` keys every service that holds the model reads (inference's and learner's `model:`). */
export function reasoningKeys(model: MeshModel): Record<string, unknown> {
  return {
    reasoning_vocab_size: model.reasoning_vocab_size,
    reasoning_markers: model.reasoning_markers,
    reasoning_mask: model.reasoning_mask,
    ...(model.reasoning_map !== undefined ? { reasoning_map: model.reasoning_map } : {}),
  };
}

export type MeshModel = z.infer<typeof MeshModelSchema>;

/** Sets the model where the sections leave it unset; returns the services that now use `model.dir`. */
export function applyMeshModel(model: MeshModel, inference: InferenceConfig | undefined, learner: LearnerConfig | undefined): string[] {
  const using: string[] = [];
  // The reasoning vocabulary is the model's: where a section leaves it at its default, the mesh's applies.
  if (model.reasoning_vocab_size > 0 || model.reasoning_map !== undefined) {
    for (const section of [inference?.model, learner?.model]) {
      if (section && section.reasoning_vocab_size === 0 && section.reasoning_map === undefined)
        Object.assign(section, reasoningKeys(model));
    }
  } else if (model.reasoning_mask !== "free") {
    for (const section of [inference?.model, learner?.model]) if (section) section.reasoning_mask = model.reasoning_mask;
  }
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
