// Decides whether two normalised answers are mathematically equal: by shape
// (tuple, interval, set, union), then for single values exactly when both are
// plain numbers (the fast path most answers take), as words when both are
// words, and otherwise by value with the symbolic engine.
import { parseAnswerShape, type AnswerShape } from "./answer-structure.js";
import { fromPercent, parseExactNumber, rationalEquals, type ExactNumber } from "./exact-number.js";
import { parseSymbolic, type ComplexValue, type SymbolicValue } from "./symbolic-value.js";

export interface EquivalenceOptions {
  /** Relative tolerance for values only the symbolic engine can compare (irrationals, expressions). */
  tolerance: number;
}

export function answersEquivalent(answer: string, truth: string, options: EquivalenceOptions): boolean {
  return shapesEquivalent(parseAnswerShape(answer), parseAnswerShape(truth), options);
}

function shapesEquivalent(a: AnswerShape, b: AnswerShape, options: EquivalenceOptions): boolean {
  if (a.kind === "scalar" && b.kind === "scalar") return scalarsEquivalent(a.latex, b.latex, options);
  if (a.kind === "bracketed" && b.kind === "bracketed") {
    return (
      a.open === b.open &&
      a.close === b.close &&
      a.items.length === b.items.length &&
      a.items.every((item, i) => shapesEquivalent(item, b.items[i]!, options))
    );
  }
  if (a.kind === "collection" && b.kind === "collection") return a.of === b.of && sameMembers(a.items, b.items, options);
  return false;
}

/** Equal as multisets: each member of `a` pairs with a distinct equal member of `b`. */
function sameMembers(a: AnswerShape[], b: AnswerShape[], options: EquivalenceOptions): boolean {
  if (a.length !== b.length) return false;
  const unused = [...b];
  return a.every((item) => {
    const match = unused.findIndex((other) => shapesEquivalent(item, other, options));
    if (match < 0) return false;
    unused.splice(match, 1);
    return true;
  });
}

function scalarsEquivalent(a: string, b: string, options: EquivalenceOptions): boolean {
  if (a === b) return true;
  const exactA = parseExactNumber(a);
  const exactB = parseExactNumber(b);
  if (exactA && exactB) return exactEquivalent(exactA, exactB);
  if (isWord(a) && isWord(b)) return wordKey(a) === wordKey(b);
  return valuesEquivalent(a, b, options);
}

/**
 * Graders strip "%": 50% matches a ground truth of 50 (the percent asked for)
 * and of 0.5 (its value); the same holds the other way round.
 */
function exactEquivalent(a: ExactNumber, b: ExactNumber): boolean {
  if (a.percent === b.percent) return rationalEquals(a.value, b.value);
  const [withPercent, plain] = a.percent ? [a, b] : [b, a];
  return rationalEquals(withPercent.value, plain.value) || rationalEquals(fromPercent(withPercent.value), plain.value);
}

/** A run of three letters that is not a command name: "Monday", "no solution". */
function isWord(latex: string): boolean {
  return /(?<![\\a-zA-Z])[a-zA-Z]{3,}/.test(latex.replace(/\\[a-zA-Z]+/g, " "));
}

function wordKey(latex: string): string {
  return latex.toLowerCase().replace(/[^a-z0-9]/g, "");
}

function valuesEquivalent(a: string, b: string, options: EquivalenceOptions): boolean {
  const candidatesA = readingsOf(a);
  const candidatesB = readingsOf(b);
  return candidatesA.some((x) => candidatesB.some((y) => symbolicEqual(x, y, options.tolerance)));
}

/** The values an answer can stand for: p% is p or p/100 (see exactEquivalent). */
function readingsOf(latex: string): SymbolicValue[] {
  if (!latex.endsWith("%")) return [cachedSymbolic(latex)].filter((value) => value !== undefined);
  const number = latex.slice(0, -1);
  return [cachedSymbolic(number), cachedSymbolic(`\\frac{${number}}{100}`)].filter((value) => value !== undefined);
}

const SAMPLE_POINTS = [0.5377, 1.8339, -2.2588, 0.8622, 0.3188];
const MIN_AGREEING_POINTS = 3;

function symbolicEqual(a: SymbolicValue, b: SymbolicValue, tolerance: number): boolean {
  if (a.variables.join(",") !== b.variables.join(",")) return false;
  if (a.variables.length === 0) return close(a.valueAt([]), b.valueAt([]), tolerance);
  // Expressions in variables: equal as functions when equal at every sample point
  // where both are defined (a point outside a domain, like √x at x<0, proves nothing).
  let agreeing = 0;
  for (const base of SAMPLE_POINTS) {
    const point = a.variables.map((_, i) => base + 0.37 * i);
    const x = a.valueAt(point);
    const y = b.valueAt(point);
    if (!isFiniteComplex(x) || !isFiniteComplex(y)) continue;
    if (!close(x, y, tolerance)) return false;
    agreeing++;
  }
  return agreeing >= MIN_AGREEING_POINTS;
}

function isFiniteComplex(v: ComplexValue): boolean {
  return Number.isFinite(v.re) && Number.isFinite(v.im);
}

function close(x: ComplexValue, y: ComplexValue, tolerance: number): boolean {
  if ([x.re, x.im, y.re, y.im].some(Number.isNaN)) return false;
  if (!isFiniteComplex(x) || !isFiniteComplex(y)) return x.re === y.re && x.im === y.im;
  const difference = Math.hypot(x.re - y.re, x.im - y.im);
  const scale = Math.max(Math.hypot(x.re, x.im), Math.hypot(y.re, y.im));
  return difference <= tolerance * scale;
}

// Ground truths repeat across a group and across epochs, and parsing is the slow part.
const CACHE_LIMIT = 4096;
const symbolicCache = new Map<string, SymbolicValue | undefined>();

function cachedSymbolic(latex: string): SymbolicValue | undefined {
  if (symbolicCache.has(latex)) return symbolicCache.get(latex);
  if (symbolicCache.size >= CACHE_LIMIT) symbolicCache.clear();
  const value = parseSymbolic(latex);
  symbolicCache.set(latex, value);
  return value;
}
