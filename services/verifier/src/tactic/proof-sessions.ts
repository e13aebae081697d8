// Tactic-mode sessions. A session's proof states live in one REPL process (a worker
// incarnation), so its requests are pinned there. A session idle for longer than
// the idle limit is forgotten; one whose worker restarted is kept as "lost" until
// then, so its client learns why rather than "not found". A session id starts with the
// id of the verifier process that opened it, so a replica asked about a session another
// process opened (the replica restarted, or the call was balanced elsewhere) says so
// rather than that the session expired.
import { randomBytes, randomUUID } from "node:crypto";
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

/** The session belongs to another verifier process: this one never held its proof states. */
export class SessionElsewhere extends Error {
  override name = "SessionElsewhere";
}

/** A fresh id for this verifier process: 12 hex digits, new at every start. */
export function newInstanceId(): string {
  return randomBytes(6).toString("hex");
}

export class ProofSessions {
  private readonly sessions = new Map<string, ProofSession>();

  constructor(
    private readonly idleMs: number,
    private readonly now: () => number = Date.now,
    /** This process's id, the prefix of every session id it hands out. */
    readonly instance: string = newInstanceId(),
  ) {}

  open(pin: WorkerPin, theoremName: string, initialState: number, header = "", context = ""): ProofSession {
    const session: ProofSession = {
      id: `${this.instance}.${randomUUID()}`,
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
    if (!session) throw this.missing(id);
    if (session.lost) throw new SessionLost(lostMessage(id, session.lost));
    session.lastUsed = this.now();
    return session;
  }

  end(id: string): void {
    this.sweep();
    if (!this.sessions.delete(id)) throw this.missing(id);
  }

  /** Why `id` is not here: another process opened it, or this one ended or forgot it. */
  private missing(id: string): Error {
    const dot = id.indexOf(".");
    const opener = dot > 0 ? id.slice(0, dot) : undefined;
    if (opener !== undefined && opener !== this.instance) {
      return new SessionElsewhere(
        `tactic session ${JSON.stringify(id)} was opened by verifier process ${opener}, and this is ${this.instance}: ` +
          "the replica that held it was restarted, or the call reached another replica than the one that answered StartProof; " +
          "its proof states are not here, start the proof again with StartProof",
      );
    }
    return new SessionNotFound(notFound(id, this.idleMs));
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
