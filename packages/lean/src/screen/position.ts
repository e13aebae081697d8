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

/** Why a part is refused, and where (a UTF-16 index into the part as given). */
export interface Refusal {
  index: number;
  reason: string;
}

/** `label` at line:column of `index` in `text`, as reasons name a place: "context 2:7". */
export function placeIn(text: string, index: number, label: string): string {
  const at = positionAt(text, index);
  return `${label} ${at.line}:${at.column}`;
}
