// Positions as Lean and the REPL report them: 1-based lines, 0-based columns counted
// in code points (a character outside the BMP is one column, two UTF-16 units).

export interface SourcePosition {
  line: number;
  column: number;
}

/** The position of the UTF-16 index `index` in `text`. */
export function positionAt(text: string, index: number): SourcePosition {
  const before = text.slice(0, index);
  const lineStart = before.lastIndexOf("\n") + 1;
  let line = 1;
  for (let i = 0; i < lineStart; i++) if (before.charCodeAt(i) === 10) line++;
  return { line, column: Array.from(before.slice(lineStart)).length };
}
