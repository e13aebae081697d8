// The names a proof really relies on: identifiers in its code (comments and
// literals already blanked) that are not under a combinator that hides failure.
// `try ring` succeeds whether or not ring did anything, so it shows nothing.

/** Combinators after which a tactic may fail or do nothing while the proof still checks. */
const FAILURE_HIDING = /(?<![\w.'])(?:try|repeat'?|iterate|first|any_goals|fail_if_success|success_if_fail)(?![\w.'!?])/u;
const IDENTIFIER = /[\p{L}_][\p{L}\p{N}_'!?.]*/gu;

/**
 * Identifiers used outside failure-hiding scopes. A combinator's scope is the
 * rest of its line and the lines indented deeper than it; a line with `<|>`
 * (either side may have failed) counts for nothing.
 */
export function reliedOnIdentifiers(code: string): Set<string> {
  const names = new Set<string>();
  let guardColumn: number | undefined;
  for (const line of code.split("\n")) {
    if (line.trim() === "") continue;
    const indent = line.length - line.trimStart().length;
    if (guardColumn !== undefined && indent > guardColumn) continue;
    guardColumn = undefined;
    if (line.includes("<|>")) {
      guardColumn = indent;
      continue;
    }
    const guard = FAILURE_HIDING.exec(line);
    const counted = guard ? line.slice(0, guard.index) : line;
    if (guard) guardColumn = guard.index;
    for (const match of counted.matchAll(IDENTIFIER)) names.add(match[0].replace(/\.+$/, ""));
  }
  return names;
}
