// Learning-rate schedules with linear warm-up, as transformers'
// get_{constant,linear,cosine}_schedule_with_warmup define them: the multiplier of update
// `step` (0-based) is step / warmup during warm-up, then 1, a linear decay to 0 at
// `total_steps`, or half a cosine to 0.

export const LR_SCHEDULES = ["constant", "linear", "cosine"] as const;
export type LrScheduleName = (typeof LR_SCHEDULES)[number];

export interface LrSchedule {
  name: LrScheduleName;
  /** Updates of linear warm-up from 0. */
  warmupSteps: number;
  /** Updates at which linear and cosine reach 0 (ignored by constant). */
  totalSteps: number;
}

export function learningRateMultiplier(schedule: LrSchedule, step: number): number {
  const { warmupSteps, totalSteps } = schedule;
  if (step < warmupSteps) return step / Math.max(1, warmupSteps);
  if (schedule.name === "constant") return 1;
  const progress = (step - warmupSteps) / Math.max(1, totalSteps - warmupSteps);
  if (schedule.name === "linear") return Math.max(0, 1 - progress);
  return Math.max(0, 0.5 * (1 + Math.cos(Math.PI * progress)));
}
