// The checked source of a whole-file proof: the dataset's context, the file's
// auxiliary declarations, then the dataset's own statement and the body the file gave
// its theorem. The file's statement must be the dataset's token for token
// (@lean-grpo/lean's splitWholeFile, which also screens the auxiliaries as a context
// and the body as a proof); Lean is then sent the trusted statement, not the file's
// copy, and the kernel replay compares the elaborated type with the challenge's in a
// fresh environment.
import { splitWholeFile, type TokenTable } from "@lean-grpo/lean";
import { theoremSpans, type CheckedSource, type Screened } from "./checked-source.js";
import { endPosition } from "./source-position.js";
import type { TheoremTarget } from "./theorem-target.js";

export function prepareWholeFile(target: TheoremTarget, file: string, table: TokenTable): Screened<CheckedSource> {
  const reading = splitWholeFile(file, target, table);
  if (!reading.ok) return { ok: false, reason: `whole-file proof refused: ${reading.reason}` };
  const { auxiliaries, body } = reading.value;
  const context = target.context === "" ? "" : `${target.context}\n`;
  const beforeStatement = `${context}${auxiliaries === "" ? "" : `${auxiliaries}\n\n`}`;
  const head = `${beforeStatement}${target.statement} := `;
  return { ok: true, value: { text: head + body, proofStart: endPosition(head), theorem: theoremSpans(context, beforeStatement, target) } };
}
