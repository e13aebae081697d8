// Whether a Lean statement needs Mathlib to elaborate: it names a Mathlib type, namespace or
// notation that core Lean does not define. Read from the statement's tokens (comments and
// strings do not count), so `theorem t (n : Nat) : n + 0 = n` needs nothing and
// `theorem t : Real.sqrt 4 = 2` or `∑ i ∈ Finset.range n, i` needs `import Mathlib`.
import { tokenize } from "@lean-grpo/lean";

/** Notation Mathlib declares (core Lean has none of these). */
const MATHLIB_SYMBOLS = ["ℕ", "ℤ", "ℝ", "ℂ", "ℚ", "∑", "∏", "√", "∫", "⌊", "⌋", "⌈", "⌉", "‖", "𝓝", "π", "∀ᶠ", "∃ᶠ"];

/** First components of names core Lean does not have: Mathlib's types and namespaces. */
const MATHLIB_ROOTS = new Set([
  "Real",
  "Complex",
  "Finset",
  "Multiset",
  "Polynomial",
  "Matrix",
  "Filter",
  "MeasureTheory",
  "Metric",
  "ZMod",
  "Ideal",
  "Subgroup",
  "Submodule",
  "EuclideanSpace",
  "Set",
  "Fintype",
  "Irrational",
  "deriv",
  "HasDerivAt",
  "Continuous",
  "ContinuousOn",
  "Differentiable",
  "DifferentiableOn",
  "IsOpen",
  "IsClosed",
  "Tendsto",
  "Prime",
]);

/** Whole names whose namespace core Lean has, but not these. */
const MATHLIB_NAMES = new Set([
  "Nat.Prime",
  "Nat.factorial",
  "Nat.choose",
  "Nat.digits",
  "Nat.divisors",
  "Nat.properDivisors",
  "Nat.totient",
  "Nat.primeFactors",
  "Int.floor",
  "Int.ceil",
  "Int.fract",
]);

/** Up to `limit` Mathlib names or symbols the statement uses, in order of first use; [] when it needs none. */
export function mathlibNamesIn(statement: string, limit = 3): string[] {
  const found: string[] = [];
  const add = (name: string) => {
    if (!found.includes(name) && found.length < limit) found.push(name);
  };
  const { tokens } = tokenize(statement);
  for (const token of tokens) {
    if (token.kind === "identifier") {
      const parts = token.components ?? token.text.split(".");
      if (MATHLIB_ROOTS.has(parts[0]!)) add(parts[0]!);
      else if (MATHLIB_NAMES.has(parts.slice(0, 2).join("."))) add(parts.slice(0, 2).join("."));
      for (const symbol of MATHLIB_SYMBOLS) if (token.text.includes(symbol)) add(symbol);
    } else if (token.kind === "symbol") {
      for (const symbol of MATHLIB_SYMBOLS) if (token.text.includes(symbol)) add(symbol);
    }
  }
  return found;
}
