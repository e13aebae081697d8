// Connect and gRPC-Web, served by connect-node over HTTP/1.1: what browsers, curl and
// `buf curl` (its default protocol) speak. Every request passes the kit's admission
// before connect-node reads its body, and calls the same wrapped implementation as the
// gRPC engine. HTTP/2 connections go to the gRPC engine, which serves only gRPC.
import * as http from "node:http";
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
  /** Requests in progress finish; idle connections close, and no new requests are read. */
  drain(): void;
  close(): void;
}

/** Past its deadline connect answers DEADLINE_EXCEEDED; this much later a request still open is cut. */
const BACKSTOP_SLACK_MS = 1_000;

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
  // Node's own header and request timeouts are checked only on a server that listens
  // itself; this one is handed its connections, whose deadlines the connection
  // registry keeps (no call within the handshake deadline, idle past the idle timeout).
  const server = http.createServer(
    {
      keepAliveTimeout: limits.connections.idle_timeout_ms,
    },
    (request, response) => {
      // Every request is activity on its connection, whatever it asks for.
      const connection = `${request.socket.remoteAddress}|${request.socket.remotePort}`;
      options.onCallOpened(connection);
      response.once("close", () => options.onCallEnded(connection));
      const route = options.routes.get((request.url ?? "").split("?")[0]!);
      // Unknown paths are answered at once by connect-node (404), without a body read.
      if (route === undefined) return connectHandler(request, response);
      const decision = options.admission({ route, authorization: request.headers.authorization, connection });
      if (decision instanceof ConnectError) return respondEarlyError(request.headers, response, decision);
      let backstop: NodeJS.Timeout | undefined;
      response.once("close", () => {
        clearTimeout(backstop);
        decision.release();
      });
      const deadlineMs = applyDefaultDeadline(request, decision.defaultTimeoutMs, limits.max_timeout_ms);
      if (deadlineMs !== undefined) {
        backstop = setTimeout(() => response.destroy(), deadlineMs + BACKSTOP_SLACK_MS);
        backstop.unref();
      }
      connectHandler(request, response);
    },
  );
  server.on("clientError", (_error, socket) => socket.destroy());
  return {
    accept(connection) {
      server.emit("connection", connection);
      // Node's HTTP parser reads new bytes from the socket itself; the ones already
      // buffered flow once the socket is resumed.
      connection.resume();
    },
    drain: () => server.closeIdleConnections(),
    close: () => server.closeAllConnections(),
  };
}

/** Sets the default deadline into the request when the client sent none; returns the deadline that applies, ms. */
function applyDefaultDeadline(request: http.IncomingMessage, defaultMs: number | undefined, maxMs: number): number | undefined {
  const connect = webProtocol(request.headers) !== "grpc-web";
  const name = connect ? "connect-timeout-ms" : "grpc-timeout";
  const given = request.headers[name];
  if (typeof given === "string") {
    const ms = connect ? Number(given) : grpcTimeoutMs(given);
    // An invalid or too-long timeout is connect's to refuse; the default still bounds the request.
    if (ms !== undefined && Number.isFinite(ms) && ms >= 0 && ms <= maxMs) return ms;
    return defaultMs;
  }
  if (defaultMs === undefined) return undefined;
  request.headers[name] = connect ? String(defaultMs) : `${defaultMs}m`;
  return defaultMs;
}

const GRPC_TIMEOUT_UNITS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 0.001, n: 0.000001 };

function grpcTimeoutMs(value: string): number | undefined {
  const match = /^(\d{1,8})([HMSmun])$/.exec(value);
  return match ? Number(match[1]) * GRPC_TIMEOUT_UNITS[match[2]!]! : undefined;
}
