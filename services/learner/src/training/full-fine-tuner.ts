// Supervised fine-tuning of every weight of a small model (the `lean-grpo sft --full` warm
// start): the same loss, micro-batching, clipping, AdamW and schedule as the Learner's SFT
// mode, with the model's own variables in place of a LoRA adapter.
//
// Why beside the Learner rather than inside it: RL and serving keep the base frozen and
// ship adapters (vLLM loads PEFT LoRA). A from-scratch warm start of a tiny model also has
// to move the embedding, the (tied) head and the norms, which LoRA cannot reach.
import * as tf from "@tensorflow/tfjs-core";
import { algorithmNamed } from "../algorithms/registry.js";
import { sftLoss } from "../algorithms/sft-loss.js";
import { completionLogprobs } from "@lean-grpo/lm";
import type { CausalLM } from "@lean-grpo/lm";
import { checkpointTensors } from "@lean-grpo/lm";
import { AdamW } from "../optimizer/adamw.js";
import { clipByGlobalNorm } from "../optimizer/global-norm-clipping.js";
import { learningRateMultiplier } from "../optimizer/learning-rate-schedule.js";
import { lossGradients } from "@lean-grpo/lm";
import type { OptimizerOptions } from "./learner.js";
import { microBatches } from "./micro-batches.js";
import { lossMask } from "./model-tokens.js";
import { prepareBatch } from "./prepared-batch.js";
import { validateExamples } from "./sample-validation.js";
import type { TrainingExample } from "./training-example.js";

export interface FullStepResult {
  /** Mean cross-entropy per completion token, before the update. */
  loss: number;
  gradNorm: number;
  learningRate: number;
}

export class FullFineTuner {
  private readonly optimizer: AdamW;
  private readonly settings = algorithmNamed("grpo").resolve({});
  private readonly keyOf: Map<string, string>;

  constructor(
    readonly model: CausalLM,
    private readonly options: { optimizer: OptimizerOptions; microBatchTokens: number },
  ) {
    if (model.weights.trainable.length === 0) {
      throw new Error("full fine-tuning needs a trainable model: load it with CausalLM.load(dir, { trainable: true })");
    }
    this.optimizer = new AdamW(options.optimizer);
    this.keyOf = new Map(model.weights.trainable.map((w) => [w.variable.name, w.name]));
  }

  get updates(): number {
    return this.optimizer.updates;
  }

  /** One optimizer update on the completion tokens of `examples`. */
  step(examples: readonly TrainingExample[], signal?: AbortSignal): FullStepResult {
    validateExamples(examples, this.model.config, { expectedSamples: 0, numGenerations: 0 });
    const batch = prepareBatch(examples, this.settings, "sft");
    const variables = this.model.weights.trainable.map((w) => w.variable);
    const sums = new Map<string, tf.Tensor>();
    let loss = 0;
    try {
      for (const rows of microBatches(batch.rows, this.options.microBatchTokens, { keepGroups: false })) {
        const { value, grads } = lossGradients(() => {
          const scores = completionLogprobs(
            this.model,
            rows.map((r) => ({ promptIds: r.example.promptIds, completionIds: r.example.completionIds })),
            {
              temperature: 1,
              adapter: null,
              signal,
            },
          );
          return sftLoss(scores.logprobs, lossMask(scores.mask, rows), batch.totals.tokens);
        }, variables);
        loss += value.dataSync()[0]!;
        value.dispose();
        for (const [name, grad] of Object.entries(grads)) {
          const key = this.keyOf.get(name)!;
          const sum = sums.get(key);
          sums.set(key, sum ? tf.add(sum, grad) : grad);
          if (sum) tf.dispose([sum, grad]);
        }
      }
      const clipped = clipByGlobalNorm(sums, this.options.optimizer.maxGradNorm);
      const learningRate =
        this.options.optimizer.learningRate * learningRateMultiplier(this.options.optimizer.schedule, this.optimizer.updates);
      const byKey = new Map(this.model.weights.trainable.map((w) => [w.name, w.variable]));
      this.optimizer.apply(
        [...clipped.grads].map(([key, grad]) => ({ key, variable: byKey.get(key)!, grad })),
        learningRate,
      );
      tf.dispose([...clipped.grads.values()]);
      return { loss, gradNorm: clipped.norm, learningRate };
    } finally {
      tf.dispose([...sums.values()]);
    }
  }

  /** The current weights in checkpoint layout, by checkpoint name (what model.safetensors holds). */
  weights(): Map<string, Float32Array> {
    return checkpointTensors(this.model.weights);
  }

  dispose(): void {
    this.optimizer.dispose();
  }
}
