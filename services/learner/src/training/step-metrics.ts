// A step's metrics, named as the reference trainers log them (grpo-math §12; TRL's names
// with "/" written as "_"). Token means are global (Σ over tokens / token count), not means
// of per-micro-batch means. Every token count and length is of the model's tokens (the loss
// mask's true entries, model-tokens.ts): what was trained on, not what the environment inserted.
import { besselStd } from "../algorithms/advantages.js";
import type { LossSettings } from "../algorithms/loss-settings.js";
import { rolloutCorrectionMetrics } from "../algorithms/rollout-correction.js";
import { atModelTokens, modelTokenCount } from "./model-tokens.js";
import type { PreparedBatch } from "./prepared-batch.js";
import type { StepGradients } from "./step-gradients.js";
import type { TrainingExample } from "./training-example.js";

export interface UpdateRecord {
  gradients: StepGradients;
  gradNorm: number;
  learningRate: number;
}

export function stepMetrics(
  examples: readonly TrainingExample[],
  batch: PreparedBatch,
  updates: readonly UpdateRecord[],
  old: readonly (readonly number[])[] | null,
  seconds: number,
  settings: LossSettings,
): Record<string, number> {
  const rewards = examples.map((e) => e.reward);
  const lengths = examples.map(modelTokenCount);
  const n = updates.length;
  const mean = (f: (u: UpdateRecord) => number) => updates.reduce((s, u) => s + f(u), 0) / Math.max(1, n);
  const liveTokens = Math.max(1, batch.totals.liveTokens);
  const processed = batch.rows.reduce((s, r) => s + r.example.promptIds.length + r.example.completionIds.length, 0) * n;
  const metrics: Record<string, number> = {
    loss: mean((u) => u.gradients.loss),
    reward_mean: rewards.reduce((a, b) => a + b, 0) / rewards.length,
    reward_std: rewards.length > 1 ? besselStd(rewards) : 0,
    frac_reward_zero_std: batch.fracRewardZeroStd,
    entropy: mean((u) => u.gradients.entropy) / Math.max(1, batch.totals.tokens),
    completion_length_mean: lengths.reduce((a, b) => a + b, 0) / lengths.length,
    completion_length_min: Math.min(...lengths),
    completion_length_max: Math.max(...lengths),
    completion_clipped_ratio: examples.filter((e) => e.truncated).length / examples.length,
    grad_norm: mean((u) => u.gradNorm),
    learning_rate: updates.at(-1)?.learningRate ?? 0,
    tokens_per_second: seconds > 0 ? processed / seconds : 0,
    num_tokens: processed,
    num_samples_trained: batch.rows.length,
    micro_batches: updates[0]?.gradients.microBatches ?? 0,
    optimizer_updates: n,
  };
  if (batch.mode === "rl") {
    metrics.clip_ratio_low_mean = mean((u) => u.gradients.clipLow) / liveTokens;
    metrics.clip_ratio_high_mean = mean((u) => u.gradients.clipHigh) / liveTokens;
    metrics.clip_ratio_region_mean = mean((u) => u.gradients.clipRegion) / liveTokens;
    const kl = updates.map((u) => u.gradients.kl);
    if (kl.every((k) => k !== null)) metrics.kl = mean((u) => u.gradients.kl!) / liveTokens;
    const difference = samplerDifference(batch, old);
    if (difference !== null) metrics.sampling_logp_difference_mean = difference;
    if (old) {
      const sampled = batch.rows.flatMap((row, i) =>
        row.example.samplerLogprobs
          ? [{ old: atModelTokens(row.example, old[i]!), sampler: atModelTokens(row.example, row.example.samplerLogprobs) }]
          : [],
      );
      Object.assign(metrics, rolloutCorrectionMetrics(settings, sampled));
    }
  }
  return metrics;
}

/** Mean |old − sampler| over the model's tokens whose sampler logprob is known: the engine mismatch. */
function samplerDifference(batch: PreparedBatch, old: readonly (readonly number[])[] | null): number | null {
  if (!old) return null;
  let sum = 0;
  let count = 0;
  batch.rows.forEach((row, i) => {
    if (!row.example.samplerLogprobs) return;
    const sampler = atModelTokens(row.example, row.example.samplerLogprobs);
    const before = atModelTokens(row.example, old[i]!);
    sampler.forEach((s, t) => {
      sum += Math.abs(before[t]! - s);
      count += 1;
    });
  });
  return count > 0 ? sum / count : null;
}
