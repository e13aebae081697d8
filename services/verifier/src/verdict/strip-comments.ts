// Lean comments (`-- ...` and nested `/- ... -/`, doc comments included) replaced
// by spaces, keeping every newline, so each remaining character stays at the same
// line and column (Lean's columns count code points).
//
// Why the service sends Lean this stripped text rather than the original: then the
// banned-construct checks read exactly what Lean elaborates. A lexer mistake here
// (Lean's string, char and raw-string rules are intricate) can change what the
// proof means, but it can never hide code from the checks, because whatever this
// treats as a comment is gone from what Lean sees too.

/** Characters that continue a Lean identifier (so `'` after one is not a char literal). */
const IDENTIFIER_CHAR = /[\p{L}\p{N}_'!?]/u;

const CHAR_LITERAL = /^'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])'/u;

export function stripLeanComments(source: string): string {
  const chars = Array.from(source);
  const out = chars.slice();
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n") out[k] = " ";
  };
  let i = 0;
  while (i < chars.length) {
    const ch = chars[i]!;
    const next = chars[i + 1];
    if (ch === "-" && next === "-") {
      let end = i;
      while (end < chars.length && chars[end] !== "\n") end++;
      blank(i, end);
      i = end;
    } else if (ch === "/" && next === "-") {
      const end = blockCommentEnd(chars, i);
      blank(i, end);
      i = end;
    } else if (ch === '"') {
      i = stringEnd(chars, i + 1);
    } else if (ch === "r" && !IDENTIFIER_CHAR.test(chars[i - 1] ?? " ") && (next === '"' || next === "#")) {
      i = rawStringEnd(chars, i);
    } else if (ch === "'" && !IDENTIFIER_CHAR.test(chars[i - 1] ?? " ")) {
      const literal = CHAR_LITERAL.exec(chars.slice(i, i + 16).join(""));
      i += literal ? Array.from(literal[0]).length : 1;
    } else if (ch === "«") {
      // «...» quotes an identifier, which may contain `--` or `/-`.
      const close = chars.indexOf("»", i + 1);
      i = close < 0 ? chars.length : close + 1;
    } else {
      i++;
    }
  }
  return out.join("");
}

/** Index just past the `-/` closing the comment opened at `start` (nesting counted), or the end of the text. */
function blockCommentEnd(chars: readonly string[], start: number): number {
  let depth = 0;
  let i = start;
  while (i < chars.length) {
    if (chars[i] === "/" && chars[i + 1] === "-") {
      depth++;
      i += 2;
    } else if (chars[i] === "-" && chars[i + 1] === "/") {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else {
      i++;
    }
  }
  return chars.length;
}

/** Index just past the closing quote of a string whose content starts at `from`. */
function stringEnd(chars: readonly string[], from: number): number {
  let i = from;
  while (i < chars.length) {
    if (chars[i] === "\\") i += 2;
    else if (chars[i] === '"') return i + 1;
    else i++;
  }
  return chars.length;
}

/** Index just past a raw string `r#*"..."#*` starting at `start` (the `r`); no escapes inside. */
function rawStringEnd(chars: readonly string[], start: number): number {
  let hashes = 0;
  let i = start + 1;
  while (chars[i] === "#") {
    hashes++;
    i++;
  }
  if (chars[i] !== '"') return start + 1; // `r#` not followed by a quote: just the identifier `r`.
  i++;
  while (i < chars.length) {
    if (chars[i] === '"' && chars.slice(i + 1, i + 1 + hashes).every((c) => c === "#") && i + hashes < chars.length) {
      return i + 1 + hashes;
    }
    i++;
  }
  return chars.length;
}
