// Tactic-mode sessions. A session's proof states live in one REPL process (a worker
// incarnation), so its requests are pinned there. A session idle for longer than
// the idle limit is forgotten; one whose worker restarted is kept as "lost" until
// then, so its client learns why rather than "not found".
import { randomUUID } from "node:crypto";
import type { EndKind } from "../repl/repl-failure.js";
import type { WorkerPin } from "../pool/repl-pool.js";

export interface ProofSession {
  readonly id: string;
  readonly pin: WorkerPin;
  readonly theoremName: string;
  /** The header the session's statement was elaborated on (its token table screens the tactics). */
  readonly header: string;
  /** The theorem's context: the atoms its notation declares are read in the tactics too. */
  readonly context: string;
  /** Proof states this session created; a tactic may run only on these. */
  readonly states: Set<number>;
  lastUsed: number;
  /** Why the session cannot continue (its worker restarted); undefined while it can. */
  lost: string | undefined;
}

export class SessionNotFound extends Error {
  override name = "SessionNotFound";
}

export class SessionLost extends Error {
  override name = "SessionLost";
}

export class ProofSessions {
  private readonly sessions = new Map<string, ProofSession>();

  constructor(
    private readonly idleMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  open(pin: WorkerPin, theoremName: string, initialState: number, header = "", context = ""): ProofSession {
    const session: ProofSession = {
      id: randomUUID(),
      pin,
      theoremName,
      header,
      context,
      states: new Set([initialState]),
      lastUsed: this.now(),
      lost: undefined,
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** A live session, touched; throws SessionNotFound or SessionLost. */
  use(id: string): ProofSession {
    this.sweep();
    const session = this.sessions.get(id);
    if (!session) throw new SessionNotFound(notFound(id, this.idleMs));
    if (session.lost) throw new SessionLost(lostMessage(id, session.lost));
    session.lastUsed = this.now();
    return session;
  }

  end(id: string): void {
    this.sweep();
    if (!this.sessions.delete(id)) throw new SessionNotFound(notFound(id, this.idleMs));
  }

  /** Marks every session of the worker lost: its proof states died with the process. */
  workerEnded(workerId: number, kind: EndKind): void {
    for (const session of this.sessions.values()) {
      if (session.pin.workerId === workerId && !session.lost) session.lost = restarted(kind);
    }
  }

  /** Live sessions on a worker. */
  countOn(workerId: number): number {
    let count = 0;
    for (const session of this.sessions.values()) if (session.pin.workerId === workerId && !session.lost) count++;
    return count;
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Forgets sessions idle past the limit. */
  sweep(): void {
    const cutoff = this.now() - this.idleMs;
    for (const [id, session] of this.sessions) if (session.lastUsed < cutoff) this.sessions.delete(id);
  }
}

/** The error for a session whose worker restarted (also when a queued request of it learns so first). */
export function sessionLost(id: string, kind: EndKind): SessionLost {
  return new SessionLost(lostMessage(id, restarted(kind)));
}

function restarted(kind: EndKind): string {
  return `the REPL worker holding its proof states was restarted (${kind})`;
}

function lostMessage(id: string, why: string): string {
  return `session ${id} is lost: ${why}; start the proof again with StartProof`;
}

function notFound(id: string, idleMs: number): string {
  return `no tactic session ${JSON.stringify(id)}: it was ended, was idle for more than ${idleMs} ms (repl.session_idle_ms), or never existed`;
}
