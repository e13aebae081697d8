// The gRPC protocol, served by @grpc/grpc-js: the library built for it, and as fast as
// a plain grpc-js server (bench/rpc). Every HTTP/2 connection the listener accepts is
// handed to it; the kit's admission runs as its interceptor, and each method calls the
// same wrapped implementation that the Connect and gRPC-Web engine calls.
import type { Duplex } from "node:stream";
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
  /** Serves an accepted connection whose client speaks HTTP/2 (its preface may already be buffered in it). */
  accept(connection: Duplex): void;
  /** GOAWAY on every connection: open calls finish, no new ones start; after graceMs the rest are cut. */
  drain(graceMs: number): void;
  /** Aborts the work of every call still in progress with `reason`. */
  abortCalls(reason: unknown): void;
  close(): void;
}

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
    "grpc.max_concurrent_streams": limits.connections.streams_per_connection,
    ...(limits.connections.idle_timeout_ms > 0 ? { "grpc.max_connection_idle_ms": limits.connections.idle_timeout_ms } : {}),
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
  // TLS, when configured, ends in the listener, which routes by protocol first.
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  return {
    accept: (connection) => injector.injectConnection(connection),
    drain: (graceMs) => injector.drain(graceMs),
    abortCalls(reason) {
      for (const ctx of gate.liveCalls) ctx.abort(reason);
    },
    close() {
      injector.destroy();
      server.forceShutdown();
    },
  };
}
