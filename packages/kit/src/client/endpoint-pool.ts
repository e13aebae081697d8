// The replicas one balanced transport talks to: one gRPC transport and one
// HTTP/2 connection per endpoint, round-robin picking that skips replicas in
// cool-off, and per-endpoint counters.
import type { Interceptor, Transport } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";

export interface EndpointTransportOptions {
  interceptors?: Interceptor[];
  readMaxBytes?: number;
  writeMaxBytes?: number;
  /** For https:// endpoints: the certificate authorities trusted (default: Node's, plus NODE_EXTRA_CA_CERTS). */
  ca?: string | Buffer;
  /**
   * For https:// endpoints: the name their certificates are checked for (and sent as SNI),
   * when the URLs hold addresses a name resolved to (dns+https:/// targets).
   */
  servername?: string;
}

export interface EndpointStats {
  /** Attempts sent to the endpoint (a retried call counts once per attempt). */
  calls: number;
  /** Attempts that ended in an error, whatever its code. */
  failures: number;
}

export interface Endpoint {
  readonly url: string;
  readonly transport: Transport;
  /** Owned here, not by the transport, so close() can drop the connection. */
  readonly session: Http2SessionManager;
  /** Epoch ms before which picking skips this endpoint. */
  downUntil: number;
  /** Unary attempts and open streams; a retired endpoint is closed when it drains. */
  inFlight: number;
  retired: boolean;
}

export class EndpointPool {
  private current: Endpoint[] = [];
  /** Dropped from the list (DNS no longer returns them) but still serving calls. */
  private readonly draining = new Set<Endpoint>();
  private readonly counters = new Map<string, EndpointStats>();
  private cursor = 0;
  private closed = false;

  constructor(private readonly options: EndpointTransportOptions) {}

  urls(): string[] {
    return this.current.map((e) => e.url);
  }

  /** The endpoints calls are spread over now. */
  active(): Endpoint[] {
    return [...this.current];
  }

  stats(): Record<string, EndpointStats> {
    return Object.fromEntries([...this.counters].map(([url, s]) => [url, { ...s }]));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Replaces the endpoint list, keeping the connections of URLs still in it. */
  set(urls: readonly string[]): void {
    if (this.closed) return;
    const known = new Map([...this.current, ...this.draining].map((e) => [e.url, e]));
    const next = [...new Set(urls)].map((url) => {
      const endpoint = known.get(url) ?? this.open(url);
      endpoint.retired = false;
      this.draining.delete(endpoint);
      return endpoint;
    });
    for (const endpoint of this.current) {
      if (!next.includes(endpoint)) this.retire(endpoint);
    }
    this.current = next;
  }

  /**
   * Next endpoint in round-robin order that is not cooling off, other than
   * `avoid` (the one that just failed) when there is a choice. When every
   * endpoint is cooling off the next one is still returned: trying a replica
   * that may have come back beats failing without trying.
   */
  pick(avoid?: Endpoint): Endpoint {
    const count = this.current.length;
    if (count === 0) throw new ConnectError("no endpoints to call", Code.Unavailable);
    const now = Date.now();
    let fallback: Endpoint | undefined;
    for (let i = 0; i < count; i++) {
      const endpoint = this.current[(this.cursor + i) % count]!;
      if (endpoint === avoid && count > 1) continue;
      if (endpoint.downUntil <= now) {
        this.cursor = (this.cursor + i + 1) % count;
        return endpoint;
      }
      fallback ??= endpoint;
    }
    this.cursor = (this.cursor + 1) % count;
    return fallback ?? this.current[0]!;
  }

  /**
   * The endpoint with this URL, while it is listed or still draining its calls: where a
   * pinned call must go. Undefined once it has left the list and been closed.
   */
  find(url: string): Endpoint | undefined {
    return this.current.find((e) => e.url === url) ?? [...this.draining].find((e) => e.url === url);
  }

  markDown(endpoint: Endpoint, coolOffMs: number): void {
    endpoint.downUntil = Date.now() + coolOffMs;
  }

  /** Records one attempt on `endpoint`; call the returned function once, when it ends. */
  begin(endpoint: Endpoint): (failed: boolean) => void {
    const counter = this.counters.get(endpoint.url)!;
    counter.calls++;
    endpoint.inFlight++;
    return (failed) => {
      if (failed) counter.failures++;
      endpoint.inFlight--;
      if (endpoint.retired && endpoint.inFlight === 0) this.drop(endpoint);
    };
  }

  /** Closes every connection at once; calls still running fail with CANCELED. */
  close(): void {
    this.closed = true;
    for (const endpoint of [...this.current, ...this.draining]) endpoint.session.abort();
    this.current = [];
    this.draining.clear();
  }

  private open(url: string): Endpoint {
    const { ca, servername } = this.options;
    const tls = url.startsWith("https:") && (ca !== undefined || servername !== undefined) ? { ca, servername } : undefined;
    const session = new Http2SessionManager(url, undefined, tls);
    if (!this.counters.has(url)) this.counters.set(url, { calls: 0, failures: 0 });
    return {
      url,
      session,
      transport: createGrpcTransport({
        interceptors: this.options.interceptors,
        readMaxBytes: this.options.readMaxBytes,
        writeMaxBytes: this.options.writeMaxBytes,
        baseUrl: url,
        sessionManager: session,
      }),
      downUntil: 0,
      inFlight: 0,
      retired: false,
    };
  }

  private retire(endpoint: Endpoint): void {
    endpoint.retired = true;
    if (endpoint.inFlight === 0) this.drop(endpoint);
    else this.draining.add(endpoint);
  }

  private drop(endpoint: Endpoint): void {
    this.draining.delete(endpoint);
    endpoint.session.abort();
  }
}
