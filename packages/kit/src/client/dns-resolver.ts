// Turns a `dns:///host:port` target into one endpoint URL per address the name
// resolves to, and keeps that list fresh: on a timer, and on demand when a
// replica stops answering (it may have been rescheduled to a new address).
import { promises as dns } from "node:dns";

/** Returns every address `hostname` resolves to. */
export type Lookup = (hostname: string) => Promise<string[]>;

export const systemLookup: Lookup = async (hostname) => (await dns.lookup(hostname, { all: true })).map((a) => a.address);

/** Parses `dns:///host:port` (an authority, `dns://resolver/host:port`, is accepted and ignored). */
export function parseDnsTarget(target: string): { host: string; port: number } {
  const match = /^dns:(?:\/\/[^/]*)?\/(?:\[([^\]]+)\]|([^:/]+)):(\d{1,5})$/.exec(target);
  const port = Number(match?.[3]);
  if (!match || port < 1 || port > 65535) {
    throw new Error(`invalid target "${target}": expected dns:///host:port`);
  }
  return { host: (match[1] ?? match[2])!, port };
}

/** Plaintext HTTP/2 base URL of one resolved address. */
export function endpointUrl(address: string, port: number): string {
  return address.includes(":") ? `http://[${address}]:${port}` : `http://${address}:${port}`;
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
  private readonly timer: NodeJS.Timeout;
  private pending: Promise<void> | undefined;
  private lastError: unknown;

  constructor(private readonly options: DnsResolverOptions) {
    ({ host: this.host, port: this.port } = parseDnsTarget(options.target));
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
      this.options.onUpdate(addresses.map((a) => endpointUrl(a, this.port)));
    } catch (error) {
      this.lastError = error;
    }
  }
}
