// Blanks out what Lean does not execute: line comments, nested block comments
// (doc comments included) and the contents of string and char literals. Every
// blanked character becomes a space (newlines stay), so positions and
// indentation are unchanged and words in comments can never count.

const IDENTIFIER_CHAR = /[\p{L}\p{N}_'!?.]/u;

export function blankNonCode(source: string): string {
  const out: string[] = [];
  let i = 0;
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) out.push(source[k] === "\n" ? "\n" : " ");
  };
  while (i < source.length) {
    const ch = source[i]!;
    const next = source[i + 1];
    if (ch === "-" && next === "-") {
      const end = source.indexOf("\n", i);
      const stop = end < 0 ? source.length : end;
      blank(i, stop);
      i = stop;
    } else if (ch === "/" && next === "-") {
      const stop = blockCommentEnd(source, i);
      blank(i, stop);
      i = stop;
    } else if (ch === '"') {
      const stop = literalEnd(source, i, '"');
      blank(i, stop);
      i = stop;
    } else if (ch === "'" && !IDENTIFIER_CHAR.test(source[i - 1] ?? " ") && /^'(?:\\[^']*|[^\\'])'/.test(source.slice(i, i + 12))) {
      // A char literal ('a', '\n'); a quote after a name is part of it (h', x'').
      const stop = literalEnd(source, i, "'");
      blank(i, stop);
      i = stop;
    } else {
      out.push(ch);
      i++;
    }
  }
  return out.join("");
}

/** End (exclusive) of the block comment starting at `start`; Lean block comments nest. */
function blockCommentEnd(source: string, start: number): number {
  let depth = 0;
  for (let i = start; i < source.length - 1; i++) {
    if (source[i] === "/" && source[i + 1] === "-") {
      depth++;
      i++;
    } else if (source[i] === "-" && source[i + 1] === "/") {
      depth--;
      i++;
      if (depth === 0) return i + 1;
    }
  }
  return source.length;
}

/** End (exclusive) of the literal opened by `quote` at `start`, escapes honoured. */
function literalEnd(source: string, start: number, quote: string): number {
  for (let i = start + 1; i < source.length; i++) {
    if (source[i] === "\\") i++;
    else if (source[i] === quote) return i + 1;
  }
  return source.length;
}
