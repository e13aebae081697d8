// Verify and VerifyBatch through gRPC, against the REPL stand-in speaking the real
// protocol: what the service sends (header once, the joined source on the header's
// env, `#print axioms` on the proof's env), and the verdict for each kind of answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { Severity, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { leanErrorReply, standIn, type StandIn } from "./support/stand-in.js";
import { rejection, startVerifier, type Harness } from "./support/verifier-harness.js";

const theorem = {
  name: "add_zero'",
  statement: "theorem add_zero' (n : Nat) : n + 0 = n := by sorry",
  imports: ["Mathlib"],
};

const repl: StandIn = standIn({
  rules: [
    { when: { cmd: { includes: "by simp" } }, declares: { axioms: ["propext"] } },
    { when: { cmd: { includes: "by classical_axioms" } }, declares: { axioms: ["Classical.choice", "propext", "Quot.sound"] } },
    { when: { cmd: { includes: "by cheat" } }, declares: { axioms: ["propext", "my_false"] } },
    { when: { cmd: { includes: "by sorry_hidden" } }, declares: { axioms: ["sorryAx"] } },
    // A proof that elaborates without declaring the theorem (what #exit would do).
    { when: { cmd: { includes: "by vanish" } } },
    { when: { cmd: { includes: "by wrong" } }, reply: { transcript: "dup_msg", response: 2 } },
    { when: { cmd: { includes: "by induction'" } }, reply: { transcript: "mathlib/H20231115_3", response: 1 } },
    { when: { cmd: { includes: "by sorryish" } }, reply: { transcript: "tactic_sorry", response: 0 }, declares: { axioms: ["sorryAx"] } },
    { when: { cmd: { includes: "by slowly" } }, declares: { axioms: [] }, fault: { kind: "slow", ms: 400 } },
    // Lean's answer when the header lacks what the statement names (`Nat.Prime` is Mathlib's): the
    // error sits in the statement, and the proof elaborates against a statement Lean could not read.
    {
      when: { cmd: { startsWith: "theorem prime_two : Nat.Prime 2 :=" } },
      reply: leanErrorReply(1, 20, 29, "unknown identifier 'Nat.Prime'"),
    },
  ],
});

let harness: Harness;
beforeAll(async () => {
  harness = await startVerifier({ repl: { command: repl.command, pool_size: 2 } });
});
afterAll(async () => {
  await harness.close();
  repl.cleanup();
});

const verify = (proof: string, extra: Record<string, unknown> = {}) => harness.client.verify({ theorem, proof, ...extra });

describe("Verify", () => {
  it("proves a proof with no error, no sorry, the theorem present and standard axioms", async () => {
    const response = await verify("by simp");
    expect(response.verdict).toBe(Verdict.PROVED);
    expect(response.axioms).toEqual(["propext"]);
    expect(response.checkedSource).toBe("theorem add_zero' (n : Nat) : n + 0 = n := by simp");
    expect(response.timings!.totalMs).toBeGreaterThan(0);
    expect(response.timings!.leanMs).toBeGreaterThan(0);
    const classical = await verify("by classical_axioms");
    expect(classical.verdict).toBe(Verdict.PROVED);
  });

  it("sends the header once per worker, the proof on the header's env and #print axioms on the proof's env", async () => {
    await verify("by simp");
    await verify(":= by simp");
    const sent = repl.requests().map((logged) => logged.request);
    const headers = sent.filter((request) => request.kind === "command" && request.env === undefined);
    const pids = new Set(repl.requests().map((logged) => logged.pid));
    expect(headers.length).toBeLessThanOrEqual(pids.size);
    expect(headers.every((request) => request.kind === "command" && request.cmd === "import Mathlib")).toBe(true);
    const last = sent.slice(-2);
    expect(last[0]).toMatchObject({ kind: "command", cmd: "theorem add_zero' (n : Nat) : n + 0 = n := by simp" });
    expect(last[1]).toMatchObject({ kind: "command", cmd: "#print axioms _root_.add_zero'" });
  });

  it("reports a non-standard axiom as ERROR and sorryAx as INCOMPLETE", async () => {
    const cheat = await verify("by cheat");
    expect(cheat.verdict).toBe(Verdict.ERROR);
    expect(cheat.reason).toBe("the theorem depends on non-standard axioms: my_false");
    const hidden = await verify("by sorry_hidden");
    expect(hidden.verdict).toBe(Verdict.INCOMPLETE);
    expect(hidden.reason).toContain("sorryAx");
  });

  it("reports ERROR when the theorem is missing from the environment after the proof", async () => {
    const response = await verify("by vanish");
    expect(response.verdict).toBe(Verdict.ERROR);
    expect(response.reason).toContain("is not in the environment");
  });

  it("reports Lean errors, unsolved goals and sorries from the real response shapes", async () => {
    const wrong = await verify("by wrong");
    expect(wrong.verdict).toBe(Verdict.ERROR);
    expect(wrong.reason).toBe("Unknown identifier `g` (at 1:7)");
    expect(wrong.messages[0]).toMatchObject({ severity: Severity.ERROR, data: "Unknown identifier `g`" });
    expect(wrong.progress!.errorCount).toBe(1);

    const unsolved = await verify("by induction' x with x hx");
    expect(unsolved.verdict).toBe(Verdict.INCOMPLETE);
    expect(unsolved.goals).toEqual(["case zero\n⊢ 0 + 1 > 0", "case succ\nx : Nat\nhx : x + 1 > x\n⊢ x + 1 + 1 > x + 1"]);
    expect(unsolved.progress!.goalsRemaining).toBe(2);

    const sorryish = await verify("by sorryish");
    expect(sorryish.verdict).toBe(Verdict.INCOMPLETE);
    expect(sorryish.reason).toBe("the proof contains sorry");
    expect(sorryish.sorries).toHaveLength(1);
    expect(sorryish.goals).toEqual(["⊢ Nat"]);
  });

  it("says when the theorem itself does not elaborate under its header (theorem_error), and not for a proof's error", async () => {
    const primeTwo = { name: "prime_two", statement: "theorem prime_two : Nat.Prime 2", imports: ["Mathlib"] };
    const broken = await harness.client.verify({ theorem: primeTwo, proof: "by norm_num" });
    expect(broken.verdict).toBe(Verdict.ERROR);
    expect(broken.reason).toBe("unknown identifier 'Nat.Prime' (at 1:20)");
    expect(broken.theoremError).toBe("1:20: unknown identifier 'Nat.Prime'");
    // The same in a batch, beside a good proof.
    const items = [
      { theorem: primeTwo, proof: "by decide" },
      { theorem, proof: "by simp" },
    ];
    const batch = new Map<number, string>();
    for await (const item of harness.client.verifyBatch({ items })) batch.set(item.index, item.result!.theoremError);
    expect(batch).toEqual(
      new Map([
        [0, "1:20: unknown identifier 'Nat.Prime'"],
        [1, ""],
      ]),
    );
    expect((await verify("by cheat")).theoremError).toBe("");
  });

  it("rejects banned constructs before Lean runs", async () => {
    const before = repl.requests().length;
    const response = await verify("by\n  -- sorry is fine in a comment\n  native_decide");
    expect(response.verdict).toBe(Verdict.REJECTED);
    expect(response.reason).toBe(
      "banned `native_decide` at proof 3:2: it trusts compiled code instead of a kernel-checked proof (axiom Lean.ofReduceBool)",
    );
    const redeclared = await verify("by simp\ntheorem add_zero' : True := trivial");
    expect(redeclared.verdict).toBe(Verdict.REJECTED);
    expect(redeclared.reason).toContain("redeclaring the theorem");
    expect(repl.requests().length).toBe(before);
  });

  it("answers INVALID_ARGUMENT naming the field for unusable requests", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ theorem: undefined, proof: "by simp" }, "theorem: is required"],
      [{ theorem: { ...theorem, statement: "" }, proof: "by simp" }, "theorem.statement: is empty"],
      [{ theorem: { ...theorem, statement: "example : True" }, proof: "trivial" }, "theorem.statement: must declare a named theorem"],
      [
        { theorem: { ...theorem, name: "other" }, proof: "by simp" },
        'theorem.name: is "other" but theorem.statement declares "add_zero\'"',
      ],
      [{ theorem: { ...theorem, imports: ["Mathlib", "not a module"] }, proof: "by simp" }, "theorem.imports[1]"],
      [{ theorem, proof: "" }, "proof: is empty"],
      [{ theorem, proof: "by simp", timeoutMs: 9_000_000 }, "timeout_ms: 9000000 ms is above the limit of 600000 ms (repl.max_timeout_ms)"],
    ];
    for (const [request, message] of cases) {
      const error = await rejection(harness.client.verify(request));
      expect(error.code, message).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toContain(message);
    }
  });

  it("answers RESOURCE_EXHAUSTED for a proof over repl.max_proof_bytes", async () => {
    const error = await rejection(verify(`by ${"simp; ".repeat(20_000)}`));
    expect(error.code).toBe(Code.ResourceExhausted);
    expect(error.rawMessage).toMatch(/^proof: \d+ bytes is above the limit of 65536 bytes \(repl.max_proof_bytes\)$/);
  });
});

describe("VerifyBatch", () => {
  it("streams every result tagged with its index, in completion order", async () => {
    const proofs = ["by slowly", "by simp", "by wrong", "by sorry", "by simp"];
    const results = new Map<number, Verdict>();
    const order: number[] = [];
    for await (const item of harness.client.verifyBatch({ items: proofs.map((proof) => ({ theorem, proof })) })) {
      results.set(item.index, item.result!.verdict);
      order.push(item.index);
    }
    expect([...results.keys()].sort()).toEqual([0, 1, 2, 3, 4]);
    expect(results.get(0)).toBe(Verdict.PROVED);
    expect(results.get(2)).toBe(Verdict.ERROR);
    expect(results.get(3)).toBe(Verdict.REJECTED);
    // The slow first item does not hold back the others (two workers).
    expect(order[0]).not.toBe(0);
  });

  it("fails the whole call naming the bad item before checking any", async () => {
    const before = repl.requests().length;
    const stream = harness.client.verifyBatch({
      items: [
        { theorem, proof: "by simp" },
        { theorem, proof: "" },
      ],
    });
    const error = await rejection(
      (async () => {
        for await (const _ of stream) void _;
      })(),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toBe("items[1].proof: is empty");
    expect(repl.requests().length).toBe(before);
  });
});
