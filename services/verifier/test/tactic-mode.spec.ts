// StartProof / ApplyTactic / EndProof through gRPC against the stand-in, answering
// with the proof_branching transcript (a real tactic-mode session).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { Severity, TacticStatus, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { standIn, type Rule, type StandIn } from "./support/stand-in.js";
import { rejection, startVerifier, type Harness } from "./support/verifier-harness.js";

const statement = "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r";
const theorem = { name: "complex_and", statement, imports: ["Mathlib"] };

const rules: Rule[] = [
  { when: { cmd: { equals: `${statement} := by sorry` } }, reply: { transcript: "proof_branching", response: 0 } },
  { when: { cmd: { includes: "bad_statement" } }, reply: { transcript: "dup_msg", response: 2 } },
  { when: { cmd: { includes: "by trivial" } }, declares: { axioms: [] } },
  { when: { tactic: { equals: "apply And.intro" } }, reply: { transcript: "proof_branching", response: 1 } },
  { when: { tactic: { equals: "exact h1.left" } }, reply: { transcript: "proof_branching", response: 2 } },
  { when: { tactic: { equals: "apply h2" } }, reply: { transcript: "proof_branching", response: 3 } },
  { when: { tactic: { equals: "exact h1.right" } }, reply: { transcript: "proof_branching", response: 4 } },
  { when: { tactic: { equals: "exat 42" } }, reply: { transcript: "unknown_tactic", response: 1 } },
  { when: { tactic: { equals: "spin" } }, reply: { json: { goals: [] } }, fault: { kind: "hang" } },
];

const code = (error: unknown) => ConnectError.from(error).code;

describe("tactic mode", () => {
  let repl: StandIn;
  let harness: Harness;
  beforeAll(async () => {
    repl = standIn({ rules });
    harness = await startVerifier({ repl: { command: repl.command, pool_size: 2, timeout_ms: 500 } });
  });
  afterAll(async () => {
    await harness.close();
    repl.cleanup();
  });

  it("proves a theorem step by step, then ends the session", async () => {
    const start = await harness.client.startProof({ theorem });
    expect(start.goals).toEqual(["p q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ p ∧ r"]);
    expect(start.messages).toEqual([]); // the sorry warning is dropped
    const session = start.sessionId;
    const split = await harness.client.applyTactic({ sessionId: session, proofState: start.proofState, tactic: "apply And.intro" });
    expect(split.status).toBe(TacticStatus.INCOMPLETE);
    expect(split.goals).toHaveLength(2);
    const left = await harness.client.applyTactic({ sessionId: session, proofState: split.proofState!, tactic: "exact h1.left" });
    const right = await harness.client.applyTactic({ sessionId: session, proofState: left.proofState!, tactic: "apply h2" });
    expect(right.goals).toEqual(["case right\np q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ q"]);
    const done = await harness.client.applyTactic({ sessionId: session, proofState: right.proofState!, tactic: "exact h1.right" });
    expect(done.status).toBe(TacticStatus.COMPLETED);
    expect(done.goals).toEqual([]);
    await harness.client.endProof({ sessionId: session });
    const after = await harness.client.applyTactic({ sessionId: session, proofState: done.proofState!, tactic: "rfl" }).catch(code);
    expect(after).toBe(Code.NotFound);
    expect(await harness.client.endProof({ sessionId: session }).catch(code)).toBe(Code.NotFound);
  });

  it("runs each session's tactics on the worker that holds its proof states", async () => {
    const starts = await Promise.all([harness.client.startProof({ theorem }), harness.client.startProof({ theorem })]);
    await Promise.all(
      starts.map((start) =>
        harness.client.applyTactic({ sessionId: start.sessionId, proofState: start.proofState, tactic: "apply And.intro" }),
      ),
    );
    const logged = repl.requests();
    for (const start of starts) {
      // The stand-in numbers proof states per process, as the REPL does: a tactic sent
      // to the wrong process would name a state that process may not have.
      const startedOn = logged.filter((l) => l.request.kind === "command" && l.request.cmd.endsWith("by sorry")).map((l) => l.pid);
      const tacticsOn = logged.filter((l) => l.request.kind === "tactic" && l.request.proofState === start.proofState).map((l) => l.pid);
      expect(tacticsOn.every((pid) => startedOn.includes(pid))).toBe(true);
    }
    const stats = await harness.client.poolStats({});
    expect(stats.workerStats.reduce((sum, worker) => sum + worker.sessions, 0)).toBeGreaterThanOrEqual(2);
    for (const start of starts) await harness.client.endProof({ sessionId: start.sessionId });
  });

  it("answers ERROR for a tactic Lean refuses, and the state stays usable", async () => {
    const start = await harness.client.startProof({ theorem });
    const typo = await harness.client.applyTactic({ sessionId: start.sessionId, proofState: start.proofState, tactic: "exat 42" });
    expect(typo.status).toBe(TacticStatus.ERROR);
    expect(typo.proofState).toBeUndefined();
    expect(typo.messages[0]).toMatchObject({ severity: Severity.ERROR, data: "Lean error:\n<input>:1:1: unknown tactic" });
    const retry = await harness.client.applyTactic({ sessionId: start.sessionId, proofState: start.proofState, tactic: "apply And.intro" });
    expect(retry.status).toBe(TacticStatus.INCOMPLETE);
    await harness.client.endProof({ sessionId: start.sessionId });
  });

  it("refuses a banned tactic before Lean runs, as an ERROR step", async () => {
    const start = await harness.client.startProof({ theorem });
    const before = repl.requests().length;
    const cheat = await harness.client.applyTactic({ sessionId: start.sessionId, proofState: start.proofState, tactic: "native_decide" });
    expect(cheat.status).toBe(TacticStatus.ERROR);
    expect(cheat.messages[0]!.data).toMatch(/^refused before Lean ran: banned `native_decide` at tactic 1:0/);
    expect(repl.requests().length).toBe(before);
    await harness.client.endProof({ sessionId: start.sessionId });
  });

  it("answers INVALID_ARGUMENT for a proof state of another session and for a statement that does not elaborate", async () => {
    const start = await harness.client.startProof({ theorem });
    const error = await rejection(harness.client.applyTactic({ sessionId: start.sessionId, proofState: 999, tactic: "simp" }));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toBe(
      `proof_state: 999 is not a proof state of session ${start.sessionId}; its states are ${start.proofState}`,
    );
    const bad = await rejection(
      harness.client.startProof({ theorem: { name: "bad_statement", statement: "theorem bad_statement : g = g", imports: ["Mathlib"] } }),
    );
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.rawMessage).toBe("theorem.statement: the statement does not elaborate: Unknown identifier `g`");
    await harness.client.endProof({ sessionId: start.sessionId });
  });

  it("a tactic past its time limit restarts the worker; the session is then FAILED_PRECONDITION", async () => {
    const start = await harness.client.startProof({ theorem });
    const spin = await rejection(harness.client.applyTactic({ sessionId: start.sessionId, proofState: start.proofState, tactic: "spin" }));
    expect(spin.code).toBe(Code.DeadlineExceeded);
    expect(spin.rawMessage).toBe(`the tactic ran past 500 ms; its worker was restarted and session ${start.sessionId} is lost`);
    const lost = await rejection(
      harness.client.applyTactic({ sessionId: start.sessionId, proofState: start.proofState, tactic: "apply And.intro" }),
    );
    expect(lost.code).toBe(Code.FailedPrecondition);
    expect(lost.rawMessage).toBe(
      `session ${start.sessionId} is lost: the REPL worker holding its proof states was restarted (timeout); start the proof again with StartProof`,
    );
  });

  it("answers NOT_FOUND for an unknown session", async () => {
    expect(await harness.client.applyTactic({ sessionId: "nope", proofState: 0, tactic: "simp" }).catch(code)).toBe(Code.NotFound);
  });
});

describe("tactic-mode sessions and the pool", () => {
  it("forgets idle sessions, and recycles a worker only once its sessions are over", async () => {
    const repl = standIn({ rules });
    const harness = await startVerifier({ repl: { command: repl.command, session_idle_ms: 1500, max_requests_per_worker: 2 } });
    try {
      const start = await harness.client.startProof({ theorem });
      const pid = (await harness.client.poolStats({})).workerStats[0]!.pid;
      let state = start.proofState;
      for (const tactic of ["apply And.intro", "exact h1.left", "apply h2"]) {
        state = (await harness.client.applyTactic({ sessionId: start.sessionId, proofState: state, tactic })).proofState!;
      }
      // Four requests, over the budget of two, but the live session keeps the worker.
      expect((await harness.client.poolStats({})).workerStats[0]!.pid).toBe(pid);
      await new Promise((resolve) => setTimeout(resolve, 1600));
      const expired = await harness.client
        .applyTactic({ sessionId: start.sessionId, proofState: state, tactic: "exact h1.right" })
        .catch(code);
      expect(expired).toBe(Code.NotFound);
      // With no session left, the next request is the last on this worker.
      expect((await harness.client.verify({ theorem, proof: "by trivial" })).verdict).toBe(Verdict.PROVED);
      expect((await harness.client.verify({ theorem, proof: "by trivial" })).verdict).toBe(Verdict.PROVED);
      const stats = await harness.client.poolStats({});
      expect(stats.restarts.recycle).toBe(1n);
      expect(new Set(repl.requests().map((logged) => logged.pid)).size).toBe(2);
    } finally {
      await harness.close();
      repl.cleanup();
    }
  });
});
