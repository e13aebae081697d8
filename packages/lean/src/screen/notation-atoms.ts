// Which atoms a declaration may add to Lean's token table, as far as the screen can
// read the text after it. The screen lexes with the atoms in its table
// (declared-atoms.ts), so what an atom does to the text after it — `+1a'"'` read as
// the atom then a character literal, `∘1x`, an atom ending in `-` before `-` or in `r`
// before `"` — is read as Lean reads it, by the same longest match. What is left here
// is what the screen does not model, refused with its reason: atoms Lean itself
// rejects (`isValidAtom` in Lean/Parser/Basic.lean: empty, white space, a leading
// digit or quote), atoms written with escapes or as raw strings (the screen takes an
// atom's text as written), and atoms holding the characters of string interpolation
// (`{`, `}`), antiquotations (`$`), quotations and escaped names (`` ` ``, `«`, `»`)
// or `#` (which the fallback table reads as beginning a command word, whatever Lean's
// table holds).

/** Characters the screen's lexer treats specially inside a token it does not model as a table token. */
const UNMODELLED = new Set(["{", "}", "$", "`", "«", "»", "#"]);

/** Why `literal` (a string token's text, quotes included) declares no atom the screen can model, or undefined. */
export function atomProblem(literal: string): string | undefined {
  if (literal.startsWith("r")) return "is a raw string; the screen reads an atom only as a plain string";
  if (literal.includes("\\")) return "holds an escape; the screen reads an atom only as written out plainly";
  const atom = literal.slice(1, -1).trim();
  if (atom === "") return "is empty";
  if (/\s/u.test(atom)) return "holds white space inside";
  if (/^[0-9'"]/u.test(atom)) return "begins with a digit or a quote, which Lean refuses as an atom";
  const unmodelled = Array.from(atom).find((ch) => UNMODELLED.has(ch));
  if (unmodelled !== undefined) {
    return `holds \`${unmodelled}\`, which begins an interpolation, an antiquotation, a quotation, an escaped name or a command word, whose reading the screen does not model inside a token`;
  }
  return undefined;
}

/** The atom a literal declares: its text between the quotes, trimmed (Lean trims an atom's surrounding spaces). */
export function atomOf(literal: string): string {
  return literal.slice(1, -1).trim();
}
