// The charts the page draws and how each reads: title, unit, the metrics it plots, whether
// values are fractions shown as percent, and whether a log scale helps (values that span
// orders of magnitude: KL, grad norm, learning rate).
export interface ChartSpec {
  id: string;
  title: string;
  /** The y axis label. */
  unit: string;
  /** Metric keys (StepEvent.metrics), or "time.<field>" for StepTimings; the first is the one compared across runs. */
  keys: string[];
  labels: string[];
  percent?: boolean;
  /** Offer a log scale (used only when every value is positive). */
  log?: boolean;
  /** Drawn from GetRun's held-out evaluations (step 0 included). */
  heldout?: boolean;
}

export const CHARTS: readonly ChartSpec[] = [
  { id: "reward", title: "Reward", unit: "reward (batch mean)", keys: ["reward_mean"], labels: ["reward"] },
  { id: "pass", title: "Pass rate", unit: "% solved", keys: ["pass_rate"], labels: ["pass rate"], percent: true },
  {
    id: "heldout",
    title: "Held-out accuracy",
    unit: "% solved, greedy",
    keys: ["heldout_accuracy"],
    labels: ["held-out"],
    percent: true,
    heldout: true,
  },
  { id: "loss", title: "Loss", unit: "policy loss", keys: ["loss"], labels: ["loss"] },
  { id: "kl", title: "KL to the reference", unit: "nats per token", keys: ["kl"], labels: ["KL"], log: true },
  { id: "entropy", title: "Entropy", unit: "nats per token", keys: ["entropy"], labels: ["entropy"] },
  {
    id: "length",
    title: "Completion length",
    unit: "tokens",
    keys: ["completion_length_mean", "completion_length_min", "completion_length_max"],
    labels: ["mean", "min", "max"],
  },
  {
    id: "clip",
    title: "Clip ratios",
    unit: "% of tokens",
    keys: ["clip_ratio_region_mean", "clip_ratio_low_mean", "clip_ratio_high_mean", "completion_clipped_ratio"],
    labels: ["clipped (region)", "low", "high", "truncated (% of completions)"],
    percent: true,
  },
  // The sampler against the learner (verl's rollout_corr/* names, rollout-correction.ts): how far
  // apart they are, how heavy-tailed the importance weights, and what the correction did.
  {
    id: "mismatch",
    title: "Sampler–learner mismatch",
    unit: "nats per token",
    keys: ["rollout_corr_k3_kl", "rollout_corr_kl", "sampling_logp_difference_mean", "adapter_check_logp_difference"],
    labels: ["k3 KL", "KL", "mean |Δ logp|", "adapter check |Δ|"],
    log: true,
  },
  {
    id: "divergence",
    title: "Importance-weight spread",
    unit: "χ² (E[ρ²] − 1), perplexity ratio",
    keys: ["rollout_corr_chi2_token", "rollout_corr_chi2_seq", "rollout_corr_ppl_ratio"],
    labels: ["χ² token", "χ² sequence", "ppl ratio"],
  },
  {
    id: "rollout-correction",
    title: "Rollout correction",
    unit: "% (ESS of the weights; % of tokens)",
    keys: [
      "rollout_corr_rollout_is_eff_sample_size",
      "rollout_corr_rollout_rs_masked_fraction",
      "rollout_corr_rollout_is_ratio_fraction_high",
      "rollout_corr_rollout_is_ratio_fraction_low",
    ],
    labels: ["effective sample size", "masked", "above cap", "below min"],
    percent: true,
  },
  // A reasoning vocabulary (docs/concepts/reasoning-vocabulary.md): where the model uses its
  // reasoning ids, and how it uses the thinking block. Empty (hidden) for runs without one.
  {
    id: "reasoning",
    title: "Reasoning tokens",
    unit: "% reasoning ids",
    keys: ["reasoning_share_inside", "reasoning_share_outside", "reasoning_share"],
    labels: ["inside the block", "outside it", "all"],
    percent: true,
  },
  {
    id: "reasoning-block",
    title: "Thinking block",
    unit: "% of completions",
    keys: ["reasoning_block_closed", "reasoning_block_opened"],
    labels: ["closed", "opened"],
    percent: true,
  },
  { id: "reasoning-length", title: "Thinking block length", unit: "tokens", keys: ["reasoning_block_tokens"], labels: ["block"] },
  { id: "grad", title: "Gradient norm", unit: "L2 norm", keys: ["grad_norm"], labels: ["grad norm"], log: true },
  { id: "lr", title: "Learning rate", unit: "per optimizer step", keys: ["learning_rate"], labels: ["lr"], log: true },
  {
    id: "time",
    title: "Step time",
    unit: "seconds",
    keys: [
      "time.totalS",
      "time.generateS",
      "time.verifyS",
      "time.scoreS",
      "time.trainS",
      "time.syncS",
      "time.otherS",
      "time.rolloutOverlapS",
    ],
    labels: ["total", "generate", "verify", "score", "train", "sync", "other", "generate, hidden behind training (not in total)"],
  },
];

/** The phases of a step, as StepTimings names them, for the time split bar. */
export const TIME_PHASES = [
  ["generateS", "generate"],
  ["verifyS", "verify"],
  ["scoreS", "score"],
  ["trainS", "train"],
  ["syncS", "sync"],
  ["otherS", "other"],
] as const;

/** Colors of series and runs: distinct, readable on white, in order. */
export const PALETTE = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563"];
