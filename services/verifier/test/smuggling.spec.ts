// Issue #14, end to end through gRPC with the REPL stand-in (which resolves
// `#print axioms` as Lean does: one report per constant, `open` and `namespace`
// persisting into later commands on the same env). Class 1: commands glued to the
// token before them never reach Lean. Class 2: the axiom check cannot be pointed at
// another constant. Each variant here was PROVED by the verifier before the fix.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { standIn, type StandIn } from "./support/stand-in.js";
import { startVerifier, type Harness } from "./support/verifier-harness.js";

const statement = "theorem add_zero' (n : Nat) : n + 0 = n";
/** A header that brings a clean constant `Clean.add_zero'` into scope for redirection. */
const header = "import Mathlib\nimport Clean";

const repl: StandIn = standIn({
  rules: [
    { when: { cmd: { includes: "import Clean" }, env: "none" }, declares: { name: "Clean.add_zero'", axioms: ["propext"] } },
    // "by cheat" stands for a proof that really depends on a non-standard axiom.
    {
      when: { cmd: { includes: "by cheat" } },
      declares: [{ axioms: ["Lean.ofReduceBool"] }, { name: "Clean.add_zero'", axioms: ["propext"] }],
    },
    { when: { cmd: { includes: "by honest" } }, declares: { axioms: ["propext"] } },
    // Anything else that reaches Lean elaborates "cleanly": the screen must stop it first.
    { when: { cmd: { regex: "^(?!#print axioms)" }, env: "given" }, declares: { axioms: [] } },
  ],
});

let harness: Harness;
beforeAll(async () => {
  harness = await startVerifier({ repl: { command: repl.command } });
});
afterAll(async () => {
  await harness.close();
  repl.cleanup();
});

const verify = (proof: string, theorem: Record<string, unknown> = {}) =>
  harness.client.verify({ theorem: { statement, header, ...theorem }, proof });

describe("class 1: a proof body cannot leave its declaration", () => {
  const variants: [string, string][] = [
    ["by exact h#eval IO.println 1", "#eval"],
    ["by simp\n  exact h#exit", "#exit"],
    ["by exact 'a'theorem add_zero' (n : Nat) : n + 0 = n := sorry", "theorem"],
    ["by exact 'a'axiom cheat : False", "axiom"],
    ["by exact 'a'run_cmd pure ()", "run_cmd"],
    ["by exact 2theorem other : True := trivial", "theorem"],
    ['by exact "x"#eval 1', "#eval"],
    ["by exact xé#exit", "#exit"],
    ["by exact h\nalias Clean.add_zero' := Nat.add_zero", "redeclaring the theorem"],
    ["by exact h\nalias other := Nat.add_zero", "a command"],
    ['by exact s!"{h #eval 1}"', "#eval"],
    ['by exact "never closed #eval', "does not lex"],
  ];
  for (const [proof, construct] of variants) {
    it(`refuses ${JSON.stringify(proof)}`, async () => {
      const before = repl.requests().length;
      const response = await verify(proof);
      expect(response.verdict).toBe(Verdict.REJECTED);
      expect(response.reason).toContain(construct);
      // Nothing of it reached Lean (the header and the verifier's token-table query may have, on first use).
      expect(
        repl
          .requests()
          .slice(before)
          .filter((r) => r.request.kind === "command" && r.request.env !== undefined && r.request.cmd.includes(proof.slice(3))),
      ).toEqual([]);
    });
  }
});

describe("class 2: the axiom check names exactly one constant", () => {
  it("asks by the _root_-qualified name and proves an honest proof", async () => {
    const response = await verify("by honest");
    expect(response.verdict).toBe(Verdict.PROVED);
    const sent = repl.requests().map((r) => r.request);
    expect(sent.at(-1)).toMatchObject({ kind: "command", cmd: "#print axioms _root_.add_zero'" });
  });

  it("does not take a clean constant that an `open` in the context resolves first", async () => {
    const response = await verify("by cheat", { context: "open Clean" });
    expect(response.verdict).toBe(Verdict.ERROR);
    expect(response.reason).toBe("the theorem depends on non-standard axioms: Lean.ofReduceBool");
  });

  it("refuses `open`, `namespace` and `alias` after the proof before Lean sees them", async () => {
    for (const proof of [
      "by cheat\nopen Clean",
      "by cheat\nnamespace Clean",
      "by cheat\nalias Clean.add_zero' := Nat.add_zero\nopen Clean",
    ]) {
      const response = await verify(proof);
      expect(response.verdict, proof).toBe(Verdict.REJECTED);
    }
  });

  it("qualifies the name by the namespaces the context leaves open", async () => {
    const response = await verify("by honest", { context: "namespace Outer" });
    expect(response.verdict).toBe(Verdict.PROVED);
    expect(repl.requests().at(-1)?.request).toMatchObject({ cmd: "#print axioms _root_.Outer.add_zero'" });
  });
});
