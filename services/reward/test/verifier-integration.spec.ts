// ScoreGroup and Score calling the real verifier over gRPC (its REPL workers are
// the REPL stand-in, tests/fakes/lean-repl), in parallel and within the caller's deadline.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { completion, leanAnswer, leanTheorem } from "./messages.js";
import { startRewardServer, type RewardServer } from "./support/server.js";
import { startVerifierProcess, type VerifierProcess } from "../../../tests/support/verifier-process.js";

const theorem = leanTheorem({ imports: ["Mathlib"], domain: "algebra" });

// What the stand-in answers for each proof, as Lean would: positions are in the
// checked source "theorem add_zero' (n : Nat) : n + 0 = n := by ...", where the
// proof starts at column 44.
const rules = {
  rules: [
    { when: { cmd: { includes: ":= by simp" } }, declares: { axioms: ["propext"] } },
    {
      when: { cmd: { includes: ":= by linarith" } },
      reply: {
        json: { messages: [{ severity: "error", pos: { line: 1, column: 47 }, endPos: { line: 1, column: 55 }, data: "linarith failed" }] },
      },
    },
    {
      when: { cmd: { includes: ":= by skip" } },
      reply: {
        json: {
          messages: [
            {
              severity: "error",
              pos: { line: 1, column: 44 },
              endPos: { line: 1, column: 51 },
              data: "unsolved goals\nn : Nat\n⊢ n + 0 = n",
            },
          ],
        },
      },
    },
    { when: { cmd: { includes: ":= by slowly" } }, declares: { axioms: [] }, fault: { kind: "slow", ms: 5_000 } },
  ],
};

let verifier: VerifierProcess;
let reward: RewardServer;
beforeAll(async () => {
  verifier = await startVerifierProcess(rules, ["repl.pool_size=2"]);
  reward = await startRewardServer([`verifier.url=${verifier.url}`, "reward.preset=shaped"]);
}, 60_000);
afterAll(async () => {
  await reward?.stop();
  await verifier?.stop();
});

describe("RewardService with the verifier", () => {
  it("verifies every completion of a group and rewards by the verdicts", async () => {
    const response = await reward.client.scoreGroup(
      {
        theorem,
        groupId: "g-verify",
        completions: [
          completion(leanAnswer("by simp")),
          completion(leanAnswer("by linarith")),
          completion(leanAnswer("by skip")),
          completion(leanAnswer("by native_decide")),
          completion(""),
        ],
      },
      { timeoutMs: 30_000 },
    );
    const verdicts = response.results.map((r) => r.verification?.verdict);
    expect(verdicts).toEqual([Verdict.PROVED, Verdict.ERROR, Verdict.INCOMPLETE, Verdict.REJECTED, undefined]);
    expect(response.results[0]!.verification!.checkedSource).toBe("theorem add_zero' (n : Nat) : n + 0 = n := by simp");
    const leanProof = response.results.map((r) => r.components.find((c) => c.scorer === "lean_proof")!.value);
    // Proved 1; ERROR with one error and nothing else: 0.3; one goal left: 0.3; REJECTED and empty: 0.
    expect(leanProof).toEqual([1, 0.3, 0.3, 0, 0]);
    expect(response.passRate).toBe(0.2);
    expect(response.results[0]!.solved).toBe(true);
  });

  it("ends the call at the caller's deadline while the verifier is still checking", async () => {
    let error: ConnectError | undefined;
    try {
      await reward.client.score({ theorem, completion: completion(leanAnswer("by slowly")) }, { timeoutMs: 500 });
    } catch (e) {
      error = ConnectError.from(e);
    }
    expect(error?.code).toBe(Code.DeadlineExceeded);
  });
});
