// Line ends as Lean reads them: Lean's input context turns every CRLF into LF before
// parsing (`String.crlfToLf` in `Parser.mkInputContext`), and its whitespace refuses a
// carriage return left over ("isolated carriage returns are not allowed"). Text sent to
// Lean with LF line ends means the same to Lean whether or not it normalises, and the
// lexer here reads it exactly as sent (a string gap is `\` then LF, never `\` then CR).

/** `source` with each CRLF replaced by LF (a lone CR stays). */
export function crlfToLf(source: string): string {
  return source.split("\r\n").join("\n");
}
