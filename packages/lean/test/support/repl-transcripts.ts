// The REPL's own test inputs and answers (toolchain v4.33.0-rc2), as the REPL reads them.
import { fileURLToPath } from "node:url";

export const TRANSCRIPTS = fileURLToPath(new URL("../../../../tests/fakes/lean-repl/transcripts/", import.meta.url));

/** Request texts the way the REPL assembles them (lines up to a blank one, right-trimmed, joined). */
export function replQueries(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .map((block) =>
      block
        .split("\n")
        .map((line) => line.trimEnd())
        .join(""),
    )
    .filter((query) => query.trim() !== "");
}
