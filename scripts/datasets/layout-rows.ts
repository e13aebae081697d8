// Small records in each corpus's own layout (column names as the corpora release them), the
// source of the dataset fixtures (make-fixtures.ts). Statements are short real Lean 4 / Mathlib.
export type Row = Record<string, string | string[]>;

const MATHLIB_HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n\n";

export const LAYOUT_ROWS = {
  // DeepSeek-Prover / Goedel-Prover miniF2F: name, split, informal_prefix, formal_statement, goal, header.
  minif2f: [
    {
      name: "mathd_algebra_10",
      split: "test",
      informal_prefix: "/-- Compute $|(-2)^3|$. Show that it is 8.-/\n",
      formal_statement: "theorem mathd_algebra_10 : abs ((-2 : ℝ) ^ 3) = 8 := by\n",
      goal: "⊢ |(-2) ^ 3| = 8",
      header: MATHLIB_HEADER,
    },
    {
      name: "mathd_numbertheory_3",
      split: "test",
      informal_prefix: "/-- What is the units digit of the sum of the squares of the first nine positive integers? Show that it is 5.-/\n",
      formal_statement: "theorem mathd_numbertheory_3 : (∑ x ∈ Finset.range 10, (x + 1) ^ 2) % 10 = 5 := by\n",
      goal: "⊢ (∑ x ∈ Finset.range 10, (x + 1) ^ 2) % 10 = 5",
      header: MATHLIB_HEADER,
    },
    {
      name: "amc12a_2002_p6",
      split: "valid",
      informal_prefix:
        "/-- For how many positive integers $m$ does there exist a positive integer $n$ such that $m \\cdot n \\le m + n$? Show that it is infinitely many.-/\n",
      formal_statement: "theorem amc12a_2002_p6 (n : ℕ) (h₀ : 0 < n) : ∃ m, m > n ∧ ∃ p, m * p ≤ m + p := by\n",
      goal: "n : ℕ\nh₀ : 0 < n\n⊢ ∃ m > n, ∃ p, m * p ≤ m + p",
      header: MATHLIB_HEADER,
    },
  ],
  // ProofNet's Lean 4 copy in the DeepSeek layout.
  "proofnet-lean4": [
    {
      name: "exercise_1_13a",
      split: "valid",
      informal_prefix:
        "/-- Suppose that $f$ is holomorphic in an open set $\\Omega$. Prove that if $\\text{Re}(f)$ is constant, then $f$ is constant.-/\n",
      formal_statement:
        "theorem exercise_1_13a {f : ℂ → ℂ} (Ω : Set ℂ) (a b : Ω) (h : IsOpen Ω)\n  (hf : DifferentiableOn ℂ f Ω) (hc : ∃ (c : ℝ), ∀ z ∈ Ω, (f z).re = c) :\n  f a = f b := by\n",
      goal: "⊢ f ↑a = f ↑b",
      header: "import Mathlib\n\nopen Complex Filter Function Metric Finset\nopen scoped BigOperators Topology\n\n",
    },
  ],
  // ProofNet's Hugging Face release: id, nl_statement, formal_statement, src_header, nl_proof.
  proofnet: [
    {
      id: "Rudin|exercise_1_1a",
      nl_statement: "If $r$ is rational $(r \\neq 0)$ and $x$ is irrational, prove that $r+x$ is irrational.",
      formal_statement: "theorem exercise_1_1a (x : ℝ) (y : ℚ) : ( Irrational x ) -> Irrational ( x + y ) :=",
      src_header: "import Mathlib\n\nopen Topology Filter Real Complex TopologicalSpace Finset\nopen scoped BigOperators\n",
      nl_proof: "\\begin{proof} If $r$ and $r+x$ were both rational, then $x=r+x-r$ would also be rational. \\end{proof}",
    },
    {
      id: "Rudin|exercise_1_2",
      nl_statement: "Prove that there is no rational number whose square is $12$.",
      formal_statement: "theorem exercise_1_2 : ¬ ∃ (x : ℚ), ( x ^ 2 = 12 ) :=",
      src_header: "import Mathlib\n\nopen Topology Filter Real Complex TopologicalSpace Finset\nopen scoped BigOperators\n",
      nl_proof: "\\begin{proof} Suppose $m^2=12 n^2$ with no common factor. \\end{proof}",
    },
  ],
  // Lean Workbook: id, natural_language_statement, formal_statement, answer, ... and no header.
  "lean-workbook": [
    {
      id: "lean_workbook_plus_1",
      natural_language_statement: "Prove that $a^2 + b^2 \\geq 2ab$ for all real numbers $a$ and $b$.",
      answer: "",
      tactic: "nlinarith [sq_nonneg (a - b)]",
      state_before: "a b : ℝ\n⊢ a ^ 2 + b ^ 2 ≥ 2 * a * b",
      formal_statement: "theorem lean_workbook_plus_1 (a b : ℝ) : a ^ 2 + b ^ 2 ≥ 2 * a * b  :=  by sorry",
      split: "lean_workbook",
      status: "proved",
    },
    {
      id: "lean_workbook_plus_2",
      natural_language_statement: "Show that $n(n+1)$ is even for every natural number $n$.",
      answer: "",
      tactic: "",
      state_before: "n : ℕ\n⊢ Even (n * (n + 1))",
      formal_statement: "theorem lean_workbook_plus_2 (n : ℕ) : Even (n * (n + 1))  :=  by sorry",
      split: "lean_workbook",
      status: "",
    },
  ],
  // Goedel-Pset: problem_id, informal_statement, formal_statement.
  "goedel-pset": [
    {
      problem_id: "goedel_pset_1",
      informal_statement: "Show that the sum of the first $n$ odd numbers is $n^2$.",
      formal_statement: "theorem goedel_pset_1 (n : ℕ) : ∑ i ∈ Finset.range n, (2 * i + 1) = n ^ 2 := by sorry",
    },
  ],
  // PutnamBench: name, lean4_statement, informal_statement, informal_solution, tags.
  putnambench: [
    {
      name: "putnam_1988_b1",
      lean4_statement:
        "theorem putnam_1988_b1 : ∀ a ≥ 2, ∀ b ≥ 2, ∃ x y z : ℤ, x > 0 ∧ y > 0 ∧ z > 0 ∧ a * b = x * y + x * z + y * z + 1 :=\nsorry",
      informal_statement:
        "A \\emph{composite} (positive integer) is a product $ab$ with $a$ and $b$ not necessarily distinct integers in $\\{2,3,4,\\dots\\}$. Show that every composite is expressible as $xy+xz+yz+1$, with $x,y,z$ positive integers.",
      informal_solution: "None.",
      tags: ["algebra"],
    },
  ],
} satisfies Record<string, Row[]>;
