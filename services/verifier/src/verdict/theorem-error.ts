// An error that no proof can fix: Lean refused the dataset's own text — the context, or
// the statement under the header (an identifier the header's imports do not declare,
// a notation they do not define). The verdict stays ERROR (no proof is PROVED against
// a theorem Lean cannot read), but the response says so in `theorem_error`, so that a
// run or a verify file tells a broken dataset (often a missing `dataset.header`) from a
// policy that writes bad proofs.
import type { ReplMessage } from "../repl/protocol.js";
import type { CheckedSource } from "./checked-source.js";
import { isUnsolvedGoals } from "./progress.js";
import { comparePositions } from "./source-position.js";

/** "line:col: message" (its first line) of the first such error; undefined when the theorem's own text elaborated. */
export function theoremErrorIn(messages: readonly ReplMessage[], source: CheckedSource): string | undefined {
  const { contextEnd, signatureStart, statementFollowsModelText } = source.theorem;
  const blamed = messages.filter((message) => {
    // Unsolved goals are the proof's; a kernel error is reported at the declaration, whatever its cause.
    if (message.severity !== "error" || isUnsolvedGoals(message) || message.data.startsWith("(kernel)")) return false;
    if (comparePositions(message.pos, contextEnd) < 0) return true;
    // In the signature, after the declared name (an error at the keyword or the name can be about the whole
    // declaration, its proof included), before the proof. Behind a whole file's auxiliaries the statement reads in
    // the model's environment: its errors may be the model's.
    return (
      !statementFollowsModelText &&
      comparePositions(message.pos, signatureStart) > 0 &&
      comparePositions(message.pos, source.proofStart) < 0
    );
  });
  if (blamed.length === 0) return undefined;
  const first = blamed.reduce((a, b) => (comparePositions(b.pos, a.pos) < 0 ? b : a));
  return `${first.pos.line}:${first.pos.column}: ${first.data.split("\n")[0]}`;
}
