// PROTOTYPE (not committed): grpc-js engine + gate interceptor + connect-style adapter.
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary, isMessage } from "@bufbuild/protobuf";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { setupTracing } from "@lean-grpo/kit";
import { context, propagation, trace, SpanKind } from "@opentelemetry/api";
import { createHash, timingSafeEqual } from "node:crypto";
import * as net from "node:net";
import { tokenize } from "./tokenize-handler.js";

setupTracing({ serviceName: "bench-rpc" });
const mode = process.argv[2] ?? "full";
const counts = new Map<string, number>();
const gate: grpc.ServerInterceptor = (methodDescriptor, call) => {
  let release: (() => void) | undefined;
  return new grpc.ServerInterceptingCall(call, {
    start: (next) => {
      next({
        onReceiveMetadata: (metadata, mdNext) => {
          const service = methodDescriptor.path.split("/")[1]!;
          const c = counts.get(service) ?? 0;
          if (c >= 256) { call.sendStatus({ code: grpc.status.RESOURCE_EXHAUSTED, details: "full" }); return; }
          counts.set(service, c + 1);
          let done = false;
          release = () => { if (!done) { done = true; counts.set(service, (counts.get(service) ?? 1) - 1); } };
          mdNext(metadata);
        },
      });
    },
    sendStatus: (status, next) => { release?.(); next(status); },
  });
};
const method = InferenceService.method.tokenize;
const headerGetter = { get: (md: grpc.Metadata, k: string) => { const v = md.get(k)[0]; return typeof v === "string" ? v : undefined; }, keys: (md: grpc.Metadata) => Object.keys(md.getMap()) };
const server = new grpc.Server(mode !== "full" ? {} : { interceptors: [gate] });
server.addService(
  {
    tokenize: {
      path: "/leangrpo.v1.InferenceService/Tokenize",
      requestStream: false,
      responseStream: false,
      requestSerialize: (m: unknown) => m as Buffer,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (m: any) => Buffer.from(toBinary(method.output, isMessage(m, method.output) ? m : create(method.output, m))),
      responseDeserialize: (b: Buffer) => b,
    },
  },
  {
    tokenize: (call: grpc.ServerUnaryCall<Buffer, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      if (mode === "bare") { callback(null, tokenize(fromBinary(method.input, call.request))); return; }
      let req;
      try { req = fromBinary(method.input, call.request); } catch (e) { callback({ code: 3, details: String(e) }); return; }
      const controller = new AbortController();
      call.once("cancelled", () => controller.abort());
      const ctx = { signal: controller.signal, method, service: InferenceService };
      const parent = propagation.extract(context.active(), call.metadata, headerGetter);
      const span = trace.getTracer("k").startSpan("leangrpo.v1.InferenceService/Tokenize", { kind: SpanKind.SERVER, attributes: { "rpc.system": "grpc" } }, parent);
      Promise.resolve()
        .then(() => context.with(trace.setSpan(parent, span), () => tokenize(req as never)))
        .then((res) => { span.setAttribute("rpc.grpc.status_code", 0); span.end(); callback(null, res); }, (err) => { span.end(); callback({ code: 13, details: String(err) }); });
      void ctx;
    },
  },
);
const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
const listener = net.createServer((socket) => injector.injectConnection(socket));
listener.listen(0, "127.0.0.1", () => console.log((listener.address() as net.AddressInfo).port));
process.on("SIGTERM", () => { server.forceShutdown(); listener.close(); process.exit(0); });
