// A connect Transport that spreads calls over N replicas of one service, from a
// fixed list of URLs or a DNS name, and retries unary calls that failed with
// UNAVAILABLE on the next replica, with backoff, within the call's deadline.
// A caller that keeps state on each replica (an adapter loaded in every inference
// replica) reaches each replica directly through replicas(), and repairs a replica that
// refused a call for want of that state through `recover`: the call is then retried there.
// A call pinned by a ReplicaAffinity goes to its replica only (replica-affinity.ts).
import type { DescMessage, DescMethodStreaming, DescMethodUnary, MessageInitShape } from "@bufbuild/protobuf";
import type { ContextValues, Interceptor, StreamResponse, Transport, UnaryResponse } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { backoffCeilingMs, fullJitter, retryPolicy, sleep, type RetryOptions } from "./backoff.js";
import { DnsResolver, parseDnsTarget, systemLookup, type Lookup } from "./dns-resolver.js";
import { EndpointPool, type Endpoint, type EndpointStats } from "./endpoint-pool.js";
import { restoreRefusedStream } from "./refused-stream.js";
import { AFFINITY_KEY, replicaUnreachable } from "./replica-affinity.js";

interface CommonOptions {
  /** Run on every attempt, so a retried call passes through them once per try. */
  interceptors?: Interceptor[];
  /** Deadline of calls that set no timeoutMs; retries all fit inside it. */
  defaultTimeoutMs?: number;
  retry?: RetryOptions;
  readMaxBytes?: number;
  writeMaxBytes?: number;
  /**
   * Certificate authorities trusted for https:// endpoints and dns+https:/// targets, in place
   * of Node's defaults (its roots plus NODE_EXTRA_CA_CERTS, which a deployment sets instead).
   */
  ca?: string | Buffer;
  /**
   * Called when a replica answered a unary call with an error other than UNAVAILABLE; when it
   * resolves true (it put right what the replica lacked), the call is tried once more on that
   * same replica. Its own failure fails the call.
   */
  recover?: ReplicaRecovery;
}

/** One replica of the service, reached directly: every call through `transport` goes to `url`. */
export interface Replica {
  readonly url: string;
  readonly transport: Transport;
}

export type ReplicaRecovery = (error: ConnectError, replica: Replica, signal: AbortSignal | undefined) => Promise<boolean>;

export type BalancedTransportOptions = CommonOptions &
  (
    | {
        /** Base URLs of the replicas, e.g. "http://10.0.0.7:50051". */
        endpoints: string[];
        target?: never;
      }
    | {
        /**
         * `dns:///host:port`: one endpoint per address the host resolves to;
         * `dns+https:///host:port`: the same over TLS, each certificate checked for host.
         */
        target: string;
        endpoints?: never;
        /** Re-resolve period. Default 30 s. */
        dnsRefreshMs?: number;
        /** Replaces dns.lookup, for tests and custom discovery. */
        lookup?: Lookup;
      }
  );

export interface BalancedTransport extends Transport {
  /** Current endpoint URLs, in round-robin order. */
  endpoints(): string[];
  /**
   * The current replicas, each reached directly (no balancing, no retry on another one): for
   * calls that must reach every replica, such as loading state into each.
   */
  replicas(): Replica[];
  /** Attempts and failed attempts per endpoint URL ever used. */
  stats(): Record<string, EndpointStats>;
  /** Drops every connection and stops DNS refreshes; later calls fail with CANCELED. */
  close(): void;
}

// HeadersInit is a DOM type, absent from this project's libs; borrow it from Transport.
type RequestHeader = Parameters<Transport["unary"]>[3];

/** Longest time a replica that answered UNAVAILABLE is skipped before being tried again. */
const MAX_COOL_OFF_MS = 1000;

export function createBalancedTransport(options: BalancedTransportOptions): BalancedTransport {
  const policy = retryPolicy(options.retry);
  const pool = new EndpointPool({
    interceptors: options.interceptors,
    readMaxBytes: options.readMaxBytes,
    writeMaxBytes: options.writeMaxBytes,
    ca: options.ca,
    // An address a name resolved to is not what the certificate names: check it for the name.
    servername: options.target !== undefined ? dnsTlsName(options.target) : undefined,
  });
  let resolver: DnsResolver | undefined;
  if (options.target !== undefined) {
    resolver = new DnsResolver({
      target: options.target,
      refreshMs: options.dnsRefreshMs ?? 30_000,
      lookup: options.lookup ?? systemLookup,
      onUpdate: (urls) => pool.set(urls),
    });
  } else {
    if (options.endpoints.length === 0) throw new Error("createBalancedTransport: endpoints is empty");
    pool.set(options.endpoints);
  }

  async function pick(avoid?: Endpoint): Promise<Endpoint> {
    if (pool.isClosed) throw new ConnectError("balanced transport is closed", Code.Canceled);
    if (resolver && pool.urls().length === 0) {
      await resolver.refresh();
      if (pool.urls().length === 0) {
        throw new ConnectError(`cannot resolve ${options.target}: ${String(resolver.error)}`, Code.Unavailable);
      }
    }
    return pool.pick(avoid);
  }

  /**
   * Records one attempt on `endpoint`. The returned function ends it, once:
   * pass the error it failed with, if any, and get that error back as a
   * ConnectError. UNAVAILABLE cools the endpoint off and re-resolves the name.
   */
  function begin(endpoint: Endpoint, attempt: number, signal: AbortSignal | undefined): (reason?: unknown) => ConnectError | undefined {
    const end = pool.begin(endpoint);
    let ended = false;
    return (reason) => {
      const error = reason === undefined ? undefined : restoreRefusedStream(ConnectError.from(reason), signal);
      if (ended) return error;
      ended = true;
      end(error !== undefined);
      if (error?.code === Code.Unavailable) {
        pool.markDown(endpoint, Math.min(backoffCeilingMs(attempt, policy), MAX_COOL_OFF_MS));
        // The replica may have moved: look the name up again now rather than at the next tick.
        void resolver?.refresh();
      }
      return error;
    };
  }

  /** One attempt on `endpoint`, counted and cooled off as every attempt is. */
  async function attemptOn<R>(
    endpoint: Endpoint,
    attempt: number,
    signal: AbortSignal | undefined,
    send: (transport: Transport) => Promise<R>,
  ): Promise<R> {
    const finish = begin(endpoint, attempt, signal);
    try {
      const response = await send(endpoint.transport);
      finish();
      return response;
    } catch (e) {
      throw finish(e);
    }
  }

  /** A transport whose every call goes to `endpoint` (one attempt each), counted in its stats. */
  function pinned(endpoint: Endpoint): Replica {
    const transport: Transport = {
      unary: (method, signal, timeoutMs, header, input, contextValues) =>
        attemptOn(endpoint, 1, signal, (t) => t.unary(method, signal, timeoutMs ?? options.defaultTimeoutMs, header, input, contextValues)),
      async stream(method, signal, timeoutMs, header, input, contextValues) {
        const finish = begin(endpoint, 1, signal);
        try {
          const response = await endpoint.transport.stream(
            method,
            signal,
            timeoutMs ?? options.defaultTimeoutMs,
            header,
            input,
            contextValues,
          );
          return { ...response, message: tracked(response.message, finish) };
        } catch (e) {
          throw finish(e);
        }
      },
    };
    return { url: endpoint.url, transport };
  }

  /**
   * A pinned call, sent once to the replica its affinity is bound to: another replica
   * cannot serve it, and the state it needs is gone if that one cannot be reached.
   */
  async function callPinned<T>(
    replica: string,
    signal: AbortSignal | undefined,
    call: (endpoint: Endpoint) => Promise<T>,
    finishOnSuccess = true,
  ): Promise<{ value: T; finish: (reason?: unknown) => ConnectError | undefined }> {
    if (pool.isClosed) throw new ConnectError("balanced transport is closed", Code.Canceled);
    const endpoint = pool.find(replica);
    if (!endpoint) throw replicaUnreachable(replica, `it is no longer among the endpoints: ${pool.urls().join(", ") || "none"}`);
    const finish = begin(endpoint, 1, signal);
    try {
      const value = await call(endpoint);
      if (finishOnSuccess) finish();
      return { value, finish };
    } catch (e) {
      const error = finish(e)!;
      if (error.code === Code.Unavailable && !signal?.aborted) throw replicaUnreachable(replica, error.rawMessage, error);
      throw error;
    }
  }

  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: RequestHeader,
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      const timeout = timeoutMs ?? options.defaultTimeoutMs;
      const use = contextValues?.get(AFFINITY_KEY);
      const replica = use?.pinned ? use.affinity.replica : undefined;
      if (use && replica !== undefined) {
        const { value } = await callPinned(replica, signal, (endpoint) =>
          endpoint.transport.unary(method, signal, timeout, header, input, contextValues),
        );
        return value;
      }
      const deadline = timeout === undefined ? undefined : Date.now() + timeout;
      let failed: Endpoint | undefined;
      for (let attempt = 1; ; attempt++) {
        let error: ConnectError;
        try {
          const remaining = deadline === undefined ? undefined : deadline - Date.now();
          // connect reads a timeout <= 0 as "no deadline", so a spent deadline ends here.
          if (remaining !== undefined && remaining <= 0) {
            const message = `deadline of ${timeout} ms exceeded after ${attempt - 1} attempts`;
            throw new ConnectError(message, Code.DeadlineExceeded);
          }
          const endpoint = await pick(failed);
          failed = endpoint;
          const call = (timeout: number | undefined) =>
            attemptOn(endpoint, attempt, signal, (t) => t.unary(method, signal, timeout, header, input, contextValues));
          try {
            const response = await call(remaining);
            if (use && !use.pinned) use.affinity.bind(endpoint.url);
            return response;
          } catch (e) {
            const refused = ConnectError.from(e);
            if (refused.code === Code.Unavailable || !options.recover || signal?.aborted) throw refused;
            if (!(await options.recover(refused, pinned(endpoint), signal))) throw refused;
            // The repair took part of the deadline: the retry gets what is left of it.
            const left = deadline === undefined ? undefined : deadline - Date.now();
            if (left !== undefined && left <= 0)
              throw new ConnectError(`deadline of ${timeout} ms exceeded while ${endpoint.url} was repaired`, Code.DeadlineExceeded);
            const response = await call(left);
            if (use && !use.pinned) use.affinity.bind(endpoint.url);
            return response;
          }
        } catch (e) {
          error = ConnectError.from(e);
        }
        if (error.code !== Code.Unavailable || attempt >= policy.maxAttempts || signal?.aborted) throw error;
        const wait = fullJitter(backoffCeilingMs(attempt, policy));
        // Waiting past the deadline only to fail there helps nobody: report the cause now.
        if (deadline !== undefined && Date.now() + wait >= deadline) throw error;
        await sleep(wait, signal);
      }
    },

    // Streams are never retried: the request iterable may be partly consumed and
    // response messages may already have reached the caller, so a second attempt
    // could neither replay the input nor hide the duplicate output.
    async stream<I extends DescMessage, O extends DescMessage>(
      method: DescMethodStreaming<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: RequestHeader,
      input: AsyncIterable<MessageInitShape<I>>,
      contextValues?: ContextValues,
    ): Promise<StreamResponse<I, O>> {
      const timeout = timeoutMs ?? options.defaultTimeoutMs;
      const use = contextValues?.get(AFFINITY_KEY);
      const replica = use?.pinned ? use.affinity.replica : undefined;
      if (use && replica !== undefined) {
        const { value: response, finish } = await callPinned(
          replica,
          signal,
          (endpoint) => endpoint.transport.stream(method, signal, timeout, header, input, contextValues),
          false,
        );
        return { ...response, message: tracked(response.message, finish) };
      }
      const endpoint = await pick();
      const finish = begin(endpoint, 1, signal);
      let response: StreamResponse<I, O>;
      try {
        response = await endpoint.transport.stream(method, signal, timeout, header, input, contextValues);
      } catch (e) {
        throw finish(e);
      }
      if (use && !use.pinned) use.affinity.bind(endpoint.url);
      return { ...response, message: tracked(response.message, finish) };
    },

    endpoints: () => pool.urls(),
    replicas: () => pool.active().map(pinned),
    stats: () => pool.stats(),
    close() {
      resolver?.close();
      pool.close();
    },
  };
}

/**
 * Passes messages through and ends the attempt with the stream, so it stays in
 * flight (its connection open) until the caller has read it or stopped reading.
 */
async function* tracked<T>(messages: AsyncIterable<T>, finish: (reason?: unknown) => unknown): AsyncGenerator<T> {
  try {
    yield* messages;
  } catch (e) {
    throw finish(e);
  } finally {
    finish();
  }
}

/** The host a dns+https:/// target's certificates must name; undefined for plain dns:///. */
function dnsTlsName(target: string): string | undefined {
  const { host, tls } = parseDnsTarget(target);
  return tls ? host : undefined;
}
