// The range of rewards a composite can give solved and unsolved completions of
// a task kind: what keeps a reward from being hackable at the top level is that
// the best unsolved completion stays below the worst solved one.
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { ResolvedReward } from "./reward-spec.js";
import type { ScoredTask, ValueRange } from "./scorer.js";

export interface RewardBounds {
  solved: ValueRange;
  unsolved: ValueRange;
}

/** Undefined when no scorer of the reward applies to the task. Weights are >= 0. */
export function rewardBounds(reward: ResolvedReward, task: ScoredTask): RewardBounds | undefined {
  const applicable = reward.scorers.filter((s) => s.scorer.tasks.includes(task));
  if (applicable.length === 0) return undefined;
  const sum = (pick: (b: RewardBounds) => ValueRange): ValueRange =>
    applicable.reduce<[number, number]>(
      (acc, s) => {
        const [low, high] = pick(s.scorer.bounds(s.params));
        return [acc[0] + s.weight * low, acc[1] + s.weight * high];
      },
      [0, 0],
    );
  return { solved: sum((b) => b.solved), unsolved: sum((b) => b.unsolved) };
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
const range = ([low, high]: ValueRange) => `[${round(low)}, ${round(high)}]`;

/** "Lean: proved [0.5, 1.1], not proved [-0.5, 0.4]; math: ..." for listings. */
export function describeBounds(reward: ResolvedReward): string {
  const parts: string[] = [];
  const lean = rewardBounds(reward, TaskKind.LEAN_PROOF);
  if (lean) parts.push(`Lean: proved ${range(lean.solved)}, not proved ${range(lean.unsolved)}`);
  const math = rewardBounds(reward, TaskKind.MATH_ANSWER);
  if (math) parts.push(`math: right ${range(math.solved)}, not right ${range(math.unsolved)}`);
  return parts.join("; ");
}
