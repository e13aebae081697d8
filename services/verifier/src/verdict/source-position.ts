// Positions as the REPL reports them: 1-based lines, 0-based columns in code points.

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

/** Where `text` ends, i.e. the position of whatever is appended to it. */
export function endPosition(text: string): SourcePosition {
  return positionAt(text, text.length);
}

export function comparePositions(a: SourcePosition, b: SourcePosition): number {
  return a.line - b.line || a.column - b.column;
}
