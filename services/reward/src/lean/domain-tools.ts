// The tactics and Mathlib names that mark a proof as working in its domain.
// A name counts when it equals an entry or continues it past a "." or "_"
// (Nat.Prime.two_le continues Nat.Prime).

export const DOMAINS = ["algebra", "number_theory", "analysis", "geometry", "combinatorics"] as const;
export type Domain = (typeof DOMAINS)[number];

export const DOMAIN_TOOLS: Record<Domain, readonly string[]> = {
  algebra: [
    "ring",
    "ring_nf",
    "field_simp",
    "linarith",
    "nlinarith",
    "polyrith",
    "linear_combination",
    "abel",
    "abel_nf",
    "group",
    "noncomm_ring",
    "module",
    "Polynomial",
    "Matrix",
    "LinearMap",
    "Submodule",
    "Ideal",
    "Subgroup",
    "MonoidHom",
    "RingHom",
  ],
  number_theory: [
    "omega",
    "decide",
    "interval_cases",
    "zify",
    "qify",
    "Nat.Prime",
    "Nat.prime",
    "Nat.Coprime",
    "Nat.coprime",
    "Nat.gcd",
    "Nat.lcm",
    "Int.gcd",
    "Int.lcm",
    "Nat.ModEq",
    "Int.ModEq",
    "ZMod",
    "Nat.factorization",
    "Nat.primeFactors",
    "Nat.digits",
    "Nat.totient",
    "Nat.divisors",
    "Nat.properDivisors",
    "Int.emod",
    "Int.ediv",
    "Nat.mod",
    "Nat.dvd",
    "Int.dvd",
    "padicValNat",
    "legendreSym",
  ],
  analysis: [
    "continuity",
    "fun_prop",
    "positivity",
    "gcongr",
    "bound",
    "measurability",
    "Filter",
    "Metric",
    "Real.log",
    "Real.exp",
    "Real.sqrt",
    "Real.rpow",
    "deriv",
    "HasDerivAt",
    "Continuous",
    "ContinuousOn",
    "Differentiable",
    "DifferentiableAt",
    "Tendsto",
    "intervalIntegral",
    "MeasureTheory",
    "CauchySeq",
    "Summable",
    "tsum",
  ],
  geometry: [
    "EuclideanGeometry",
    "InnerProductGeometry",
    "EuclideanSpace",
    "AffineSubspace",
    "AffineMap",
    "Collinear",
    "Cospherical",
    "orthogonalProjection",
    "inner",
    "real_inner",
    "dist",
  ],
  combinatorics: [
    "Finset",
    "Fintype",
    "Multiset",
    "Nat.choose",
    "Nat.factorial",
    "Nat.descFactorial",
    "Set.ncard",
    "Set.encard",
    "SimpleGraph",
    "Equiv",
    "Function.Injective",
    "Function.Surjective",
    "Function.Bijective",
    "decide",
  ],
};

const ALIASES: Record<string, Domain> = {
  nt: "number_theory",
  numbertheory: "number_theory",
  number_theory: "number_theory",
  elementary_number_theory: "number_theory",
  calculus: "analysis",
  real_analysis: "analysis",
  euclidean_geometry: "geometry",
  combinatorial: "combinatorics",
  counting: "combinatorics",
};

/** The domain a dataset tag names ("Number Theory", "nt", "number-theory"), or undefined. */
export function domainOf(tag: string): Domain | undefined {
  const key = tag
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, "_");
  if ((DOMAINS as readonly string[]).includes(key)) return key as Domain;
  return ALIASES[key];
}

/** The first tool of `domain` among `names`, or undefined. */
export function domainToolUsed(domain: Domain, names: ReadonlySet<string>): string | undefined {
  for (const name of names) {
    const tool = DOMAIN_TOOLS[domain].find((t) => name === t || name.startsWith(`${t}.`) || name.startsWith(`${t}_`));
    if (tool) return name;
  }
  return undefined;
}
