// What a step records: its metrics (the learner's, the rollouts' rewards and pass rate,
// the batch's shape, the policy lag) and where its wall time went.
//
// Timings: total_s is the step's own wall time, from the moment the loop turns to it to
// the end of its adapter sync; the steps' total_s add up to the run's training time (held-out
// evaluation and checkpoints are outside them). With training.async part of a step's
// rollouts ran before that, hidden behind the previous step's training: generate_s,
// verify_s and score_s split only the time the step waited for its rollouts, and the hidden
// part is reported apart as rollout_overlap_s, not counted in total_s.
import type { EvalRecord } from "./eval-record.js";
import { repairHeldoutMetrics, repairStepMetrics } from "./repair-metrics.js";
import { REPLAY_REFUSALS_METRIC } from "./replay-refusals.js";
import { THEOREM_ERRORS_METRIC } from "./theorem-errors.js";
import { reasoningStepMetrics } from "./reasoning-metrics.js";
import type { StepRollouts } from "../rollout/step-rollouts.js";

export interface StepClock {
  /** performance.now() when the loop turned to this step. */
  stepStart: number;
  /** When its rollouts were in hand. */
  rolloutsReady: number;
  /** When its adapter sync began (training ended). */
  syncStart: number;
  end: number;
}

export type StepTimings = {
  generate_s: number;
  verify_s: number;
  score_s: number;
  train_s: number;
  sync_s: number;
  other_s: number;
  total_s: number;
  rollout_overlap_s: number;
};

export function stepTimings(rollouts: StepRollouts, clock: StepClock): StepTimings {
  const { rolled } = rollouts;
  const mean = (f: (g: StepRollouts["rolled"][number]) => number) => rolled.reduce((a, g) => a + f(g), 0) / Math.max(1, rolled.length);
  const generateS = mean((g) => g.generateS);
  const verifyS = mean((g) => g.verifyS);
  const scoreS = mean((g) => g.scoreS);
  const waitedS = Math.max(0, clock.rolloutsReady - Math.max(clock.stepStart, rollouts.startedAt)) / 1000;
  const overlapS = Math.max(0, Math.min(rollouts.endedAt, clock.stepStart) - rollouts.startedAt) / 1000;
  // Groups run concurrently: split the rollout wall time by each phase's share of it.
  const share = generateS + verifyS + scoreS > 0 ? waitedS / (generateS + verifyS + scoreS) : 0;
  const timings: StepTimings = {
    generate_s: generateS * share,
    verify_s: verifyS * share,
    score_s: scoreS * share,
    train_s: (clock.syncStart - clock.rolloutsReady) / 1000,
    sync_s: (clock.end - clock.syncStart) / 1000,
    other_s: 0,
    total_s: (clock.end - clock.stepStart) / 1000,
    rollout_overlap_s: overlapS,
  };
  timings.other_s = Math.max(
    0,
    timings.total_s - timings.generate_s - timings.verify_s - timings.score_s - timings.train_s - timings.sync_s,
  );
  return timings;
}

export interface StepOutcome {
  rollouts: StepRollouts;
  /** The learner's metrics; undefined when the step trained nothing. */
  trained: Record<string, number> | undefined;
  /** Adapter version the learner trained from: the sampler's, or one newer with training.async. */
  trainedFromVersion: number;
  samplesSent: number;
  tactic: boolean;
}

export function stepMetrics({ rollouts, trained, trainedFromVersion, samplesSent, tactic }: StepOutcome): Record<string, number> {
  const { rolled } = rollouts;
  const all = rolled.flatMap((g) => g.rewards);
  const solved = rolled.flatMap((g) => g.solved);
  const mean = all.reduce((a, b) => a + b, 0) / all.length;
  const metrics: Record<string, number> = {
    ...trained,
    reward_mean: mean,
    reward_std: Math.sqrt(all.reduce((a, r) => a + (r - mean) ** 2, 0) / Math.max(1, all.length - 1)),
    pass_rate: solved.filter(Boolean).length / Math.max(1, solved.length),
    groups_trained: rollouts.groups.length,
    trained: trained ? 1 : 0,
    groups_dropped: rollouts.dropped,
    // Policy versions (trained steps) between the adapter that sampled and the one trained.
    policy_lag: trainedFromVersion - rollouts.adapter.version,
  };
  if (rolled.some((g) => g.replayRefusals !== undefined)) {
    metrics[REPLAY_REFUSALS_METRIC] = rolled.reduce((n, g) => n + (g.replayRefusals ?? 0), 0);
  }
  if (rolled.some((g) => g.theoremErrors !== undefined)) {
    metrics[THEOREM_ERRORS_METRIC] = rolled.reduce((n, g) => n + (g.theoremErrors?.count ?? 0), 0);
  }
  Object.assign(metrics, repairStepMetrics(rolled));
  Object.assign(metrics, reasoningStepMetrics(rolled.flatMap((g) => g.samples.map((s) => s.completion))));
  if (tactic) {
    const steps = rolled.flatMap((g) => g.proofSteps ?? []);
    metrics.proof_steps_mean = steps.reduce((a, b) => a + b, 0) / Math.max(1, steps.length);
    metrics.samples_sent = samplesSent;
    metrics.proofs_not_started = rolled.reduce((n, g) => n + (g.unstarted ?? 0), 0);
    // Mesh failures, not the model's: each restart ran its trajectory again from StartProof.
    metrics.proof_sessions_restarted = rolled.reduce((n, g) => n + (g.sessionRestarts ?? 0), 0);
  }
  return metrics;
}

/** The held-out evaluation after a step, as the step's metrics: accuracy, and for math how the policy answers. */
export function heldoutMetrics(record: EvalRecord): Record<string, number> {
  const metrics: Record<string, number> = { heldout_accuracy: record.heldout_accuracy, ...repairHeldoutMetrics(record) };
  for (const [k, value] of Object.entries(record.pass_at ?? {})) metrics[`heldout_pass_at_${k}`] = value;
  for (const [key, value] of Object.entries(record.forms ?? {})) {
    if (key !== "completions" && typeof value === "number") metrics[`heldout_${key}`] = value;
  }
  return metrics;
}
