// A text read with the token table Lean has at each point of it. A `notation` (or
// `infix`, `prefix`, `syntax`, `macro`, …) adds its `"…"` atoms to Lean's table once
// it elaborates, so every command after it is lexed with them, longest match first:
// after `notation "+1a" => 0`, Lean reads `+1a'"'` as the atom then the character
// literal `'"'`, not `+`, `1` and the name `a'` before a string. The screen reads the
// same way, switching tables where the next command begins (Lean's command loop lexes
// each command with the table the ones before it left).
//
// Whether Lean's table holds an atom depends on its declaration elaborating (a
// precedence or pattern Lean rejects adds nothing) and on scope (`local notation`
// leaves with its `section`), which the screen does not decide. So a text that
// declares atoms is read both ways — with them and without them — and every check runs
// on both readings; where the two put a literal or a comment in different places, no
// one reading can be trusted and the text is refused.
import { commandStartedBy } from "../commands.js";
import { growingTable, withAtoms, type TokenTable } from "../token-table.js";
import { tokenize } from "../tokenize.js";
import type { LeanToken, LeanTokenKind, LexResult } from "../tokens.js";
import { atomOf, atomProblem } from "./notation-atoms.js";
import { placeIn, type Refusal } from "./position.js";

/** Commands that declare atoms in the strings of their pattern (before `=>`, or to the next command for `syntax`). */
const DECLARING = new Set(["notation", "notation3", "infix", "infixl", "infixr", "prefix", "postfix", "syntax", "macro", "elab"]);

export interface DeclaredAtom {
  atom: string;
  /** Where its string literal stands in the text. */
  index: number;
  /** The command that declares it (`notation`, `infixl`, …). */
  command: string;
}

export interface AtomReadings {
  /** Lean's reading when every declaration elaborates: each one's atoms in the table from the next command on. */
  declared: LexResult;
  /** The reading without the text's own atoms; the same object as `declared` when the text declares none. */
  plain: LexResult;
  atoms: DeclaredAtom[];
  /** The table after the text, with every atom it declares; `table` itself when none. */
  after: TokenTable;
  /** An atom the screen cannot model, or the first place the two readings disagree on a literal or comment. */
  refusal?: Refusal;
}

const isCode = (token: LeanToken) => token.kind !== "lineComment" && token.kind !== "blockComment" && token.kind !== "docComment";

/** Reads `text` (one part, labelled `label` in reasons) with `table` and the atoms it declares itself. */
export function readDeclaringAtoms(text: string, table: TokenTable, label: string): AtomReadings {
  const atoms: DeclaredAtom[] = [];
  let refusal: Refusal | undefined;
  const growing = growingTable(table);
  let current = table;
  let pending: DeclaredAtom[] = [];
  // The declaring command being read: its strings are atoms until its `=>`.
  let declaring: { command: string; done: boolean } | undefined;
  const retable = (token: LeanToken): TokenTable | undefined => {
    if (!isCode(token)) return undefined;
    const command = commandStartedBy(token, current);
    if (command !== undefined && pending.length > 0) {
      // The declaration ended at this command: read it again with the atoms in the table.
      const grew = growing.add(pending.map((declared) => declared.atom));
      pending = [];
      declaring = undefined;
      if (grew) {
        current = growing.table;
        return current;
      }
    }
    if (command !== undefined) {
      declaring = DECLARING.has(command) ? { command, done: false } : undefined;
    } else if (declaring && !declaring.done) {
      if (token.text === "=>") declaring.done = true;
      else if (token.kind === "string" || token.kind === "rawString") {
        const problem = atomProblem(token.text);
        if (problem && !refusal) {
          refusal = {
            index: token.start,
            reason:
              `the ${declaring.command} at ${placeIn(text, token.start, label)} declares the token ${token.text}, which ${problem}; ` +
              "Lean reads the text after it with that token in its table, and the screen cannot read it the same way",
          };
        }
        const declared = { atom: atomOf(token.text), index: token.start, command: declaring.command };
        if (!problem) {
          atoms.push(declared);
          pending.push(declared);
        }
      }
    }
    return undefined;
  };
  const declared = tokenize(text, { tokens: table, retable });
  if (atoms.length === 0) return { declared, plain: declared, atoms, after: table, refusal };
  const plain = tokenize(text, { tokens: table });
  const after = withAtoms(
    table,
    atoms.map((declared) => declared.atom),
  );
  const named = [...new Set(atoms.map((declared) => `\`${declared.atom}\``))].slice(0, 5).join(", ");
  return {
    declared,
    plain,
    atoms,
    after,
    refusal: refusal ?? disagreement(text, declared, plain, label, `its notation declares (${named})`),
  };
}

/** Tokens whose extent decides what is code: a literal or a comment hides what the screen's checks would read. */
const EXTENT_KINDS: ReadonlySet<LeanTokenKind> = new Set([
  "string",
  "interpolatedChunk",
  "rawString",
  "char",
  "nameLiteral",
  "lineComment",
  "blockComment",
  "docComment",
]);

/**
 * The first place where readings `a` and `b` of `text` put a literal or a comment differently, or where
 * one stops at a lexical error the other does not, as a refusal; `declaredBy` says whose tokens make the
 * difference ("the context's notation declares (`+1a`)").
 */
export function disagreement(text: string, a: LexResult, b: LexResult, label: string, declaredBy: string): Refusal | undefined {
  const [x, y] = [a.tokens.filter((t) => EXTENT_KINDS.has(t.kind)), b.tokens.filter((t) => EXTENT_KINDS.has(t.kind))];
  let index: number | undefined;
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const [p, q] = [x[i], y[i]];
    if (p && q && p.start === q.start && p.end === q.end && p.kind === q.kind) continue;
    index = Math.min(p?.start ?? Number.POSITIVE_INFINITY, q?.start ?? Number.POSITIVE_INFINITY);
    break;
  }
  if (a.error?.index !== b.error?.index) {
    const errorAt = Math.min(a.error?.index ?? Number.POSITIVE_INFINITY, b.error?.index ?? Number.POSITIVE_INFINITY);
    index = Math.min(index ?? errorAt, errorAt);
  }
  if (index === undefined) return undefined;
  return {
    index,
    reason:
      `the ${label} reads differently at ${placeIn(text, index, label)} with the tokens ${declaredBy} and without ` +
      "them: one reading has a literal or a comment there that the other does not. Lean holds a declared token only where its " +
      "declaration elaborated and is in scope, which the screen does not decide, so it refuses a text whose code depends on it",
  };
}
