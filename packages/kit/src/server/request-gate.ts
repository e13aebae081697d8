// What every call passes before connect-node reads a byte of its body: auth decided
// on the request headers, a slot under the service's concurrency cap for the whole
// life of the stream, and a deadline (the client's, or the configured default) past
// which the stream is reset even if the client never finishes sending.
import { constants, type IncomingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import { ConnectError } from "@connectrpc/connect";
import { parseTimeout as parseConnectTimeout } from "@connectrpc/connect/protocol-connect";
import { parseTimeout as parseGrpcTimeout } from "@connectrpc/connect/protocol-grpc";
import type { ConcurrencyLimit } from "../limits/concurrency-limit.js";
import { respondEarlyError, wireProtocol } from "./early-error.js";
import { onceAnsweredOrClosed, resetStream } from "./stream-end.js";

/** What the gate knows of a path: its service, and whether either side streams. */
export interface CallRoute {
  service: string;
  streaming: boolean;
}

export interface RequestGateOptions {
  /** Methods by HTTP path ("/pkg.Service/Method"). */
  routes: ReadonlyMap<string, CallRoute>;
  limit: ConcurrencyLimit;
  /** Rejects with a ConnectError when the headers do not authenticate a call to `service`; absent = no auth. */
  authenticate?: (service: string, header: Headers) => Promise<void>;
  /** Deadline for unary calls that send none, ms; 0 = none. */
  defaultTimeoutMs: number;
  /** Deadline for streaming calls that send none, ms; 0 = none. */
  defaultStreamTimeoutMs: number;
  maxTimeoutMs: number;
}

/** Past its deadline connect answers DEADLINE_EXCEEDED; this much later a stream still open is reset. */
const BACKSTOP_SLACK_MS = 1_000;

/** Calls to paths no service serves share one slot count, so they are capped too. */
const UNROUTED = "(unrouted)";

/**
 * Returns the gate: resolves true when the call may go on to connect-node, false when
 * it has been answered (or the stream is gone). Never rejects.
 */
export function createRequestGate(options: RequestGateOptions) {
  return async function admit(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): Promise<boolean> {
    const path = headers[":path"]?.split("?")[0] ?? "";
    const route = options.routes.get(path);
    const slot = options.limit.acquire(route?.service ?? UNROUTED);
    if ("error" in slot) {
      respondEarlyError(stream, headers, slot.error);
      return false;
    }
    onceAnsweredOrClosed(stream, slot.release);
    applyDeadline(stream, headers, route, options);
    if (route !== undefined && options.authenticate !== undefined) {
      try {
        await options.authenticate(route.service, toFetchHeaders(headers));
      } catch (error) {
        respondEarlyError(stream, headers, ConnectError.from(error));
        return false;
      }
    }
    return !stream.closed && !stream.destroyed;
  };
}

function applyDeadline(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, route: CallRoute | undefined, options: RequestGateOptions) {
  const connect = wireProtocol(headers).startsWith("connect");
  const headerName = connect ? "connect-timeout-ms" : "grpc-timeout";
  const given = headers[headerName];
  let deadlineMs: number | undefined;
  if (typeof given === "string") {
    // An invalid or too-long timeout is connect's to refuse; the default still bounds the stream.
    const parsed = connect ? parseConnectTimeout(given, options.maxTimeoutMs) : parseGrpcTimeout(given, options.maxTimeoutMs);
    deadlineMs = parsed.error === undefined ? parsed.timeoutMs : undefined;
  } else {
    const fallback = route?.streaming ? options.defaultStreamTimeoutMs : options.defaultTimeoutMs;
    if (fallback > 0) {
      headers[headerName] = connect ? String(fallback) : grpcTimeoutValue(fallback);
      deadlineMs = fallback;
    }
  }
  deadlineMs ??= route?.streaming ? options.defaultStreamTimeoutMs || undefined : options.defaultTimeoutMs || undefined;
  if (deadlineMs === undefined) return;
  const backstop = setTimeout(() => {
    resetStream(stream, constants.NGHTTP2_CANCEL);
  }, deadlineMs + BACKSTOP_SLACK_MS);
  backstop.unref();
  stream.once("close", () => clearTimeout(backstop));
}

/** `grpc-timeout` allows at most 8 digits: milliseconds while they fit, else seconds. */
function grpcTimeoutValue(ms: number): string {
  return ms <= 99_999_999 ? `${ms}m` : `${Math.ceil(ms / 1_000)}S`;
}

function toFetchHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [key, value] of Object.entries(headers)) {
    if (key.startsWith(":") || value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.append(key, v);
    else out.set(key, value);
  }
  return out;
}
