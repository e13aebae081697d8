// JSON Lines, read whole: every record with its 1-based line number so that a caller can
// name the line a bad field is on; blank lines (and a trailing newline) are skipped, a
// line that is not JSON is reported with its number, never skipped.
import { readFile } from "node:fs/promises";

export type JsonLine = { line: number; value: unknown; error?: undefined } | { line: number; value?: undefined; error: string };

/** A line that is not JSON, or not a JSON object where one is required. */
export class JsonLinesError extends Error {
  override readonly name = "JsonLinesError";
  constructor(
    readonly source: string,
    readonly line: number,
    readonly problem: string,
  ) {
    super(`${source}:${line}: ${problem}`);
  }
}

/** Each non-blank line of `text`: its parsed value, or why it is not JSON. */
export function parseJsonLines(text: string): JsonLine[] {
  const out: JsonLine[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    if (raw.trim() === "") return;
    try {
      out.push({ line: index + 1, value: JSON.parse(raw) as unknown });
    } catch (error) {
      out.push({ line: index + 1, error: `not valid JSON${jsonErrorPlace(error)}` });
    }
  });
  return out;
}

/**
 * Where JSON.parse failed, without the text it failed on: V8's message quotes the start of
 * the input ("Unexpected token 'r', "root:x:0:0:"... is not valid JSON"), and a file a
 * client named must not travel back to it, even in part.
 */
export function jsonErrorPlace(error: unknown): string {
  const position = /at position (\d+)/.exec(error instanceof Error ? error.message : "");
  return position ? ` (at character ${Number(position[1]) + 1})` : "";
}

/** The lines of a file; `missing: "empty"` reads a file that does not exist yet as no lines. */
export async function readJsonLines(file: string, options: { missing?: "error" | "empty" } = {}): Promise<JsonLine[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if (options.missing === "empty" && (error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return parseJsonLines(text);
}

/** Every line as a JSON object, or a JsonLinesError naming the first line that is not one. */
export function readJsonObjects(text: string, source: string): { line: number; record: Record<string, unknown> }[] {
  return parseJsonLines(text).map((entry) => {
    if (entry.error !== undefined) throw new JsonLinesError(source, entry.line, entry.error);
    const value = entry.value;
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new JsonLinesError(source, entry.line, "must be a JSON object");
    return { line: entry.line, record: value as Record<string, unknown> };
  });
}
