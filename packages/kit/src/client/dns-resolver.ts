// Turns a `dns:///host:port` target into one endpoint URL per address the name
// resolves to, and keeps that list fresh: on a timer, and on demand when a
// replica stops answering (it may have been rescheduled to a new address).
// `dns+https:///host:port` is the same over TLS: each address is dialled with TLS and
// its certificate checked for `host` (the name, not the address, is what it is issued for).
import { promises as dns } from "node:dns";

/** Returns every address `hostname` resolves to. */
export type Lookup = (hostname: string) => Promise<string[]>;

export const systemLookup: Lookup = async (hostname) => (await dns.lookup(hostname, { all: true })).map((a) => a.address);

export interface DnsTarget {
  host: string;
  port: number;
  /** `dns+https:///`: TLS to every address, the certificate checked for `host`. */
  tls: boolean;
}

/**
 * Parses `dns:///host:port` or `dns+https:///host:port` (an authority,
 * `dns://resolver/host:port`, is accepted and ignored).
 */
export function parseDnsTarget(target: string): DnsTarget {
  const match = /^dns(\+https)?:(?:\/\/[^/]*)?\/(?:\[([^\]]+)\]|([^:/]+)):(\d{1,5})$/.exec(target);
  const port = Number(match?.[4]);
  if (!match || port < 1 || port > 65535) {
    throw new Error(`invalid target "${target}": expected dns:///host:port or dns+https:///host:port`);
  }
  return { host: (match[2] ?? match[3])!, port, tls: match[1] !== undefined };
}

/** HTTP/2 base URL of one resolved address: plain text, or TLS for a dns+https target. */
export function endpointUrl(address: string, port: number, tls = false): string {
  const scheme = tls ? "https" : "http";
  return address.includes(":") ? `${scheme}://[${address}]:${port}` : `${scheme}://${address}:${port}`;
}

export interface DnsResolverOptions {
  target: string;
  refreshMs: number;
  lookup: Lookup;
  onUpdate: (urls: string[]) => void;
}

export class DnsResolver {
  private readonly host: string;
  private readonly port: number;
  private readonly tls: boolean;
  private readonly timer: NodeJS.Timeout;
  private pending: Promise<void> | undefined;
  private lastError: unknown;

  constructor(private readonly options: DnsResolverOptions) {
    ({ host: this.host, port: this.port, tls: this.tls } = parseDnsTarget(options.target));
    // unref: a refresh timer alone must not keep a process alive.
    this.timer = setInterval(() => void this.refresh(), options.refreshMs).unref();
    void this.refresh();
  }

  /** Why the latest lookup failed; undefined after a successful one. */
  get error(): unknown {
    return this.lastError;
  }

  /**
   * Looks the name up unless a lookup is already running; never rejects. A
   * failed or empty lookup keeps the previous list: stale addresses beat none.
   */
  refresh(): Promise<void> {
    this.pending ??= this.lookupOnce().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async lookupOnce(): Promise<void> {
    try {
      const addresses = [...new Set(await this.options.lookup(this.host))];
      if (addresses.length === 0) throw new Error(`${this.host} resolved to no addresses`);
      this.lastError = undefined;
      this.options.onUpdate(addresses.map((a) => endpointUrl(a, this.port, this.tls)));
    } catch (error) {
      this.lastError = error;
    }
  }
}
