// What a theorem's statement is: one declaration head, `theorem NAME binders : type`
// (or `lemma`), with the listed attributes and modifiers before it and nothing after
// it. The verifier appends ` := ` and the proof; a second command in the statement
// would be elaborated before the proof (and after a parse error Lean reads on at the
// next token that begins a command), and a body of its own would make the appended
// proof a parse error Lean skips. A trailing placeholder (`:= by sorry`) is dropped
// before this check (declarations.ts, statementWithoutProof).
import { commandStartedBy, keywordOf } from "../commands.js";
import type { TokenTable } from "../token-table.js";
import type { LeanToken } from "../tokens.js";
import { placeIn, type Refusal } from "./source-screen.js";

const MODIFIERS = new Set(["private", "protected", "noncomputable", "nonrec", "public"]);
const HEADS = new Set(["theorem", "lemma"]);
/** Words that begin a part of a declaration's body, never of its head. */
const BODY_WORDS = new Set(["where", "termination_by", "decreasing_by", "deriving"]);
const OPENING = new Set(["(", "[", "{", "⟨", "⦃", "@[", "#[", "%["]);
const CLOSING = new Set([")", "]", "}", "⟩", "⦄"]);

const ACCEPTED = "a statement is one declaration head, `theorem NAME binders : type` (or `lemma`), without a body";

/** Why `tokens` (the statement's code tokens, placeholder proof dropped, read with `table`) is not one declaration head. */
export function statementHeadRefusal(tokens: readonly LeanToken[], text: string, table: TokenTable): Refusal | undefined {
  let at = 0;
  if (tokens[0]?.text === "@[") {
    at = closingBracket(tokens, 0) + 1;
    if (at === 0)
      return { index: tokens[0].start, reason: `an attribute list at ${placeIn(text, 0, "statement")} never closes; ${ACCEPTED}` };
  }
  while (at < tokens.length && MODIFIERS.has(keywordOf(tokens[at]!) ?? "")) at++;
  const head = tokens[at];
  if (head === undefined || !HEADS.has(keywordOf(head) ?? "")) {
    const where = head ?? tokens.at(-1);
    const index = where?.start ?? 0;
    return { index, reason: `does not begin with \`theorem\` or \`lemma\` (at ${placeIn(text, index, "statement")}); ${ACCEPTED}` };
  }
  if (tokens[at + 1]?.kind !== "identifier") {
    return { index: head.end, reason: `names no theorem after \`${head.text}\` (at ${placeIn(text, head.end, "statement")}); ${ACCEPTED}` };
  }
  let depth = 0;
  for (let i = at + 2; i < tokens.length; i++) {
    const token = tokens[i]!;
    const command = commandStartedBy(token, table);
    const place = placeIn(text, token.start, "statement");
    if (command !== undefined) {
      return { index: token.start, reason: `\`${command}\` at ${place} begins another command; ${ACCEPTED}` };
    }
    if (BODY_WORDS.has(keywordOf(token) ?? "")) {
      return { index: token.start, reason: `\`${token.text}\` at ${place} belongs to a declaration's body; ${ACCEPTED}` };
    }
    if (token.kind !== "symbol") continue;
    if (OPENING.has(token.text)) depth++;
    else if (CLOSING.has(token.text)) depth = Math.max(0, depth - 1);
    else if (depth === 0 && token.text === ":=") {
      return {
        index: token.start,
        reason: `holds a body after \`:=\` at ${place} (only a trailing \`:=\`, \`:= by\`, \`:= sorry\` or \`:= by sorry\` is dropped); ${ACCEPTED}`,
      };
    }
  }
  return undefined;
}

/** Index of the `]` closing the bracket opened at `open`, or -1. */
function closingBracket(tokens: readonly LeanToken[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (OPENING.has(tokens[i]!.text)) depth++;
    else if (CLOSING.has(tokens[i]!.text) && --depth === 0) return i;
  }
  return -1;
}
