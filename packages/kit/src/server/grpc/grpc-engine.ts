// The gRPC protocol, served by @grpc/grpc-js: the library built for it, and as fast as
// a plain grpc-js server (bench/rpc). Each HTTP/2 stream that carries gRPC is handed to
// grpc-js's own stream handler; the kit's admission runs as its interceptor, and each
// method calls the same wrapped implementation that the Connect and gRPC-Web engine
// calls. The HTTP/2 server itself is the kit's (connections/http2-sessions.ts), so that Connect and
// gRPC-Web streams on the same connection go to connect-node.
//
// grpc-js serves streams only from HTTP/2 servers it creates, and routes every stream to
// gRPC (others get 415), so the kit calls its per-stream handler directly: the one
// internal entry point used, checked when the engine is made (its shape has been
// `_streamHandler(extraInterceptors, stream, headers)` since grpc-js 1.10), with the
// version pinned in packages/kit/package.json.
import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import type { Admission } from "../calls/call-admission.js";
import type { CallRoute } from "../calls/call-routes.js";
import type { ServerLimits } from "../server-config.js";
import { GrpcCallGate, type GrpcRoute } from "./admitting-call.js";
import { grpcMethodHandler } from "./grpc-method-handlers.js";
import { grpcServiceDefinition } from "./grpc-service-definition.js";

export interface GrpcEngineOptions {
  /** Each service with its implementation, already wrapped by the service pipeline. */
  services: { service: DescService; impl: ServiceImpl<DescService> }[];
  routes: ReadonlyMap<string, CallRoute>;
  admission: Admission;
  limits: ServerLimits;
  onCallOpened(connection: string): void;
  onCallEnded(connection: string): void;
}

export interface GrpcEngine {
  /** Serves one HTTP/2 stream whose content type is application/grpc[+...]. */
  handleStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void;
  /** Aborts the work of every call still in progress with `reason`. */
  abortCalls(reason: unknown): void;
}

type StreamHandler = (extraInterceptors: grpc.ServerInterceptor[], stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void;

export function createGrpcEngine(options: GrpcEngineOptions): GrpcEngine {
  const { limits } = options;
  const routes = new Map<string, GrpcRoute>();
  for (const { service } of options.services) {
    for (const method of service.methods) {
      const path = `/${service.typeName}/${method.name}`;
      const route = options.routes.get(path);
      if (route) routes.set(path, { ...route, serviceDesc: service, methodDesc: method });
    }
  }
  const gate = new GrpcCallGate({
    routes,
    admission: options.admission,
    maxTimeoutMs: limits.max_timeout_ms,
    onCallOpened: options.onCallOpened,
    onCallEnded: options.onCallEnded,
  });
  const server = new grpc.Server({
    interceptors: [gate.interceptor],
    "grpc.max_receive_message_length": limits.read_max_bytes,
    "grpc.max_send_message_length": limits.write_max_bytes,
    // Per-call bookkeeping that nothing here reads.
    "grpc.enable_channelz": 0,
  });
  for (const { service, impl } of options.services) {
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const method of service.methods) {
      const handler = (impl as Record<string, (input: unknown, ctx: unknown) => unknown>)[method.localName]!;
      handlers[method.localName] = grpcMethodHandler(method, handler, gate) as grpc.UntypedHandleCall;
    }
    server.addService(grpcServiceDefinition(service), handlers);
  }
  const streamHandler = (server as unknown as { _streamHandler?: StreamHandler })._streamHandler;
  if (typeof streamHandler !== "function" || streamHandler.length !== 3) {
    throw new Error(
      "this version of @grpc/grpc-js has no per-stream handler of the shape the kit mounts (_streamHandler(extraInterceptors, stream, headers)); install the version packages/kit/package.json pins",
    );
  }
  const noExtraInterceptors: grpc.ServerInterceptor[] = [];
  return {
    handleStream: (stream, headers) => streamHandler.call(server, noExtraInterceptors, stream, headers),
    abortCalls(reason) {
      for (const ctx of gate.liveCalls) ctx.abort(reason);
    },
  };
}
