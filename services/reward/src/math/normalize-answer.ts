// Rewrites a final answer into a canonical LaTeX string so that equal answers
// written differently (spacing commands, \dfrac, units, "x = 3", 1{,}000) compare
// equal as text, and so that the exact and symbolic parsers see one dialect.
import { closingBrace } from "./extract-boxed.js";

const UNICODE: ReadonlyArray<readonly [string, string]> = [
  ["\u2212", "-"], // minus sign
  ["\u00d7", "\\times "],
  ["\u00b7", "\\cdot "],
  ["\u22c5", "\\cdot "],
  ["\u03c0", "\\pi "],
  ["\u221e", "\\infty "],
  ["\u221a", "\\sqrt"],
  ["\u00b1", "\\pm "],
  ["\u222a", "\\cup "],
  ["\u2264", "\\le "],
  ["\u2265", "\\ge "],
  ["\u00b0", "^\\circ"],
];

/** Commands that only change spacing or size, with no mathematical meaning. */
const LAYOUT_COMMANDS =
  /\\(?:displaystyle|textstyle|scriptstyle|quad|qquad|enspace|thinspace|medspace|thickspace|negthinspace|negmedspace|negthickspace|left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg)(?![a-zA-Z])/g;

/** Commands whose argument is text: a unit after a number, or a word answer. */
const TEXT_COMMAND = /\\(?:text|textrm|textnormal|textbf|textit|mathrm|mathbf|mbox|operatorname)\s*\{/g;

const GREEK = "alpha|beta|gamma|delta|epsilon|varepsilon|theta|vartheta|lambda|mu|nu|xi|rho|sigma|tau|phi|varphi|chi|psi|omega";
/** "x =", "a_1 =", "\theta =" before the value: the question's unknown, not part of the answer. */
const LEADING_ASSIGNMENT = new RegExp(`^(?:[a-zA-Z]|\\\\(?:${GREEK}))(?:_\\{?[a-zA-Z0-9]+\\}?)?\\s*=\\s*`);

export function normalizeAnswer(raw: string): string {
  let s = raw.trim();
  s = stripMathDelimiters(s);
  for (const [from, to] of UNICODE) s = s.replaceAll(from, to);
  // \left. and \right. are invisible delimiters: drop the dot with the command.
  s = s.replace(/\\(?:left|right)\s*\./g, "");
  s = s.replace(LAYOUT_COMMANDS, "");
  s = s.replace(/\\[,;:!> ]/g, " ").replaceAll("~", " ");
  s = s.replace(/\\[dt]frac(?![a-zA-Z])/g, "\\frac").replace(/\\[dt]binom(?![a-zA-Z])/g, "\\binom");
  s = s.replace(/\\(?:le|leqslant)(?![a-zA-Z])/g, "\\leq").replace(/\\(?:ge|geqslant)(?![a-zA-Z])/g, "\\geq");
  // Degrees are read as a unit: 30^\circ is 30.
  s = s.replace(/\^\s*\{\s*\\circ\s*\}/g, "").replace(/\^\s*\\circ(?![a-zA-Z])/g, "");
  s = s.replace(/\\\$/g, "").replace(/\\%/g, "%");
  s = unwrapText(s);
  s = s.replace(/[.,;\s]+$/, "").trim();
  if (s.split("=").length === 2) s = s.replace(LEADING_ASSIGNMENT, "");
  s = mergeDigitGroups(s);
  return removeSpaces(s);
}

function stripMathDelimiters(s: string): string {
  for (const [open, close] of [
    ["$$", "$$"],
    ["$", "$"],
    ["\\(", "\\)"],
    ["\\[", "\\]"],
  ] as const) {
    if (s.length >= open.length + close.length && s.startsWith(open) && s.endsWith(close)) {
      return s.slice(open.length, s.length - close.length).trim();
    }
  }
  return s;
}

/**
 * A trailing text group after a value is a unit ("5 \text{cm}" is 5); any other
 * text group is replaced by its content ("\text{Monday}" is Monday).
 */
function unwrapText(s: string): string {
  let out = "";
  let last = 0;
  for (const match of s.matchAll(TEXT_COMMAND)) {
    if (match.index < last) continue;
    const start = match.index + match[0].length;
    const end = closingBrace(s, start);
    if (end < 0) break;
    const before = s.slice(last, match.index);
    const content = s.slice(start, end);
    const isTrailingUnit =
      s.slice(end + 1).trim() === "" && /\d/.test(out + before) && /^[\sa-zA-Z./^0-9]*$/.test(content) && /[a-zA-Z]/.test(content);
    out += before + (isTrailingUnit ? "" : content);
    last = end + 1;
  }
  return out + s.slice(last);
}

/** 1,000,000 and 1 000 000 and 1{,}000 are one number, when the whole answer is that number. */
function mergeDigitGroups(s: string): string {
  const t = s.replaceAll("{,}", ",");
  if (/^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?$/.test(t)) return t.replaceAll(",", "");
  if (/^[-+]?\d{1,3}(?: \d{3})+(?:\.\d+)?%?$/.test(t)) return t.replaceAll(" ", "");
  // "3 1/2" is a mixed number; once spaces go it would read as 31/2.
  const mixed = /^([-+]?\d+) +(\d+)\/(\d+)$/.exec(t);
  if (mixed) return `${mixed[1]}\\frac{${mixed[2]}}{${mixed[3]}}`;
  return t;
}

/** Spaces carry no meaning in LaTeX math except to end a command name before a letter (\pi r). */
function removeSpaces(s: string): string {
  return s
    .replace(/(\\[a-zA-Z]+)\s+(?=[a-zA-Z])/g, "$1\u0000")
    .replace(/\s+/g, "")
    .replaceAll("\u0000", " ");
}
