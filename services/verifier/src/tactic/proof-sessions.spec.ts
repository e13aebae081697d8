import { describe, expect, it } from "vitest";
import { ProofSessions, SessionLost, SessionNotFound } from "./proof-sessions.js";

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
});
