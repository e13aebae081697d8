// What a model's proof is: a body that follows the dataset's statement (`by simp`), or
// a whole Lean file as DeepSeek-Prover-V2, Goedel-Prover-V2 and Kimina-Prover write
// it (auxiliary declarations, then the theorem). `auto` decides by the text's first
// code token, where the two cannot be confused: a body never begins with a command
// (no tactic or term begins with `theorem`, `lemma`, `def`, `import`, `@[`...), and a
// file always does.
import { blankComments } from "../blank.js";
import { BUILTIN_TABLE } from "../builtin-tokens.js";
import { commandStartedBy, keywordOf } from "../commands.js";
import { codeTokens } from "../declarations.js";
import type { TokenTable } from "../token-table.js";

export type ProofFormat = "body" | "whole_file" | "auto";

export const PROOF_FORMATS: readonly ProofFormat[] = ["body", "whole_file", "auto"];

/** Whether `proof` is read as a whole file under `format` (`auto`: it begins with a command). */
export function readsAsWholeFile(proof: string, format: ProofFormat, table: TokenTable = BUILTIN_TABLE): boolean {
  if (format !== "auto") return format === "whole_file";
  const first = codeTokens(blankComments(proof, { tokens: table }), { tokens: table })[0];
  if (first === undefined) return false;
  return keywordOf(first) === "import" || commandStartedBy(first, table) !== undefined;
}
