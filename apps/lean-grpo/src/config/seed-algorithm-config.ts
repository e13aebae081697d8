// The seeds' algorithm_config knobs that the published algorithms do not have, or that
// cannot act, with what the seed meant and what to type here; and the check of a run's
// algorithm section before any service starts, with the learner's own rules
// (Algorithm.resolve, as its TrainStep applies them). Seed 001 documents these knobs
// (--algo-config, algorithm_config); the facts are in the review of its code.
import { AlgorithmConfigError, algorithmNamed } from "@lean-grpo/learner";
import { ConfigError } from "@lean-grpo/kit";

interface SeedKnob {
  /** What the seed's code does with it. */
  meant: string;
  /** What to type here instead (or why there is nothing to type). */
  here: string;
}

const PUBLISHED_DAPO = "the published DAPO (Yu et al. 2025, arXiv 2503.14476; --algorithm dapo here)";
const PUBLISHED_GSPO = "the published GSPO (Zheng et al. 2025, arXiv 2507.18071; --algorithm gspo here)";

/** By algorithm, then knob. Only consulted for knobs the algorithm here does not accept. */
export const SEED_ALGORITHM_KNOBS: Readonly<Record<string, Readonly<Record<string, SeedKnob>>>> = {
  grpo: {
    group_size: { meant: "rollouts per theorem (the group size)", here: "--num-generations G (training.num_generations)" },
    normalize_advantages: {
      meant: "divide the group-relative advantage by the group's std",
      here: '--algo-config \'{"scale_rewards": "group"}\' (the default) or "none" to leave it undivided',
    },
  },
  dapo: {
    population_size: {
      meant: "the size of a running reward history for 'population-based normalisation' (the seed's own code never reads it)",
      here: `${PUBLISHED_DAPO} normalises within each group and has no population; leave it out (lean-grpo algorithms lists dapo's knobs)`,
    },
    advantage_ema_decay: {
      meant: "an exponential moving average of reward mean and variance across groups, used in place of the group's",
      here: `${PUBLISHED_DAPO} uses each group's own statistics; leave it out`,
    },
    use_asymmetric_loss: {
      meant: "different clip bounds for positive and negative advantages",
      here: `that is DAPO's clip-higher, on by default: epsilon 0.2 and epsilon_high 0.28, e.g. --algo-config '{"epsilon_high": 0.28}'`,
    },
    positive_advantage_scale: {
      meant: "a factor on the loss of positive advantages",
      here: `${PUBLISHED_DAPO} scales neither side; the asymmetry is its clip range: epsilon / epsilon_high`,
    },
    negative_advantage_scale: {
      meant: "a factor on the loss of negative advantages (0.8 in the seed)",
      here: `${PUBLISHED_DAPO} scales neither side; the asymmetry is its clip range: epsilon / epsilon_high`,
    },
    sparse_reward_threshold: {
      meant: "a detector of 'sparse' reward streams that adds a bonus to rare successes",
      here: `${PUBLISHED_DAPO} answers sparse rewards with dynamic sampling: groups whose rewards all agree are dropped and refilled (training.dynamic_sampling, on for dapo)`,
    },
    use_reward_shaping: {
      meant: "a bonus for non-zero rewards when rewards are sparse",
      here: "dynamic sampling (training.dynamic_sampling) drops the all-zero groups instead; reward shaping is the reward's: reward.scorers",
    },
  },
  gspo: {
    consensus_weight: {
      meant: "the weight of a 'consensus' advantage computed from the rewards of the last groups (of other theorems)",
      here: `${PUBLISHED_GSPO} has no consensus term: its ratio is per sequence with group-normalised advantages; leave it out`,
    },
    use_consensus: {
      meant: "mix in the 'consensus' advantage of the last groups",
      here: `${PUBLISHED_GSPO} has no consensus term; leave it out`,
    },
    sync_frequency: {
      meant: "all-reduce gradients every N loss computations",
      here: "gradients are averaged every step by the data-parallel learner (services.learner.impl=torch with torchrun); there is nothing to set",
    },
    use_dynamic_groups: {
      meant: "grow or shrink the group size with the advantages' spread (the seed's rule only shrinks it, and never changes the rollouts)",
      here: "the group size is training.num_generations (--num-generations)",
    },
  },
  drgrpo: {
    advantage_norm_method: {
      meant: "standard, winsorized or rank normalisation of the advantages",
      here: 'Dr. GRPO (Liu et al. 2025, arXiv 2503.20783) does not divide by the std at all: scale_rewards "none", its default here',
    },
    use_asymmetric_clip: {
      meant: "separate clip bounds for positive and negative advantages",
      here: `--algo-config '{"epsilon": 0.2, "epsilon_high": 0.28}'`,
    },
    use_unbiased_kl: {
      meant: "the Schulman (k3) KL estimator",
      here: `Dr. GRPO has no KL term (beta 0); for one: --algo-config '{"beta": 0.04, "kl_estimator": "k3"}'`,
    },
    is_level: {
      meant: "importance ratio per token, per sequence or their geometric mean",
      here: "Dr. GRPO's ratio is per token (the default); a per-sequence ratio is --algorithm gspo",
    },
  },
};

/** kl_estimator with β = 0: the seeds' DrGRPO estimated KL, the published Dr. GRPO has none. */
const KL_WITHOUT_BETA: SeedKnob = {
  meant: "the shape of the KL estimate (seed: schulman = k3, mse = k2, abs)",
  here: `but beta is 0 for this algorithm, as published, so there is no KL term to shape: leave kl_estimator out, or add a KL term: --algo-config '{"beta": 0.04, "kl_estimator": "k3"}'`,
};

/**
 * Refuses, before any service starts, an algorithm section that the learner would refuse at
 * its first step: the seeds' knobs with what they meant and what to type here, then the
 * learner's own checks. `extra` is what the run adds (the async run's rollout correction).
 */
export function checkAlgorithmSection(name: string, config: Record<string, unknown>, extra: Record<string, unknown> = {}): void {
  let algorithm: ReturnType<typeof algorithmNamed>;
  try {
    algorithm = algorithmNamed(name);
  } catch (error) {
    throw configError("algorithm.name", (error as Error).message);
  }
  const known = new Set(algorithm.parameters.flatMap((p) => [p.name, ...(p.aliases ?? [])]));
  const seedKnobs = SEED_ALGORITHM_KNOBS[algorithm.name] ?? {};
  const explained = Object.keys(config).flatMap((key) => {
    const knob = known.has(key) ? undefined : (seedKnobs[key] ?? anyAlgorithmKnob(key));
    return knob ? [`${key} is the seed's "${knob.meant}"; ${knob.here}`] : [];
  });
  if (explained.length > 0) throw configError("algorithm.config", `${algorithm.name}: ${explained.join("; ")}`);
  try {
    algorithm.resolve({ ...extra, ...config });
  } catch (error) {
    if (!(error instanceof AlgorithmConfigError)) throw error;
    if ("kl_estimator" in config && /kl_estimator but beta is 0/.test(error.message)) {
      throw configError(
        "algorithm.config",
        `${algorithm.name}: kl_estimator ${JSON.stringify(config.kl_estimator)} is the seed's "${KL_WITHOUT_BETA.meant}", ${KL_WITHOUT_BETA.here}`,
      );
    }
    throw configError("algorithm.config", `${algorithm.name}: ${error.message}`);
  }
}

/** A seed knob of another algorithm given to this one (e.g. population_size to grpo). */
function anyAlgorithmKnob(key: string): SeedKnob | undefined {
  for (const [owner, knobs] of Object.entries(SEED_ALGORITHM_KNOBS)) {
    if (knobs[key]) return { meant: `${knobs[key].meant}, a knob of its ${owner}`, here: knobs[key].here };
  }
  return undefined;
}

function configError(path: string, message: string): ConfigError {
  return new ConfigError([{ path, source: "train config", message }]);
}
