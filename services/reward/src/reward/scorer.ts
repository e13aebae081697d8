// What a scorer is: a named, parameterised function from what is known about one
// completion (and, for group-level scorers, its group) to a value, plus the
// range of values it can give so that presets can be checked for reward hacking.
import type { Completion, Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { VerifyResponse } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { ExtractedProof } from "../lean/extract-proof.js";
import type { MathVerdict } from "../math/math-verdict.js";
import type { ParamTable, ParamValues } from "./params.js";

export type ScoredTask = TaskKind.LEAN_PROOF | TaskKind.MATH_ANSWER;

interface EvidenceBase {
  /** How error messages name this completion: "completion" or "completions[3]". */
  field: string;
  theorem: Theorem;
  completion: Completion;
  /** No non-whitespace text: it gets every scorer's minimum. */
  empty: boolean;
  /** Lean: the verifier said PROVED. Math: the final answer is equivalent to the ground truth. */
  solved: boolean;
}

export interface LeanEvidence extends EvidenceBase {
  task: TaskKind.LEAN_PROOF;
  /** The proof taken from the completion; undefined when it holds none. */
  proof?: ExtractedProof;
  /** Passed in or run by the service; undefined when there was no proof to verify. */
  verification?: VerifyResponse;
}

export interface MathEvidence extends EvidenceBase {
  task: TaskKind.MATH_ANSWER;
  math: MathVerdict;
}

/** Everything the service knows about one completion before the scorers run. */
export type Evidence = LeanEvidence | MathEvidence;

/** What group-level scorers see of the whole group (ScoreGroup only). */
export interface GroupEvidence {
  size: number;
  solved: number;
}

export interface ScorerOutput {
  value: number;
  /** Why, in a few words. */
  detail: string;
}

/** [lowest, highest] value. */
export type ValueRange = readonly [number, number];

export interface Scorer<P extends ParamTable = ParamTable> {
  readonly name: string;
  readonly description: string;
  /** The tasks it scores; on other tasks it is left out of the reward. */
  readonly tasks: readonly ScoredTask[];
  /** Needs the whole group (ScoreGroup) for some settings. */
  readonly groupLevel: boolean;
  readonly params: P;
  /** A rule across parameters; returns what is wrong, naming the parameters, or undefined. */
  check?(params: ParamValues<P>): string | undefined;
  /**
   * Parameters derived where nobody chose them (`chosen`: the keys a preset, the server
   * config or the request set), from the others and from the generation budget
   * (RewardSpec.max_completion_tokens; undefined when not given). Returns the parameters to
   * use, or what is wrong with a chosen one, naming it.
   */
  derive?(params: ParamValues<P>, chosen: ReadonlySet<string>, budget: number | undefined): ParamValues<P> | string;
  /** The values it can give a completion that solved the task, and one that did not. */
  bounds(params: ParamValues<P>): { solved: ValueRange; unsolved: ValueRange };
  /** Throws ConnectError INVALID_ARGUMENT when the completion lacks what it needs. */
  score(evidence: Evidence, params: ParamValues<P>, group: GroupEvidence | undefined): ScorerOutput;
}

/** Keeps a scorer's parameter types inferred from its table. */
export function defineScorer<P extends ParamTable>(scorer: Scorer<P>): Scorer<P> {
  return scorer;
}

/** For scorers that only score Lean tasks (the composer never hands them another). */
export function leanEvidence(evidence: Evidence): LeanEvidence {
  if (evidence.task !== TaskKind.LEAN_PROOF) throw new Error("a Lean-only scorer was given a math task");
  return evidence;
}

export function mathEvidence(evidence: Evidence): MathEvidence {
  if (evidence.task !== TaskKind.MATH_ANSWER) throw new Error("a math-only scorer was given a Lean task");
  return evidence;
}

export const TASK_NAMES: Record<ScoredTask, string> = {
  [TaskKind.LEAN_PROOF]: "Lean proof",
  [TaskKind.MATH_ANSWER]: "math answer",
};
