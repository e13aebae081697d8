// What one held-out evaluation records (a line of eval.jsonl): written by the training loop,
// read by the run outputs, the step records and the repair metrics, so it has a file of its own.
import type { AnswerFormStats } from "../../eval/answer-form.js";

/** One held-out evaluation: accuracy after `step` (0: before training), greedy unless `samples` is set. */
export interface EvalRecord {
  step: number;
  heldout_accuracy: number;
  solved: number;
  problems: number;
  seconds: number;
  /**
   * Completions per problem when the run samples its evaluation (eval.samples > 1); absent: one
   * greedy each. heldout_accuracy is then the mean pass@1, and `solved` counts completions.
   */
  samples?: number;
  /** pass@k by k ("1", "8", ...) when sampled. */
  pass_at?: Record<string, number>;
  /** How the greedy answers were written (math problems only): eval/answer-form.ts. */
  forms?: AnswerFormStats;
  /**
   * The first held-out problem's prompt as the sampler was given it (system turn and chat template
   * included); every problem of the set is framed the same way.
   */
  prompt?: { theorem_id: string; text: string };
  /** With repair turns (eval.max_turns > 1): accuracy after the first and the last attempt (repair-heldout.ts). */
  repair?: RepairEvalStats;
}

/** What repair turns add to a held-out evaluation (repair-heldout.ts; repair-metrics.ts reads it). */
export interface RepairEvalStats {
  max_turns: number;
  /** Problems right on the first attempt / after the last attempt, over all problems. */
  accuracy_turn1: number;
  accuracy_last_turn: number;
  /** Problems that got a second attempt (the first was wrong), and how many of those ended right. */
  second_attempts: number;
  repaired: number;
}
