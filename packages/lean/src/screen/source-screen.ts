// The screen of one part of a checked source — the dataset's context or statement, or
// the model's proof — up to what the part's own shape adds (context-commands.ts,
// statement-head.ts). It decides on what Lean will read, not on what this package's
// lexer managed to read:
//   - a part that does not lex as Lean is refused, wherever the error stands: after a
//     lexical error Lean's command loop reads on from inside the broken token (a
//     character literal `'ab'`, an escape `"\q"`, a numeral `2_x`, an unterminated
//     comment), where this lexer reads nothing;
//   - then every banned construct of the part, on the text with comments blanked, also
//     in the readings Lean could make at a `{` inside a plain string (syntax that takes
//     an interpolated string reads code there, and after a parse error inside one Lean
//     reads on from inside the string; banned-constructs.ts, hiddenReadings).
import { blankCommentTokens } from "../blank.js";
import { BUILTIN_TABLE } from "../builtin-tokens.js";
import type { TokenTable } from "../token-table.js";
import { tokenize } from "../tokenize.js";
import type { LeanToken, LeanTokenKind, LexResult } from "../tokens.js";
import { findBannedUse } from "./banned-constructs.js";
import { disagreement } from "./declared-atoms.js";
import type { SourcePart } from "./construct.js";
import { placeIn, type Refusal } from "./position.js";

export { placeIn, type Refusal } from "./position.js";

const COMMENT_KINDS: ReadonlySet<LeanTokenKind> = new Set(["lineComment", "blockComment", "docComment"]);

/** The first lexical error of `text` as Lean reads it; an unterminated comment is reported where it opens. */
export function lexicalRefusal(
  text: string,
  table: TokenTable,
  label: string,
  { tokens, error }: LexResult = tokenize(text, { tokens: table }),
): Refusal | undefined {
  if (!error) return undefined;
  const comment = error.message === "unterminated comment" ? tokens.at(-1) : undefined;
  const index = comment?.unterminated ? comment.start : error.index;
  return { index, reason: `the ${label} does not lex as Lean: ${error.message} at ${placeIn(text, index, label)}` };
}

/**
 * The first refusal of `text` as the part `part` (lexical, then strings, then banned
 * constructs), read with `table` — or with each of several tables, when Lean may read
 * the part with either (the context's declared atoms, declared-atoms.ts; the first is
 * the reading with them): then every check runs on each reading, and the readings must
 * agree on where literals and comments are. `label` names the part in the reason
 * ("tactic" for one tactic of tactic mode). `text` is the part as it will be sent, LF
 * line ends.
 */
export function screenSourcePart(
  text: string,
  part: SourcePart,
  theoremName: string,
  table: TokenTable | readonly TokenTable[] = BUILTIN_TABLE,
  label: string = part,
): Refusal | undefined {
  const tables: readonly TokenTable[] = "source" in table ? [table] : table;
  const readings = tables.map((each) => ({ table: each, lexed: tokenize(text, { tokens: each }) }));
  for (const { table: each, lexed } of readings) {
    const lexical = lexicalRefusal(text, each, label, lexed);
    if (lexical) return lexical;
  }
  for (const [k, { table: each, lexed }] of readings.entries()) {
    const differs = k > 0 && disagreement(text, readings[0]!.lexed, lexed, label, "the context's notation declares");
    if (differs) return differs;
    // The text lexes (checked above), so its comments are blanked from this reading's tokens, not by lexing it again.
    const code = lexed.tokens.filter((token) => !COMMENT_KINDS.has(token.kind));
    const banned = bannedRefusal(blankCommentTokens(text, lexed.tokens), part, theoremName, each, label, code);
    if (banned) return banned;
  }
  return undefined;
}

/** The first banned construct of `code` (a part with its comments blanked, known to lex), as a refusal. */
export function bannedRefusal(
  code: string,
  part: SourcePart,
  theoremName: string,
  table: TokenTable,
  label: string = part,
  tokens?: readonly LeanToken[],
): Refusal | undefined {
  const use = findBannedUse(code, part, theoremName, table, tokens);
  if (!use) return undefined;
  const shown = use.text.trim() === use.construct.name ? `\`${use.construct.name}\`` : `${use.construct.name} (\`${use.text.trim()}\`)`;
  const where = use.hiddenInString
    ? " (inside a string, where Lean may read it as code: as an interpolation, or after a parse error there)"
    : "";
  return { index: use.index, reason: `banned ${shown} at ${placeIn(code, use.index, label)}${where}: it ${use.construct.why}` };
}
