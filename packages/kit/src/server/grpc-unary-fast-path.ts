// The kit's fast path for unary calls over the gRPC wire protocol.
//
// Why: connect-node's universal handler pipes every call through a chain of async
// iterables. On 2 cores it answered about a third of what @grpc/grpc-js answers for
// unary gRPC calls (bench/rpc), and the gRPC wire path is what grpc-js, grpcio,
// grpcurl, buf curl and our own orchestrator use. This path serves exactly those
// calls — `application/grpc[+proto]`, uncompressed, unary — with the same service
// implementations and the same connect interceptors (tracing, auth, limits); every
// other request (Connect, gRPC-Web, streaming, compressed) goes to connect-node.
import type { ServerHttp2Stream, IncomingHttpHeaders } from "node:http2";
import { create, fromBinary, isMessage, toBinary, type DescMessage, type DescMethod, type DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextKey,
  createContextValues,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { encodeGrpcMessage, frameMessage, parseGrpcTimeout, unframeUnaryRequest } from "./grpc-wire.js";
import { CallContext, LiveCalls } from "./call-context.js";

type UnaryImpl = (request: unknown, context: HandlerContext) => unknown;
type AnyFn = (req: UnaryRequest) => Promise<UnaryResponse>;

/** A unary method the fast path may serve. */
export interface UnaryRoute {
  service: DescService;
  method: DescMethod & { input: DescMessage; output: DescMessage };
  impl: UnaryImpl;
}

export interface GrpcUnaryFastPathOptions {
  /** Unary methods by HTTP path ("/pkg.Service/Method"). */
  routes: Map<string, UnaryRoute>;
  /** Interceptors in connect's order: the first is outermost. */
  interceptors: Interceptor[];
  readMaxBytes: number;
  writeMaxBytes: number;
  /** Client deadlines above this are INVALID_ARGUMENT, as connect-node does. */
  maxTimeoutMs: number;
  shutdownSignal: AbortSignal;
  contextValues?: () => ContextValues;
  /** Called with errors that are not ConnectErrors (bugs), for logging. */
  onInternalError?: (error: unknown, route: UnaryRoute) => void;
}

const CALL_COMPLETED = new ConnectError("the call completed", Code.Canceled);

/** How close to its deadline a reset call counts as timed out rather than cancelled. */
const DEADLINE_SLACK_MS = 25;

const GRPC_CONTENT_TYPES = new Set(["application/grpc", "application/grpc+proto"]);

/**
 * Returns a stream handler that serves the request and returns true, or returns
 * false without touching the stream when the request is not for the fast path.
 */
export function createGrpcUnaryFastPath(options: GrpcUnaryFastPathOptions) {
  const liveCalls = new LiveCalls(options.shutdownSignal);
  const chains = new Map<string, AnyFn>();
  for (const [path, route] of options.routes) {
    chains.set(path, buildChain(route, options.interceptors));
  }

  return function handle(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): boolean {
    const path = headers[":path"];
    if (path === undefined || headers[":method"] !== "POST") return false;
    const contentType = headers["content-type"];
    if (contentType === undefined || !GRPC_CONTENT_TYPES.has(contentType)) return false;
    const encoding = headers["grpc-encoding"];
    if (encoding !== undefined && encoding !== "identity") return false;
    const route = options.routes.get(path);
    const chain = chains.get(path);
    if (route === undefined || chain === undefined) return false;
    void serveCall(stream, headers, route, chain, options, liveCalls);
    return true;
  };
}

/** Carries the call's context to the terminal call of the interceptor chain. */
const kHandlerContext = createContextKey<HandlerContext | undefined>(undefined, { description: "kit handler context" });

function buildChain(route: UnaryRoute, interceptors: Interceptor[]): AnyFn {
  // The terminal call runs the implementation with the context that travels in
  // contextValues (set per call below), so interceptors wrap it as in connect.
  const terminal: AnyFn = async (req) => {
    const context = req.contextValues.get(kHandlerContext) as CallContext;
    const output = await route.impl(req.message, context);
    const message = isMessage(output, route.method.output) ? output : create(route.method.output, output as Parameters<typeof create>[1]);
    return {
      stream: false,
      service: route.service,
      method: route.method as UnaryRequest["method"],
      message,
      // Created on first touch, by the handler or an interceptor; serveCall writes
      // whatever the call's context holds.
      get header() {
        return context.responseHeader;
      },
      get trailer() {
        return context.responseTrailer;
      },
    };
  };
  return interceptors.reduceRight<AnyFn>((next, interceptor) => interceptor(next as never) as unknown as AnyFn, terminal);
}

async function serveCall(
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  route: UnaryRoute,
  chain: AnyFn,
  options: GrpcUnaryFastPathOptions,
  liveCalls: LiveCalls,
): Promise<void> {
  let context: CallContext | undefined;
  let responded = false;
  stream.once("close", () => {
    if (responded || context === undefined) return;
    // Clients start their deadline timer before ours and reset the stream when it
    // fires, a moment before our own timer would: that is a deadline, not a cancel.
    const remainingMs = context.timeoutMs();
    context.abort(
      remainingMs !== undefined && remainingMs <= DEADLINE_SLACK_MS
        ? new ConnectError("the operation timed out", Code.DeadlineExceeded)
        : new ConnectError("the client cancelled the call", Code.Canceled),
    );
  });
  stream.on("error", () => {
    /* reset by the peer; "close" follows and cancels the call */
  });

  try {
    const timeoutMs = parseGrpcTimeout(headers["grpc-timeout"] as string | undefined);
    if (timeoutMs !== undefined && timeoutMs > options.maxTimeoutMs) {
      throw new ConnectError(`timeout ${timeoutMs}ms must be <= ${options.maxTimeoutMs}`, Code.InvalidArgument);
    }
    const values = options.contextValues?.() ?? createContextValues();
    context = new CallContext({
      service: route.service,
      method: route.method,
      url: headers[":path"]!,
      timeoutMs,
      requestHeader: toFetchHeaders(headers),
      values,
    });
    values.set(kHandlerContext, context);
    liveCalls.add(context);
    if (options.shutdownSignal.aborted) throw new ConnectError("the server is shutting down", Code.Unavailable);

    const body = await readBody(stream, options.readMaxBytes, context.signal);
    let message;
    try {
      message = fromBinary(route.method.input, unframeUnaryRequest(body));
    } catch (e) {
      if (e instanceof ConnectError) throw e;
      throw new ConnectError(`cannot decode ${route.method.input.typeName}: ${String((e as Error).message ?? e)}`, Code.InvalidArgument);
    }
    const request: UnaryRequest = {
      stream: false,
      service: route.service,
      method: route.method as UnaryRequest["method"],
      requestMethod: "POST",
      url: context.url,
      signal: context.signal,
      header: context.requestHeader,
      contextValues: values,
      message,
    };
    const response = await raceSignal(chain(request), context.signal);
    const payload = toBinary(route.method.output, response.message);
    if (payload.length > options.writeMaxBytes) {
      throw new ConnectError(
        `message size ${payload.length} is larger than configured writeMaxBytes ${options.writeMaxBytes}`,
        Code.ResourceExhausted,
      );
    }
    if (stream.destroyed || stream.closed) return;
    responded = true;
    const responseHeaders: Record<string, string> = { ":status": "200", "content-type": "application/grpc+proto" };
    context.setResponseHeader?.forEach((value, key) => {
      responseHeaders[key] = value;
    });
    stream.respond(responseHeaders, { waitForTrailers: true });
    const trailerSource = context.setResponseTrailer;
    stream.once("wantTrailers", () => {
      const trailers: Record<string, string> = { "grpc-status": "0" };
      trailerSource?.forEach((value, key) => {
        trailers[key] = value;
      });
      stream.sendTrailers(trailers);
    });
    stream.end(frameMessage(payload));
  } catch (error) {
    respondError(stream, error, route, options);
    responded = true;
  } finally {
    if (context !== undefined) {
      liveCalls.delete(context);
      // Fires the context's signal on completion, as connect-node does, and frees its
      // deadline timer. A shared reason: abort() without one builds a DOMException per call.
      context.abort(CALL_COMPLETED);
    }
  }
}

function respondError(stream: ServerHttp2Stream, error: unknown, route: UnaryRoute, options: GrpcUnaryFastPathOptions) {
  if (!(error instanceof ConnectError)) options.onInternalError?.(error, route);
  const connectError = ConnectError.from(error);
  if (stream.destroyed || stream.closed || stream.headersSent) return;
  // Trailers-only response: status in the single HEADERS frame.
  const trailers: Record<string, string> = {
    ":status": "200",
    "content-type": "application/grpc+proto",
    "grpc-status": String(connectError.code),
    "grpc-message": encodeGrpcMessage(connectError.rawMessage),
  };
  connectError.metadata.forEach((value, key) => {
    trailers[key] = value;
  });
  stream.respond(trailers, { endStream: true });
}

function readBody(stream: ServerHttp2Stream, readMaxBytes: number, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (error: unknown) => {
      cleanup();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      // The frame header carries the message size: refuse as soon as it is known.
      const declared = chunks.length === 0 && chunk.length >= 5 ? chunk.readUInt32BE(1) : size - 5;
      if (declared > readMaxBytes || size - 5 > readMaxBytes) {
        fail(
          new ConnectError(
            `message size ${Math.max(declared, size - 5)} is larger than configured readMaxBytes ${readMaxBytes}`,
            Code.ResourceExhausted,
          ),
        );
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onAbort = () => fail(signal.reason);
    function cleanup() {
      stream.off("data", onData);
      stream.off("end", onEnd);
      signal.removeEventListener("abort", onAbort);
    }
    stream.on("data", onData);
    stream.once("end", onEnd);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Settles with the call, or rejects with the signal's reason (deadline, cancel, shutdown). */
function raceSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
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
