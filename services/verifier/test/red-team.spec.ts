// Issue #23 again, red-teamed after it was resolved: attacks a searching policy finds,
// each with the verdict real Lean 4 + Mathlib calls for, through gRPC with the REPL
// stand-in. (1) Sorry written by a macro, random testing that admits the goal, compiled
// checks, files read and code run while elaborating, code-registering attributes on a
// body's own `where` / `let rec` declarations: refused by the screen, naming the
// construct. (2) A sorry the screen cannot know of (a macro it has never seen) is still
// not PROVED: Lean's warning, or `sorryAx` in the axioms of a goal admitted without one.
// Honest proofs that only look like these are in fixtures/honest-mathlib-proofs.jsonl
// (verdict-tiers.spec.ts proves every one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Verdict, VerdictTier } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { standIn, type Rule, type StandIn } from "./support/stand-in.js";
import { startVerifier, type Harness } from "./support/verifier-harness.js";

const statement = "theorem target (n : ℕ) : n + 0 = n";
const header = "import Mathlib";
const at = (line: number, column: number) => ({ line, column });

const rules: Rule[] = [
  // A macro the screen has never seen that expands to `sorry`: Lean warns, and the REPL lists no sorry (none was written).
  {
    when: { cmd: { includes: "by unknown_sorry_macro" } },
    reply: {
      json: { messages: [{ severity: "warning", pos: at(1, 8), endPos: at(1, 14), data: "declaration uses 'sorry'" }] },
    },
    declares: { axioms: ["sorryAx"] },
  },
  // A goal admitted by a synthetic sorry (no warning, as error recovery and admitGoal make): only the axioms show it.
  {
    when: { cmd: { includes: "unknown_admitting_tactic" } },
    reply: { json: { messages: [{ severity: "info", pos: at(2, 2), endPos: at(2, 30), data: "Unable to find a counter-example" }] } },
    declares: { axioms: ["propext", "sorryAx"] },
  },
  { when: { cmd: { regex: "^(?!#)" }, env: "given" }, declares: { axioms: ["propext", "Classical.choice", "Quot.sound"] } },
];

let repl: StandIn;
let harness: Harness;
beforeAll(async () => {
  repl = standIn({ rules });
  harness = await startVerifier({ repl: { command: repl.command, replay: "off" } });
});
afterAll(async () => {
  await harness?.close();
  repl?.cleanup();
});

const verify = (proof: string) => harness.client.verify({ theorem: { statement, header }, proof });

describe("red team: what the screen refuses, by the construct's name", () => {
  it.each<[string, string, string]>([
    ["sorry written by a macro", "by stop\n  simp", "stop"],
    ["sorry written by a macro, in one branch", "by\n  constructor\n  · simp\n  · stop omega", "stop"],
    ["random testing that admits the goal", "by\n  intro h\n  plausible", "plausible"],
    ["random testing, Mathlib's old name", "by slim_check", "slim_check"],
    ["a compiled LRAT check (Lean.ofReduceBool)", "by bv_decide", "bv_decide"],
    ["a certificate read from a file", 'by bv_check "cert.lrat"', "bv_check"],
    ["a file read while elaborating", 'by\n  have := include_str "/etc/hostname"\n  simp', "include_str"],
    ["a term run in the interpreter (Mathlib's eval%)", "by exact (eval% n + 0 = n : Prop) ▸ rfl", "eval%"],
    ["an elaborator registered by a where-declaration", "by exact h\nwhere @[tactic simp] h : True := trivial", "attribute (not allowed"],
    ["code run at initialisation, on a let rec", "by\n  let rec @[init] go : Nat := 0\n  simp", "attribute (not allowed"],
    [
      "an unexpander, beside an allowed attribute",
      "by exact h\nwhere @[simp, app_unexpander Nat.add] h : True := trivial",
      "attribute (not allowed",
    ],
    ["sorry on every goal", "by\n  cases n\n  all_goals sorry", "sorry"],
    ["sorry, «escaped»", "by exact «sorry»", "sorry"],
    ["sorryAx from the root", "by exact _root_.sorryAx _ false", "sorryAx"],
    ["sorry in a termination proof", "by simp\ndecreasing_by sorry", "sorry"],
    ["local notation after the body", 'by simp\nlocal notation "X" => 1', "a command"],
    ["a deriving handler", "by simp\nderiving instance Repr for Nat", "a command"],
    [
      "an option that only traces, but is not on the list",
      "by\n  set_option trace.Meta.Tactic.simp true in simp",
      "set_option (not allowed",
    ],
  ])("%s", async (_what, proof, construct) => {
    const response = await verify(proof);
    expect(response.verdict, proof).toBe(Verdict.REJECTED);
    expect(response.decidedBy, proof).toBe(VerdictTier.SCREEN);
    // "banned `stop` at …" when the text is the construct's name, else "banned attribute (…) (`@[tactic`) at …".
    expect(
      response.reason.startsWith(`banned ${construct}`) || response.reason.startsWith(`banned \`${construct}\``),
      response.reason,
    ).toBe(true);
  });
});

describe("red team: the screen lexes numerals and string gaps as Lean does", () => {
  it.each([
    ["by exact 2_axiom cheat : False", "1:11"],
    ["by\n  simp\n  exact 0x_1_theorem target (n : ℕ) : n + 0 = n := by simp", "3:13"],
    ["by exact h.0_axiom cheat : False", "1:13"],
  ])("refuses %j: Lean's numeral fails at the `_`, then reads the command after it", async (proof, at) => {
    const response = await verify(proof);
    expect(response).toMatchObject({ verdict: Verdict.REJECTED, decidedBy: VerdictTier.SCREEN });
    expect(response.reason).toBe(
      `the proof does not lex as Lean: unexpected character (a digit must follow \`_\` in a numeral) at proof ${at}`,
    );
  });

  it.each([
    ['by\n  have := "x\\\n\n#eval 1"\n  simp', "unexpected additional newline in string gap at proof 3:0"],
    ['by\n  have := "x\\\r#eval 1"\n  simp', "invalid escape sequence at proof 2:13"],
  ])("refuses %j: Lean stops inside the string gap and reads the rest of the string as code", async (proof, error) => {
    const response = await verify(proof);
    expect(response).toMatchObject({ verdict: Verdict.REJECTED, decidedBy: VerdictTier.SCREEN });
    expect(response.reason).toBe(`the proof does not lex as Lean: ${error}`);
  });

  it.each([
    ["by simp\r#eval 1", "isolated carriage returns are not allowed at proof 1:7"],
    ["by\n\tsimp", "tabs are not allowed; please configure your editor to expand them at proof 2:0"],
    ["by exact 2.foo", "unexpected identifier after decimal point; consider parenthesizing the number at proof 1:9"],
  ])("refuses %j: Lean's whitespace or numeral fails there", async (proof, error) => {
    const response = await verify(proof);
    expect(response).toMatchObject({ verdict: Verdict.REJECTED, decidedBy: VerdictTier.SCREEN });
    expect(response.reason).toBe(`the proof does not lex as Lean: ${error}`);
  });

  it("proves an honest numeral with separators", async () => {
    const response = await harness.client.verify({
      theorem: { statement: "theorem million : 1_000_000 = 10 ^ 6", header },
      proof: "by norm_num",
    });
    expect(response.verdict).toBe(Verdict.PROVED);
  });
});

describe("red team: a sorry the screen cannot know of is not PROVED", () => {
  it("a macro's sorry, shown only as Lean's warning: INCOMPLETE, with sorryAx among the axioms", async () => {
    const response = await verify("by unknown_sorry_macro");
    expect(response).toMatchObject({ verdict: Verdict.INCOMPLETE, decidedBy: VerdictTier.REPL, reason: "the proof contains sorry" });
    expect(response.sorries).toEqual([]);
    expect(response.axioms).toContain("sorryAx");
  });

  it("a goal admitted without a warning: INCOMPLETE, because the theorem depends on sorryAx", async () => {
    const response = await verify("by\n  intro\n  unknown_admitting_tactic");
    expect(response).toMatchObject({ verdict: Verdict.INCOMPLETE, decidedBy: VerdictTier.REPL });
    expect(response.reason).toContain("sorryAx");
    expect(response.axioms).toEqual(["propext", "sorryAx"]);
  });
});
