// The connections a server holds, capped in all and per peer address, and timed.
// Anything an anonymous client can open costs a file descriptor, so this is what keeps
// a flood of idle or half-open connections from taking the process to its open-file
// limit:
// - at a cap the newcomer takes the place of the connection idle longest (one with no
//   call open: a half-finished handshake, an HTTP/2 session that never called, a
//   keep-alive socket between requests), so holding connections buys an attacker
//   nothing and a new caller (a health probe, a client that reconnects) still gets in;
//   only when every connection in the scope has a call open is the newcomer refused;
// - a connection must open its first call within the handshake deadline (a TLS
//   handshake, a protocol, a header block that never ends all count against it);
// - one idle past the idle timeout is closed by its engine (HTTP/2: GOAWAY), and cut
//   here a handshake deadline later if it is still open (a peer that ignores GOAWAY,
//   or holds an unfinished header block open, which keeps Node's session alive).
import type { Socket } from "node:net";

export interface ConnectionRules {
  /** Connections at once; 0 = no cap. */
  max: number;
  /** Connections from one peer address at once; 0 = no cap. */
  perPeer: number;
  /** From accepting a connection to its first call, ms. */
  handshakeTimeoutMs: number;
  /** A connection with no call open this long is due to close, ms; 0 = never. */
  idleTimeoutMs: number;
  /** Asks the engine that serves a connection to close it gracefully (HTTP/2: GOAWAY); called once per idle spell. */
  onIdle?(key: string): void;
}

interface Held {
  key: string;
  peer: string;
  socket: Socket;
  openCalls: number;
  /** Since when it has had no call open (epoch ms). */
  idleSince: number;
  acceptedAt: number;
  everCalled: boolean;
  /** Whether the engine has been asked to close it since it last went idle. */
  toldIdle: boolean;
}

export class ConnectionRegistry {
  private readonly held = new Map<string, Held>();
  private readonly byPeer = new Map<string, Set<Held>>();
  /** Connections closed to make room for newer ones, since start. */
  evicted = 0;
  /** Connections refused because every one in their scope had a call open, since start. */
  refused = 0;
  /** Connections closed by the handshake deadline or the idle backstop, since start. */
  timedOut = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly caps: ConnectionRules) {
    // The deadlines are enforced by one periodic sweep, not a timer per connection.
    this.sweeper = setInterval(() => this.sweep(), Math.max(50, Math.min(1_000, caps.handshakeTimeoutMs / 4)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.held.size;
  }

  /**
   * Registers an accepted socket, making room at a cap by closing the connection idle
   * longest; returns its key, or undefined when there is no room (the caller closes it).
   */
  admit(socket: Socket): string | undefined {
    const peer = socket.remoteAddress;
    if (peer === undefined) return undefined; // already gone
    const key = `${peer}|${socket.remotePort}`;
    const peerSet = this.byPeer.get(peer);
    if (this.caps.perPeer > 0 && (peerSet?.size ?? 0) >= this.caps.perPeer && !this.evictIdlest(peerSet!)) {
      this.refused++;
      return undefined;
    }
    if (this.caps.max > 0 && this.held.size >= this.caps.max && !this.evictIdlest(this.held.values())) {
      this.refused++;
      return undefined;
    }
    const now = Date.now();
    const entry: Held = { key, peer, socket, openCalls: 0, idleSince: now, acceptedAt: now, everCalled: false, toldIdle: false };
    this.held.set(key, entry);
    if (peerSet) peerSet.add(entry);
    else this.byPeer.set(peer, new Set([entry]));
    socket.once("close", () => this.forget(entry));
    return key;
  }

  callOpened(key: string): void {
    const entry = this.held.get(key);
    if (entry === undefined) return;
    entry.openCalls++;
    entry.everCalled = true;
  }

  callEnded(key: string): void {
    const entry = this.held.get(key);
    if (entry === undefined || entry.openCalls === 0) return;
    entry.openCalls--;
    if (entry.openCalls === 0) {
      entry.idleSince = Date.now();
      entry.toldIdle = false;
    }
  }

  /** Closes every connection with no call open (a drain's first step); returns how many. */
  closeIdle(): number {
    let closed = 0;
    for (const entry of [...this.held.values()]) {
      if (entry.openCalls > 0) continue;
      entry.socket.destroy();
      this.forget(entry);
      closed++;
    }
    return closed;
  }

  /** Stops the deadlines (the server is closing). */
  close(): void {
    clearInterval(this.sweeper);
  }

  private sweep() {
    const now = Date.now();
    const { handshakeTimeoutMs, idleTimeoutMs } = this.caps;
    for (const entry of [...this.held.values()]) {
      if (entry.openCalls > 0) continue;
      if (entry.everCalled && idleTimeoutMs > 0 && !entry.toldIdle && now - entry.idleSince > idleTimeoutMs) {
        entry.toldIdle = true;
        this.caps.onIdle?.(entry.key);
      }
      const late = entry.everCalled
        ? idleTimeoutMs > 0 && now - entry.idleSince > idleTimeoutMs + handshakeTimeoutMs
        : now - entry.acceptedAt > handshakeTimeoutMs;
      if (!late) continue;
      entry.socket.destroy();
      this.forget(entry);
      this.timedOut++;
    }
  }

  private evictIdlest(scope: Iterable<Held>): boolean {
    let idlest: Held | undefined;
    for (const entry of scope) {
      if (entry.openCalls === 0 && (idlest === undefined || entry.idleSince < idlest.idleSince)) idlest = entry;
    }
    if (idlest === undefined) return false;
    idlest.socket.destroy();
    this.forget(idlest);
    this.evicted++;
    return true;
  }

  private forget(entry: Held) {
    if (this.held.get(entry.key) !== entry) return;
    this.held.delete(entry.key);
    const peerSet = this.byPeer.get(entry.peer);
    peerSet?.delete(entry);
    if (peerSet?.size === 0) this.byPeer.delete(entry.peer);
  }
}
