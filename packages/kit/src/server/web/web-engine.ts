// Connect and gRPC-Web, served by connect-node: over HTTP/1.1 (browsers, curl) and over
// HTTP/2 (buf curl, which speaks HTTP/2 whenever it reads the schema by reflection, and
// connect-node's own clients). Every request passes the kit's admission before
// connect-node reads its body, and calls the same wrapped implementation as the gRPC
// engine.
import * as http from "node:http";
import { constants, Http2ServerRequest, Http2ServerResponse, type IncomingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import type { Duplex } from "node:stream";
import type { DescService } from "@bufbuild/protobuf";
import { ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Admission } from "../calls/call-admission.js";
import type { CallRoute } from "../calls/call-routes.js";
import type { ServerLimits } from "../server-config.js";
import { respondEarlyError, webProtocol } from "./early-error.js";

export interface WebEngineOptions {
  services: { service: DescService; impl: ServiceImpl<DescService> }[];
  routes: ReadonlyMap<string, CallRoute>;
  admission: Admission;
  limits: ServerLimits;
  shutdownSignal: AbortSignal;
  onCallOpened(connection: string): void;
  onCallEnded(connection: string): void;
}

export interface WebEngine {
  /** Serves an accepted connection whose client speaks HTTP/1.1 (its first bytes may already be buffered in it). */
  accept(connection: Duplex): void;
  /** Serves one HTTP/2 stream that is not gRPC (Connect, gRPC-Web, or anything else: connect-node answers it). */
  handleStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, rawHeaders: string[]): void;
  /** Requests in progress finish; idle HTTP/1.1 connections close. */
  drain(): void;
  close(): void;
}

/** Past its deadline connect answers DEADLINE_EXCEEDED; this much later a request still open is cut. */
const BACKSTOP_SLACK_MS = 1_000;

type AnyRequest = http.IncomingMessage | Http2ServerRequest;
type AnyResponse = http.ServerResponse | Http2ServerResponse;

export function createWebEngine(options: WebEngineOptions): WebEngine {
  const { limits } = options;
  const connectHandler = connectNodeAdapter({
    routes(router) {
      for (const { service, impl } of options.services) router.service(service, impl);
    },
    readMaxBytes: limits.read_max_bytes,
    writeMaxBytes: limits.write_max_bytes,
    maxTimeoutMs: limits.max_timeout_ms,
    shutdownSignal: options.shutdownSignal,
  });

  function serveRequest(request: AnyRequest, response: AnyResponse, connection: string, cut: () => void) {
    // Every request is activity on its connection, whatever it asks for.
    options.onCallOpened(connection);
    response.once("close", () => options.onCallEnded(connection));
    const route = options.routes.get((request.url ?? "").split("?")[0]!);
    // Unknown paths are answered at once by connect-node (404), without a body read.
    if (route === undefined) return connectHandler(request, response);
    const authorization = request.headers.authorization;
    const decision = options.admission({ route, authorization: typeof authorization === "string" ? authorization : undefined, connection });
    if (decision instanceof ConnectError) return respondEarlyError(request.headers, response, decision);
    let backstop: NodeJS.Timeout | undefined;
    response.once("close", () => {
      clearTimeout(backstop);
      decision.release();
    });
    const deadlineMs = applyDefaultDeadline(request.headers, decision.defaultTimeoutMs, limits.max_timeout_ms);
    if (deadlineMs !== undefined) {
      backstop = setTimeout(cut, deadlineMs + BACKSTOP_SLACK_MS);
      backstop.unref();
    }
    connectHandler(request, response);
  }

  // The registry keeps these connections' deadlines: Node's own header and request
  // timeouts are checked only on a server that listens itself.
  const http1 = http.createServer({ keepAliveTimeout: limits.connections.idle_timeout_ms }, (request, response) => {
    serveRequest(request, response, `${request.socket.remoteAddress}|${request.socket.remotePort}`, () => response.destroy());
  });
  http1.on("clientError", (_error, socket) => socket.destroy());

  return {
    accept(connection) {
      http1.emit("connection", connection);
      // Node's HTTP parser reads new bytes from the socket itself; the ones already
      // buffered flow once the socket is resumed.
      connection.resume();
    },
    handleStream(stream, headers, rawHeaders) {
      stream.on("error", () => {});
      const socket = stream.session?.socket;
      const connection = `${socket?.remoteAddress}|${socket?.remotePort}`;
      // Node's compatibility objects, exactly as http2.createServer(handler) makes them.
      const request = new Http2ServerRequest(stream, headers, undefined as never, rawHeaders);
      const response = new Http2ServerResponse(stream);
      serveRequest(request, response, connection, () => {
        if (!stream.destroyed) stream.close(constants.NGHTTP2_CANCEL);
      });
    },
    drain: () => http1.closeIdleConnections(),
    close: () => http1.closeAllConnections(),
  };
}

/** Sets the default deadline into the request when the client sent none; returns the deadline that applies, ms. */
function applyDefaultDeadline(headers: IncomingHttpHeaders, defaultMs: number | undefined, maxMs: number): number | undefined {
  const connect = webProtocol(headers) !== "grpc-web";
  const name = connect ? "connect-timeout-ms" : "grpc-timeout";
  const given = headers[name];
  if (typeof given === "string") {
    const ms = connect ? Number(given) : grpcTimeoutMs(given);
    // An invalid or too-long timeout is connect's to refuse; the default still bounds the request.
    if (ms !== undefined && Number.isFinite(ms) && ms >= 0 && ms <= maxMs) return ms;
    return defaultMs;
  }
  if (defaultMs === undefined) return undefined;
  headers[name] = connect ? String(defaultMs) : grpcTimeoutValue(defaultMs);
  return defaultMs;
}

const GRPC_TIMEOUT_UNITS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 0.001, n: 0.000001 };

function grpcTimeoutMs(value: string): number | undefined {
  const match = /^(\d{1,8})([HMSmun])$/.exec(value);
  return match ? Number(match[1]) * GRPC_TIMEOUT_UNITS[match[2]!]! : undefined;
}

/** `grpc-timeout` allows at most 8 digits: milliseconds while they fit, else seconds. */
function grpcTimeoutValue(ms: number): string {
  return ms <= 99_999_999 ? `${ms}m` : `${Math.ceil(ms / 1_000)}S`;
}
