// The tokens a context's notation declares. From the command after a `notation` (or
// `infix`, ...) on, Lean reads the text with the notation's atoms in its token table,
// by longest match, before this package's lexer (which does not know them) would: an
// atom `∘'` makes `∘'"'` the token `∘'` then a string where the lexer reads `∘` then
// the character literal `'"'`, and Lean then reads code where the screen reads a
// string. So an atom may hold no character that begins or ends a literal, a comment
// or an escaped name, and may not end where a glued `-`, `/` or `r` would begin one.
// What is left (`‖`, `+ᵥ`, `≺`, `!`, `[MOD`, words) splits text differently at most
// where no literal or comment begins, which hides nothing.
import { isIdFirst, isIdRest } from "../characters.js";

/** Characters an atom may not hold: quotes, escapes, braces (interpolation), `#` (commands) and `$` (antiquotations). */
const FORBIDDEN = new Set(['"', "'", "`", "«", "»", "\\", "{", "}", "#", "$"]);

/** Why `literal` (a string literal's text, quotes included) is not an atom a context may declare, or undefined. */
export function atomProblem(literal: string): string | undefined {
  const atom = literal.slice(1, -1).trim();
  if (literal.includes("\\")) return "holds an escape; an atom is written out plainly";
  if (atom === "") return "is empty";
  if (/\s/u.test(atom)) return "holds white space inside";
  const forbidden = Array.from(atom).find((ch) => FORBIDDEN.has(ch));
  if (forbidden !== undefined) return `holds \`${forbidden}\`, which begins a literal, a name or a command where Lean reads it in a token`;
  if (atom.includes("--") || atom.includes("/-")) return "holds a comment opener (`--` or `/-`)";
  if (atom.endsWith("-") || atom.endsWith("/")) return "ends in `-` or `/`, which with the next character would open a comment";
  const word = Array.from(atom).every((ch, i) => (i === 0 ? isIdFirst(ch.codePointAt(0)!) : isIdRest(ch.codePointAt(0)!)));
  if (!word && atom.endsWith("r")) return 'ends in `r` after a symbol, which with a following `"` or `#"` would open a raw string';
  return undefined;
}
