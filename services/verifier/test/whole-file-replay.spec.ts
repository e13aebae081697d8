// The replay tier on whole-file proofs: comparator (here its stand-in, comparator's
// interface) is given the challenge the service writes from the dataset alone and the
// solution Lean elaborated — the file's auxiliaries, then the dataset's statement and the
// file's proof — and compares the elaborated type of the theorem with the challenge's,
// after the screen's token comparison passed. A solution whose theorem elaborates to
// another type (an auxiliary changed what the statement means, past the screen) is
// REJECTED by the replay; an honest file is PROVED by it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProofFormat } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { Verdict, VerdictTier } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { standIn, type StandIn } from "./support/stand-in.js";
import { startVerifier, type Harness } from "./support/verifier-harness.js";

const STATEMENT = "theorem add_zero_wf (n : Nat) : n + 0 = n";
const theorem = { name: "add_zero_wf", statement: STATEMENT, header: "import Mathlib", proofFormat: ProofFormat.WHOLE_FILE };
const file = (aux: string) => `${aux}\n\n${STATEMENT} := by\n  exact aux_wf n`;

let repl: StandIn;
let harness: Harness;
beforeAll(async () => {
  repl = standIn({
    rules: [
      {
        when: { cmd: { includes: "lemma aux_wf (n : Nat) : n + 0 = n := by simp_arith" } },
        declares: { axioms: [] },
        replay: { elaboratedStatement: "(n : Nat) : @HAdd.hAdd Nat Nat Nat instHAddOther n 0 = n" },
      },
      { when: { cmd: { includes: "lemma aux_wf" } }, declares: { axioms: ["propext"] } },
    ],
  });
  harness = await startVerifier({ repl: { command: repl.command, replay: "proved", replay_checker: repl.checker } });
}, 60_000);
afterAll(async () => {
  await harness?.close();
  repl?.cleanup();
});

describe("the kernel replay of a whole-file proof", () => {
  it("is given the auxiliaries and the dataset's statement, checks the theorem by name, and agrees with an honest file", async () => {
    const response = await harness.client.verify({ theorem, proof: file("lemma aux_wf (n : Nat) : n + 0 = n := by simp") });
    expect(response.verdict, response.reason).toBe(Verdict.PROVED);
    expect(response.decidedBy).toBe(VerdictTier.REPLAY);
    const replay = repl.replays().at(-1)!;
    expect(replay.config.theorem_names).toEqual(["add_zero_wf"]);
    expect(replay.challenge).toBe(`import Mathlib\n\n${STATEMENT} := by\n  sorry\n`);
    expect(replay.solution).toBe(
      `import Mathlib\n\nlemma aux_wf (n : Nat) : n + 0 = n := by simp\n\n${STATEMENT} := by\n  exact aux_wf n\n`,
    );
  });

  it("refuses a file whose theorem elaborates to another type than the challenge's, after the REPL accepted it", async () => {
    const response = await harness.client.verify({ theorem, proof: file("lemma aux_wf (n : Nat) : n + 0 = n := by simp_arith") });
    expect(response.verdict).toBe(Verdict.REJECTED);
    expect(response.decidedBy).toBe(VerdictTier.REPLAY);
    expect(response.reason).toMatch(
      /the kernel replay refused a proof the REPL accepted: .*Challenge and solution theorem statement do not match: 'add_zero_wf'/,
    );
  });
});
