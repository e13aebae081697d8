// Finds the final answer of a math completion: the content of its last
// \boxed{...} (or \fbox{...}), braces nested to any depth.

const BOX_OPENER = /\\(?:boxed|fbox)\s*\{/g;

export type BoxedAnswer = { kind: "found"; content: string } | { kind: "none" } | { kind: "unclosed" };

/**
 * The last box decides, as in the graders of DAPO and verl: a model that boxes
 * several candidates is judged on the one it ended with. An unclosed last box
 * (a truncated completion) is no answer, not the box before it.
 */
export function extractLastBoxed(text: string): BoxedAnswer {
  let lastStart = -1;
  for (const match of text.matchAll(BOX_OPENER)) lastStart = match.index + match[0].length;
  if (lastStart < 0) return { kind: "none" };
  const end = closingBrace(text, lastStart);
  return end < 0 ? { kind: "unclosed" } : { kind: "found", content: text.slice(lastStart, end) };
}

/** Index of the "}" closing a group whose content starts at `start`; -1 when it never closes. */
export function closingBrace(text: string, start: number): number {
  let depth = 1;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    // \{ and \} are literal braces (set notation), not grouping.
    if (ch === "\\") {
      i++;
      continue;
    }
    if (ch === "{") depth++;
    else if (ch === "}" && --depth === 0) return i;
  }
  return -1;
}
