// Proofs checked against a theorem Lean could not read under its header (the
// verifier's `theorem_error`: an identifier or notation its imports do not provide, a
// context that does not elaborate). No proof of such a theorem can be PROVED, so its
// group teaches nothing and its zero is the dataset's fault, not the policy's: counted
// per group, summed per step as `verifier_theorem_errors`, and warned about with the
// theorem and Lean's error, which usually points at a missing `dataset.header`.
import type { Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { RewardResult } from "@lean-grpo/gen/leangrpo/v1/reward_pb";

export const THEOREM_ERRORS_METRIC = "verifier_theorem_errors";

export interface TheoremErrors {
  /** Completions whose verification blamed the theorem. */
  count: number;
  /** Lean's first such error ("line:col: message"), for the warning. */
  first?: string;
}

/** The group's theorem errors; undefined where nothing was verified (math tasks). */
export function countTheoremErrors(results: readonly RewardResult[]): TheoremErrors | undefined {
  if (!results.some((r) => r.verification !== undefined)) return undefined;
  const blamed = results.map((r) => r.verification?.theoremError ?? "").filter((error) => error !== "");
  return { count: blamed.length, ...(blamed[0] === undefined ? {} : { first: blamed[0] }) };
}

/** The warning for a group whose proofs were checked against a theorem that does not elaborate; undefined when none was. */
export function theoremErrorWarning(theorem: Theorem, errors: TheoremErrors | undefined): string | undefined {
  if (!errors?.first) return undefined;
  const header =
    theorem.header.trim() !== ""
      ? `its header (${oneLine(theorem.header)})`
      : theorem.imports.length > 0
        ? `its imports (${theorem.imports.join(", ")})`
        : "the verifier's default header (the record has none)";
  return (
    `theorem ${theorem.id} does not elaborate under ${header}: ${errors.first}; ` +
    `${errors.count} proof(s) of it scored as failures no proof could avoid. ` +
    "Set dataset.header (or the dataset's header field) to the imports its statements need, or fix the record"
  );
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/gu, " ").trim();
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}
