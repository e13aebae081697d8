// Every scorer the service knows, in the order rewards list their components.
// Adding a scorer is one file in scorers/ and one line here.
import { difficultyScorer } from "../scorers/difficulty.js";
import { domainScorer } from "../scorers/domain.js";
import { efficiencyScorer } from "../scorers/efficiency.js";
import { formatScorer } from "../scorers/format.js";
import { lengthScorer } from "../scorers/length.js";
import { leanProofScorer } from "../scorers/lean-proof.js";
import { mathAnswerScorer } from "../scorers/math-answer.js";
import type { Scorer } from "./scorer.js";

export const SCORERS: readonly Scorer[] = [
  leanProofScorer,
  mathAnswerScorer,
  formatScorer,
  lengthScorer,
  efficiencyScorer,
  difficultyScorer,
  domainScorer,
];

export const SCORER_NAMES = SCORERS.map((scorer) => scorer.name);

export function scorerNamed(name: string): Scorer | undefined {
  return SCORERS.find((scorer) => scorer.name === name);
}
