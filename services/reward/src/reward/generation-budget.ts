// The reward of a request fitted to the generation budget its completions were sampled
// with (RewardSpec.max_completion_tokens). The reward service owns length shaping: the
// budget arrives as a number, and each scorer that shapes by length (`length`, DAPO's
// overlong penalty) derives from it the parameters nobody chose. A caller never needs to
// know the scorer's defaults or rewrite its parameters.
import { RewardSpecError, type ResolvedReward } from "./reward-spec.js";

/** `budget` 0: not given, the reward as resolved. Throws RewardSpecError naming a chosen parameter that cannot fit. */
export function fitToBudget(reward: ResolvedReward, budget: number): ResolvedReward {
  if (budget === 0) return reward;
  if (!Number.isInteger(budget) || budget < 0)
    throw new RewardSpecError("spec.max_completion_tokens", `${budget} is not accepted; expected a whole number of tokens (0: not given)`);
  let changed = false;
  const scorers = reward.scorers.map((resolved) => {
    const { scorer } = resolved;
    if (!scorer.derive) return resolved;
    const fitted = scorer.derive(resolved.params, resolved.chosen, budget);
    const problem = typeof fitted === "string" ? fitted : scorer.check?.(fitted);
    if (problem)
      throw new RewardSpecError(
        `reward ${JSON.stringify(reward.name)}: ${scorer.name}`,
        `${problem} (spec.max_completion_tokens ${budget})`,
      );
    changed = true;
    return { ...resolved, params: fitted as Record<string, unknown> };
  });
  return changed ? { ...reward, scorers } : reward;
}
