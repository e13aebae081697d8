// The request every benchmark call sends, and the stand-in script that answers it
// as Lean would (the proof elaborates; #print axioms lists propext).
import type { RulesFile } from "../../tests/fakes/lean-repl/rules.js";

export const BENCH_PROOF = "by bench_simp";

export const BENCH_REQUEST = {
  theorem: { name: "bench_add_zero", statement: "theorem bench_add_zero (n : Nat) : n + 0 = n", imports: ["Mathlib"] },
  proof: BENCH_PROOF,
};

/** The proof command the service sends for BENCH_REQUEST, on the header's env. */
export function benchProofCommand(headerEnv: number) {
  return { cmd: `theorem bench_add_zero (n : Nat) : n + 0 = n := ${BENCH_PROOF}`, env: headerEnv, allTactics: true };
}

/** Then `#print axioms` on the env the proof produced. */
export function benchAxiomsCommand(proofEnv: number) {
  return { cmd: "#print axioms bench_add_zero", env: proofEnv };
}

export function benchRules(delayMs = 0): RulesFile {
  return { rules: [{ when: { cmd: { includes: BENCH_PROOF } }, declares: { axioms: ["propext"] } }], delayMs };
}
