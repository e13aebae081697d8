// Positions as the REPL reports them: 1-based lines, 0-based columns in code points
// (@lean-grpo/lean reads them the same way for the screen's reasons).
import { positionAt, type SourcePosition } from "@lean-grpo/lean";

export { positionAt, type SourcePosition };

/** Where `text` ends, i.e. the position of whatever is appended to it. */
export function endPosition(text: string): SourcePosition {
  return positionAt(text, text.length);
}

export function comparePositions(a: SourcePosition, b: SourcePosition): number {
  return a.line - b.line || a.column - b.column;
}
