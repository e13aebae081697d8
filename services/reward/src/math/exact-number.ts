// Reads the numbers most answers are (integers, decimals, fractions, mixed
// numbers, percents, scientific notation) as exact rationals, so that they
// compare exactly and fast, without the symbolic engine.

export interface Rational {
  num: bigint;
  den: bigint;
}

export interface ExactNumber {
  value: Rational;
  /** Written with a percent sign: `value` is the number before the sign (50 for 50%). */
  percent: boolean;
}

/** Scientific exponents beyond this are left to the symbolic engine (no giant BigInts). */
const MAX_EXPONENT = 400;

const DECIMAL = String.raw`(?:\d+(?:\.\d*)?|\.\d+)`;
const SIGNED_DECIMAL = `[-+]?${DECIMAL}`;
const BRACED = (inner: string) => String.raw`(?:\{(${inner})\}|(\d))`;
const FRACTION = new RegExp(String.raw`^\\frac${BRACED(SIGNED_DECIMAL)}${BRACED(SIGNED_DECIMAL)}$`);
const MIXED = new RegExp(String.raw`^(\d+)\\frac${BRACED(String.raw`\d+`)}${BRACED(String.raw`\d+`)}$`);
const SLASH = new RegExp(`^(${SIGNED_DECIMAL})/(${SIGNED_DECIMAL})$`);
const SCIENTIFIC = new RegExp(String.raw`^(${DECIMAL})(?:(?:\\times|\\cdot|\*)10\^(?:\{([-+]?\d+)\}|(\d))|[eE]([-+]?\d+))$`);
const PLAIN = new RegExp(`^${DECIMAL}$`);
const INTEGER_POWER = /^(\d{1,6})\^(?:\{([-+]?\d+)\}|(\d))$/;

/** The exact value of a normalised answer, or undefined when it is not one of these forms. */
export function parseExactNumber(latex: string): ExactNumber | undefined {
  let s = latex;
  const percent = s.endsWith("%");
  if (percent) s = s.slice(0, -1);
  let negative = false;
  if (s.startsWith("-") || s.startsWith("+")) {
    negative = s.startsWith("-");
    s = s.slice(1);
  }
  const value = parseUnsigned(s);
  if (!value) return undefined;
  return { value: negative ? { num: -value.num, den: value.den } : value, percent };
}

function parseUnsigned(s: string): Rational | undefined {
  if (PLAIN.test(s)) return decimal(s);
  let m = FRACTION.exec(s);
  if (m) return divide(decimal(m[1] ?? m[2]!), decimal(m[3] ?? m[4]!));
  m = MIXED.exec(s);
  if (m) {
    const fraction = divide(decimal(m[2] ?? m[3]!), decimal(m[4] ?? m[5]!));
    return fraction && add(decimal(m[1]!), fraction);
  }
  m = SLASH.exec(s);
  if (m) return divide(decimal(m[1]!), decimal(m[2]!));
  m = SCIENTIFIC.exec(s);
  if (m) return scaled(decimal(m[1]!), 10n, Number(m[2] ?? m[3] ?? m[4]));
  // 10^{-20} too: the symbolic engine rounds magnitudes below about 1e-10 to 0.
  m = INTEGER_POWER.exec(s);
  if (m) return scaled({ num: 1n, den: 1n }, BigInt(m[1]!), Number(m[2] ?? m[3]));
  return undefined;
}

/** value × base^exponent, exactly; undefined for exponents too large to be worth a BigInt, or 0^negative. */
function scaled(value: Rational, base: bigint, exponent: number): Rational | undefined {
  if (Math.abs(exponent) > MAX_EXPONENT || (base === 0n && exponent < 0)) return undefined;
  const power = base ** BigInt(Math.abs(exponent));
  return reduce(exponent >= 0 ? { num: value.num * power, den: value.den } : { num: value.num, den: value.den * power });
}

/** "-12.50" → -25/2. */
function decimal(text: string): Rational {
  const negative = text.startsWith("-");
  const unsigned = text.replace(/^[-+]/, "");
  const [whole = "", fraction = ""] = unsigned.split(".");
  const digits = BigInt((whole || "0") + fraction);
  return reduce({ num: negative ? -digits : digits, den: 10n ** BigInt(fraction.length) });
}

function divide(a: Rational, b: Rational): Rational | undefined {
  if (b.num === 0n) return undefined;
  return reduce({ num: a.num * b.den, den: a.den * b.num });
}

function add(a: Rational, b: Rational): Rational {
  return reduce({ num: a.num * b.den + b.num * a.den, den: a.den * b.den });
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

function reduce(r: Rational): Rational {
  const sign = r.den < 0n ? -1n : 1n;
  const g = gcd(r.num, r.den) || 1n;
  return { num: (sign * r.num) / g, den: (sign * r.den) / g };
}

export function rationalEquals(a: Rational, b: Rational): boolean {
  return a.num * b.den === b.num * a.den;
}

/** The percent of a number as a rational: 50 → 1/2. */
export function fromPercent(r: Rational): Rational {
  return reduce({ num: r.num, den: r.den * 100n });
}
