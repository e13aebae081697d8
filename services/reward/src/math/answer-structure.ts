// Splits a normalised answer into its mathematical shape: a single value, an
// ordered bracketed list (tuple, point, interval), an unordered collection (a
// set, a bare list of solutions, a ± pair), or a union of intervals.

export type AnswerShape =
  | { kind: "scalar"; latex: string }
  /** Order matters and so do the brackets: (1,2) is not [1,2), nor (2,1). */
  | { kind: "bracketed"; open: string; close: string; items: AnswerShape[] }
  /** Order does not matter: \{1,2\}, "1, 2", 1\pm\sqrt2, A \cup B. */
  | { kind: "collection"; of: "set" | "union"; items: AnswerShape[] };

const OPENERS = new Set(["(", "[", "{"]);
const CLOSERS = new Set([")", "]", "}"]);

export function parseAnswerShape(latex: string): AnswerShape {
  const unionParts = splitTopLevel(latex, "\\cup");
  if (unionParts.length > 1) return { kind: "collection", of: "union", items: unionParts.map(parseAnswerShape) };

  if (latex === "\\emptyset" || latex === "\\varnothing" || latex === "\\{\\}") return { kind: "collection", of: "set", items: [] };
  if (latex.startsWith("\\{") && latex.endsWith("\\}") && matchingClose(latex, 0) === latex.length - 2) {
    return { kind: "collection", of: "set", items: splitTopLevel(latex.slice(2, -2), ",").map(parseAnswerShape) };
  }

  const first = latex[0] ?? "";
  const last = latex[latex.length - 1] ?? "";
  if ((first === "(" || first === "[") && (last === ")" || last === "]") && matchingClose(latex, 0) === latex.length - 1) {
    const items = splitTopLevel(latex.slice(1, -1), ",");
    if (items.length > 1) return { kind: "bracketed", open: first, close: last, items: items.map(parseAnswerShape) };
  }

  const listItems = splitTopLevel(latex, ",");
  if (listItems.length > 1) return { kind: "collection", of: "set", items: listItems.map(parseAnswerShape) };

  const pm = splitTopLevel(latex, "\\pm");
  if (pm.length === 2) {
    const [base = "", offset = ""] = pm;
    const plus = base === "" ? offset : `${base}+(${offset})`;
    return {
      kind: "collection",
      of: "set",
      items: [
        { kind: "scalar", latex: plus },
        { kind: "scalar", latex: `${base}-(${offset})` },
      ],
    };
  }
  return { kind: "scalar", latex };
}

/** Index where the group opened at `start` closes (any bracket kind, \{ \} included); -1 if never. */
function matchingClose(s: string, start: number): number {
  let depth = 0;
  for (let i = start; i < s.length; i++) {
    const width = bracketWidth(s, i);
    const ch = width === 2 ? s[i + 1]! : s[i]!;
    if (width > 0 && OPENERS.has(ch)) depth++;
    else if (width > 0 && CLOSERS.has(ch) && --depth === 0) return i;
    if (width === 2) i++;
  }
  return -1;
}

/** 1 for a bracket, 2 for \{ or \}, 0 otherwise. */
function bracketWidth(s: string, i: number): number {
  const ch = s[i];
  if (ch === "\\" && (s[i + 1] === "{" || s[i + 1] === "}")) return 2;
  return ch !== undefined && (OPENERS.has(ch) || CLOSERS.has(ch)) ? 1 : 0;
}

/** Splits on `separator` where no bracket is open; a command separator must not continue as a longer command. */
function splitTopLevel(s: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const width = bracketWidth(s, i);
    if (width > 0) {
      const ch = width === 2 ? s[i + 1]! : s[i]!;
      if (OPENERS.has(ch)) depth++;
      else depth = Math.max(0, depth - 1);
      i += width - 1;
      continue;
    }
    if (s[i] === "\\" && !s.startsWith(separator, i)) {
      // Skip a whole command name so that "\cup" inside "\cupdot" or "\," never splits.
      let j = i + 1;
      while (j < s.length && /[a-zA-Z]/.test(s[j]!)) j++;
      i = Math.max(i, j - 1);
      continue;
    }
    if (
      depth === 0 &&
      s.startsWith(separator, i) &&
      !(/[a-zA-Z]/.test(separator.at(-1)!) && /[a-zA-Z]/.test(s[i + separator.length] ?? ""))
    ) {
      parts.push(s.slice(start, i));
      start = i + separator.length;
      i = start - 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}
