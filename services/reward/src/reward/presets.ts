// The named rewards. Each keeps every unsolved completion strictly below every
// solved one for both task kinds (test/presets.spec.ts checks the bounds).

export interface PresetScorer {
  name: string;
  weight: number;
  /** Parameters that differ from the scorer's defaults. */
  params?: Record<string, unknown>;
}

export interface Preset {
  name: string;
  description: string;
  scorers: PresetScorer[];
}

export const PRESETS: readonly Preset[] = [
  {
    name: "binary",
    description: "Outcome only, as DeepSeek-Prover and Kimina-Prover train: 1 when proved or the answer is right, 0 otherwise.",
    scorers: [
      { name: "lean_proof", weight: 1, params: { mode: "binary" } },
      { name: "math_answer", weight: 1, params: { correct: 1, wrong: 0, no_answer: 0 } },
    ],
  },
  {
    name: "shaped",
    description:
      "Partial credit for unproved proofs (at most 0.3), the seed's +1/-1/-0.5 for math answers, a small format bonus and " +
      "half of DAPO's overlong penalty.",
    scorers: [
      { name: "lean_proof", weight: 1, params: { mode: "shaped", max_partial: 0.3 } },
      { name: "math_answer", weight: 1 },
      { name: "format", weight: 0.1 },
      { name: "length", weight: 0.5 },
    ],
  },
  {
    name: "lenient",
    description:
      "More partial credit (at most 0.5), no penalty for wrong math answers, larger format bonus, bonuses for short, " +
      "hard and in-domain proofs, a quarter of the overlong penalty.",
    scorers: [
      { name: "lean_proof", weight: 1, params: { mode: "shaped", max_partial: 0.5 } },
      { name: "math_answer", weight: 1, params: { correct: 1, wrong: 0, no_answer: 0 } },
      { name: "format", weight: 0.2 },
      { name: "length", weight: 0.25 },
      { name: "efficiency", weight: 0.1 },
      { name: "difficulty", weight: 0.1 },
      { name: "domain", weight: 0.05 },
    ],
  },
  {
    name: "strict",
    description:
      "Binary proofs, a missing math answer costs as much as a wrong one, format and short proofs rewarded, half of the " +
      "overlong penalty with a 512-token soft zone.",
    scorers: [
      { name: "lean_proof", weight: 1, params: { mode: "binary" } },
      { name: "math_answer", weight: 1, params: { correct: 1, wrong: -1, no_answer: -1 } },
      { name: "format", weight: 0.2 },
      { name: "length", weight: 0.5, params: { cache_tokens: 512 } },
      { name: "efficiency", weight: 0.1 },
    ],
  },
];

export const PRESET_NAMES = PRESETS.map((preset) => preset.name);
