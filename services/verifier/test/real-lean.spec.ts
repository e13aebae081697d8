// Against a real Lean REPL (leanprover-community/repl): correct proofs, wrong proofs,
// sorry, and each exploit of reference/lean-verification.md §3 with the verdict it
// must get. Runs only when LEAN_REPL_CMD names a REPL, e.g.
//   LEAN_REPL_CMD='lake env /opt/repl/.lake/build/bin/repl' LEAN_REPL_CWD=/opt/mathlib4 npx vitest run --project verifier test/real-lean.spec.ts
// The theorems need only Lean core; LEAN_REPL_HEADER (default: none) sets the header,
// e.g. "import Mathlib" to check the Mathlib set-up too. With LEAN_REPLAY_CMD (and
// LEAN_REPLAY_WORKSPACE) naming comparator, PROVED also goes through the kernel replay,
// as in the lean-verifier image; without it the replay tier is off here and says so.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TacticStatus, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { startVerifier, type Harness } from "./support/verifier-harness.js";

const command = process.env.LEAN_REPL_CMD ?? "";
const header = process.env.LEAN_REPL_HEADER ?? "";
if (command.trim() === "")
  console.warn("skipping the real-Lean suite: LEAN_REPL_CMD is not set (it names a leanprover-community/repl command)");

const theorem = (name: string, statement: string) => ({ name, statement: `theorem ${name} ${statement}`, header });

describe.runIf(command.trim() !== "")("with a real Lean REPL", () => {
  let harness: Harness;
  beforeAll(async () => {
    const replay = (process.env.LEAN_REPLAY_CMD ?? "").trim() === "" ? "off" : "proved";
    if (replay === "off") console.warn("the real-Lean suite runs without the replay tier: LEAN_REPLAY_CMD is not set");
    harness = await startVerifier(
      {
        repl: {
          command,
          cwd: process.env.LEAN_REPL_CWD ?? process.cwd(),
          pool_size: 2,
          timeout_ms: 120_000,
          memory_limit_mb: 16_384,
          replay,
        },
      },
      process.env,
    );
  }, 600_000);
  afterAll(async () => {
    await harness?.close();
  });

  const verify = (name: string, statement: string, proof: string, timeoutMs = 0) =>
    harness.client.verify({ theorem: theorem(name, statement), proof, timeoutMs }, { timeoutMs: 600_000 });

  it("proves correct proofs, reporting their axioms", async () => {
    const cases: [string, string, string][] = [
      ["add_zero_simp", "(n : Nat) : n + 0 = n", "by simp"],
      ["and_intro_term", "(p q : Prop) (hp : p) (hq : q) : p ∧ q", "⟨hp, hq⟩"],
      ["add_comm_omega", "(a b : Nat) : a + b = b + a", ":= by omega"],
      ["two_steps", "(p q : Prop) (hp : p) (hq : q) : p ∧ q", "by\n  constructor\n  · exact hp -- left\n  · exact hq"],
    ];
    for (const [name, statement, proof] of cases) {
      const response = await verify(name, statement, proof);
      expect(response.verdict, `${name}: ${response.reason}`).toBe(Verdict.PROVED);
      expect(response.axioms.every((axiom) => ["propext", "Classical.choice", "Quot.sound"].includes(axiom))).toBe(true);
    }
    const classical = await verify("em_classical", "(p : Prop) : p ∨ ¬p", "Classical.em p");
    expect(classical.verdict).toBe(Verdict.PROVED);
    expect(classical.axioms).toContain("Classical.choice");
  }, 600_000);

  it("reports wrong proofs as ERROR and unfinished ones as INCOMPLETE, with progress", async () => {
    const wrong = await verify("two_plus_two", ": 2 + 2 = 5", "by rfl");
    expect(wrong.verdict).toBe(Verdict.ERROR);
    expect(wrong.progress!.errorCount).toBeGreaterThan(0);
    expect((await verify("unknown_lemma", "(n : Nat) : n = n", "by exact no_such_lemma n")).verdict).toBe(Verdict.ERROR);
    const unfinished = await verify("half_done", "(p q : Prop) (hp : p) (hq : q) : p ∧ q", "by\n  constructor\n  exact hp");
    expect(unfinished.verdict).toBe(Verdict.INCOMPLETE);
    expect(unfinished.progress!.goalsRemaining).toBe(1);
    expect(unfinished.goals[0]).toContain("⊢ q");
    expect(unfinished.progress!.tacticsValidBeforeFirstError).toBeGreaterThanOrEqual(2);
  }, 600_000);

  it("refuses every exploit of §3 before or after Lean runs", async () => {
    const exploits: [string, string, string, Verdict][] = [
      // 1. sorry and its spellings
      ["e_sorry", ": False", "by sorry", Verdict.REJECTED],
      ["e_admit", ": False", "by admit", Verdict.REJECTED],
      ["e_sorry_ax", ": False", "sorryAx False false", Verdict.REJECTED],
      // 2. library search that can hide a sorry
      ["e_exact_q", "(n : Nat) : n + 0 = n", "by exact?", Verdict.REJECTED],
      ["e_apply_q", "(n : Nat) : n + 0 = n", "by apply?", Verdict.REJECTED],
      // 3. a new axiom
      ["e_axiom", ": False", "cheat\naxiom cheat : False", Verdict.REJECTED],
      // 4. native evaluation
      ["e_native", ": 10 < 20", "by native_decide", Verdict.REJECTED],
      ["e_decide_native", ": 10 < 20", "by decide +native", Verdict.REJECTED],
      ["e_implemented_by", ": True", "trivial\n@[implemented_by id] def f (n : Nat) : Nat := n", Verdict.REJECTED],
      // 5. environment manipulation through metaprograms
      ["e_run_cmd", ": False", "by exact absurd\nrun_cmd pure ()", Verdict.REJECTED],
      ["e_eval", ": True", 'trivial\n#eval IO.println "hi"', Verdict.REJECTED],
      ["e_run_tac", ": False", "by run_tac Lean.Elab.Tactic.evalTactic (← `(tactic| sorry))", Verdict.REJECTED],
      ["e_elab", ": True", 'trivial\nelab "cheat" : tactic => pure ()', Verdict.REJECTED],
      // 6. kernel checks off
      ["e_skip_kernel", ": False", "by\n  set_option debug.skipKernelTC true in exact absurd", Verdict.REJECTED],
      // 7. #exit: the theorem would never be elaborated
      ["e_exit", ": False", "by exact absurd\n#exit", Verdict.REJECTED],
      // 8. restating the theorem, or another constant in its place
      ["e_redeclare", ": False", "by exact absurd\ntheorem e_redeclare : True := trivial", Verdict.REJECTED],
      ["e_namespace", ": False", "by exact absurd\nnamespace X\ntheorem e_namespace : True := trivial", Verdict.REJECTED],
      // 9. macros that make a tactic mean sorry
      ["e_macro", "(n : Nat) : n = n + 1", 'by omega\nmacro "omega" : tactic => `(tactic| sorry)', Verdict.REJECTED],
      // 10. code execution inside a proof
      ["e_by_elab", ": False", "by_elab pure (Lean.mkConst ``False.elim)", Verdict.REJECTED],
      // 11. unsafe
      ["e_unsafe", ": False", "by exact absurd\nunsafe def f : Nat := 0", Verdict.REJECTED],
    ];
    for (const [name, statement, proof, verdict] of exploits) {
      const response = await verify(name, statement, proof);
      expect(response.verdict, `${name}: ${response.reason}`).toBe(verdict);
    }
    // A sorry Lean produces itself (error recovery) is caught after elaboration.
    const recovered = await verify("e_recovered", "(p : Prop) (hp : p) : p ∧ p", "⟨hp, by exact⟩");
    expect([Verdict.ERROR, Verdict.INCOMPLETE]).toContain(recovered.verdict);
  }, 600_000);

  it("answers TIMEOUT past the time limit, and the pool keeps serving", async () => {
    const slow = await verify("slow_decide", ": (List.range 5000).length = 5000", "by decide", 1);
    expect(slow.verdict).toBe(Verdict.TIMEOUT);
    expect((await verify("after_timeout", "(n : Nat) : n + 0 = n", "by simp")).verdict).toBe(Verdict.PROVED);
  }, 600_000);

  it("proves step by step in tactic mode", async () => {
    const start = await harness.client.startProof({ theorem: theorem("tactic_and", "(p q : Prop) (hp : p) (hq : q) : p ∧ q") });
    expect(start.goals[0]).toContain("⊢ p ∧ q");
    const split = await harness.client.applyTactic({ sessionId: start.sessionId, proofState: start.proofState, tactic: "constructor" });
    expect(split.status).toBe(TacticStatus.INCOMPLETE);
    expect(split.goals).toHaveLength(2);
    const left = await harness.client.applyTactic({ sessionId: start.sessionId, proofState: split.proofState!, tactic: "exact hp" });
    const typo = await harness.client.applyTactic({ sessionId: start.sessionId, proofState: left.proofState!, tactic: "exat hq" });
    expect(typo.status).toBe(TacticStatus.ERROR);
    const done = await harness.client.applyTactic({ sessionId: start.sessionId, proofState: left.proofState!, tactic: "exact hq" });
    expect(done.status).toBe(TacticStatus.COMPLETED);
    await harness.client.endProof({ sessionId: start.sessionId });
  }, 600_000);
});
