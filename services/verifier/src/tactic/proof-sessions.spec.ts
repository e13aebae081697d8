import { describe, expect, it } from "vitest";
import { ProofSessions, SessionElsewhere, SessionLost, SessionNotFound } from "./proof-sessions.js";

function clock() {
  let now = 1_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("ProofSessions", () => {
  it("opens sessions pinned to a worker incarnation with their first state", () => {
    const sessions = new ProofSessions(1_000);
    const session = sessions.open({ workerId: 1, generation: 3 }, "t", 7);
    expect(session.pin).toEqual({ workerId: 1, generation: 3 });
    expect([...session.states]).toEqual([7]);
    expect(sessions.use(session.id)).toBe(session);
    expect(sessions.countOn(1)).toBe(1);
    expect(sessions.countOn(0)).toBe(0);
  });

  it("forgets sessions idle past the limit; use keeps one alive", () => {
    const time = clock();
    const sessions = new ProofSessions(1_000, time.now);
    const kept = sessions.open({ workerId: 0, generation: 1 }, "t", 0);
    const idle = sessions.open({ workerId: 0, generation: 1 }, "t", 1);
    time.advance(800);
    sessions.use(kept.id);
    time.advance(800);
    expect(sessions.use(kept.id)).toBe(kept);
    expect(() => sessions.use(idle.id)).toThrow(SessionNotFound);
    expect(() => sessions.use(idle.id)).toThrow(/was idle for more than 1000 ms \(repl.session_idle_ms\)/);
    expect(sessions.size).toBe(1);
  });

  it("marks the sessions of a restarted worker lost, and says so until they expire", () => {
    const time = clock();
    const sessions = new ProofSessions(1_000, time.now);
    const onZero = sessions.open({ workerId: 0, generation: 1 }, "t", 0);
    const onOne = sessions.open({ workerId: 1, generation: 1 }, "t", 0);
    sessions.workerEnded(0, "timeout");
    expect(() => sessions.use(onZero.id)).toThrow(SessionLost);
    expect(() => sessions.use(onZero.id)).toThrow("was restarted (timeout); start the proof again with StartProof");
    expect(sessions.use(onOne.id)).toBe(onOne);
    expect(sessions.countOn(0)).toBe(0);
    time.advance(1_001);
    expect(() => sessions.use(onZero.id)).toThrow(SessionNotFound);
  });

  it("ends a session once; an unknown id is not found", () => {
    const sessions = new ProofSessions(1_000);
    const session = sessions.open({ workerId: 0, generation: 1 }, "t", 0);
    sessions.end(session.id);
    expect(() => sessions.end(session.id)).toThrow(SessionNotFound);
    expect(() => sessions.use("nope")).toThrow('no tactic session "nope"');
  });

  it("names the process that opened a session id, and tells another process's session from an expired one", () => {
    const time = clock();
    const before = new ProofSessions(1_000, time.now, "aaaaaaaaaaaa");
    const after = new ProofSessions(1_000, time.now, "bbbbbbbbbbbb");
    const session = before.open({ workerId: 0, generation: 1 }, "t", 0);
    expect(session.id).toMatch(/^aaaaaaaaaaaa\.[0-9a-f-]{36}$/);
    // The replica restarted (a new process) or another replica was asked.
    expect(() => after.use(session.id)).toThrow(SessionElsewhere);
    expect(() => after.use(session.id)).toThrow(
      /opened by verifier process aaaaaaaaaaaa, and this is bbbbbbbbbbbb: the replica .* was restarted/,
    );
    expect(() => after.end(session.id)).toThrow(SessionElsewhere);
    // The same process, after the idle limit: expired, not elsewhere.
    time.advance(1_500);
    expect(() => before.use(session.id)).toThrow(SessionNotFound);
    expect(() => before.use("no-such-session")).toThrow(SessionNotFound);
    expect(new ProofSessions(1_000).instance).toMatch(/^[0-9a-f]{12}$/);
  });
});
