// The connections a server holds, capped in all and per peer address. Anything an
// anonymous client can open costs a file descriptor, so the caps are what keeps a
// flood of idle or half-open connections from taking the process to its open-file
// limit. At a cap the newcomer takes the place of the connection idle longest (one
// with no call open: a half-finished handshake, an HTTP/2 session that never called,
// a keep-alive socket between requests): holding connections open then buys an
// attacker nothing, and a new caller (a health probe, a client that reconnects) still
// gets in. Only when every connection in the scope has a call open is it refused.
import type { Socket } from "node:net";

export interface ConnectionCaps {
  /** Connections at once; 0 = no cap. */
  max: number;
  /** Connections from one peer address at once; 0 = no cap. */
  perPeer: number;
}

interface Held {
  key: string;
  peer: string;
  socket: Socket;
  openCalls: number;
  /** Since when it has had no call open (epoch ms). */
  idleSince: number;
}

export class ConnectionRegistry {
  private readonly held = new Map<string, Held>();
  private readonly byPeer = new Map<string, Set<Held>>();
  /** Connections closed to make room for newer ones, since start. */
  evicted = 0;
  /** Connections refused because every one in their scope had a call open, since start. */
  refused = 0;

  constructor(private readonly caps: ConnectionCaps) {}

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
    const entry: Held = { key, peer, socket, openCalls: 0, idleSince: Date.now() };
    this.held.set(key, entry);
    if (peerSet) peerSet.add(entry);
    else this.byPeer.set(peer, new Set([entry]));
    socket.once("close", () => this.forget(entry));
    return key;
  }

  callOpened(key: string): void {
    const entry = this.held.get(key);
    if (entry) entry.openCalls++;
  }

  callEnded(key: string): void {
    const entry = this.held.get(key);
    if (entry === undefined || entry.openCalls === 0) return;
    entry.openCalls--;
    if (entry.openCalls === 0) entry.idleSince = Date.now();
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
