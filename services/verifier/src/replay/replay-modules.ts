// What the kernel replay checks, as the chosen checker (leanprover/comparator) takes
// it: two modules in a Lake project and a config. The challenge is the dataset's
// header, context and statement with `sorry`, written by the service alone; the
// solution is the same header and context with the exact source the REPL accepted.
// Comparator builds each in a sandbox, exports the theorem's closure with
// lean4export, checks that the solution's statement is the challenge's, recomputes
// the axioms, and replays the solution's constants through a fresh kernel.
import { STANDARD_AXIOMS } from "../verdict/axioms.js";
import type { CheckedSource } from "../verdict/proof-source.js";
import type { TheoremTarget } from "../verdict/theorem-target.js";

export const CHALLENGE_MODULE = "Challenge";
export const SOLUTION_MODULE = "Solution";

/** The config file comparator reads (its README: challenge_module, solution_module, theorem_names, permitted_axioms). */
export interface ComparatorConfig {
  challenge_module: string;
  solution_module: string;
  theorem_names: string[];
  permitted_axioms: string[];
}

export interface ReplayModules {
  challenge: string;
  solution: string;
  config: ComparatorConfig;
}

export function replayModules(
  target: TheoremTarget,
  source: CheckedSource,
  permittedAxioms: readonly string[] = [...STANDARD_AXIOMS],
): ReplayModules {
  const header = target.header.trim() === "" ? "" : `${target.header.trim()}\n\n`;
  const context = target.context.trim() === "" ? "" : `${target.context}\n\n`;
  return {
    challenge: `${header}${context}${target.statement} := by\n  sorry\n`,
    solution: `${header}${source.text}\n`,
    config: {
      challenge_module: CHALLENGE_MODULE,
      solution_module: SOLUTION_MODULE,
      theorem_names: [target.fullName],
      permitted_axioms: [...permittedAxioms],
    },
  };
}
