// A validated batch made ready for the loss: advantages, the groups DAPO's dynamic sampling
// drops, which rows stay in the loss, and the whole-batch denominators.
import { groupAdvantages } from "../algorithms/advantages.js";
import { livePreferencePairs } from "../algorithms/dpo-term.js";
import type { LossSettings } from "../algorithms/loss-settings.js";
import { modelTokenCount } from "./model-tokens.js";
import type { TrainingExample } from "./training-example.js";

export type TrainingModeName = "rl" | "sft";

export interface PreparedRow {
  example: TrainingExample;
  /** Index in the request. */
  index: number;
  advantage: number;
  /** False when the row is masked out of the loss (truncated, with mask_truncated_completions). */
  live: boolean;
}

export interface PreparedBatch {
  mode: TrainingModeName;
  /** Rows that take part in the step (after dynamic sampling), in request order. */
  rows: PreparedRow[];
  /** Advantage of every sample of the request (0 for SFT). */
  advantages: number[];
  zeroStdGroups: string[];
  fracRewardZeroStd: number;
  /** Token counts are of the model's tokens (completion_mask true), the ones trained on. */
  totals: { sequences: number; liveTokens: number; tokens: number; pairs: number };
}

export function prepareBatch(examples: readonly TrainingExample[], settings: LossSettings, mode: TrainingModeName): PreparedBatch {
  const rewards = examples.map((e) => e.reward);
  const groups = examples.map((e) => e.groupId);
  const { advantages, zeroStdGroups, fracRewardZeroStd } =
    mode === "rl"
      ? groupAdvantages(rewards, groups, settings.scaleRewards, settings.advantageEpsilon, settings.advantageEstimator)
      : { advantages: rewards.map(() => 0), zeroStdGroups: [], fracRewardZeroStd: 0 };
  const dropped = new Set(mode === "rl" && settings.dynamicSampling ? zeroStdGroups : []);
  const rows: PreparedRow[] = [];
  examples.forEach((example, index) => {
    if (dropped.has(example.groupId)) return;
    const live = mode === "sft" || !(settings.maskTruncatedCompletions && example.truncated);
    rows.push({ example, index, advantage: advantages[index]!, live });
  });
  const pairs = mode === "rl" && settings.dpoCoef !== 0 ? livePreferencePairs(rows).length : 0;
  return {
    mode,
    rows,
    advantages,
    zeroStdGroups,
    fracRewardZeroStd,
    totals: {
      sequences: rows.length,
      liveTokens: rows.reduce((n, r) => n + (r.live ? modelTokenCount(r.example) : 0), 0),
      tokens: rows.reduce((n, r) => n + modelTokenCount(r.example), 0),
      pairs,
    },
  };
}
