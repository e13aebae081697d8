// The baseline's adapter: a connect service implementation served by a plain grpc-js
// server, the least that runs it — one HandlerContext per call (its deadline, and a signal
// that aborts when the client cancels or the call is over, as connect-node's does), the
// implementation called, its answer or error handed to grpc-js. No admission, tracing or
// domain-error mapping: that is what the kit adds and the comparison measures. Request
// headers are not copied into the context (the services read none). Bidi methods are left
// out (grpc-js answers UNIMPLEMENTED): none is benchmarked.
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createHandlerContext, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type * as grpc from "@grpc/grpc-js";

type Implementation = (input: any, context: HandlerContext) => any;
type Context = ReturnType<typeof createHandlerContext>;
/** What every grpc-js call offers: its deadline, and the "cancelled" event. */
interface Call {
  getDeadline(): grpc.Deadline;
  once(event: "cancelled", listener: () => void): unknown;
}

export function grpcJsServiceHandlers(service: DescService, impl: Partial<ServiceImpl<DescService>>): grpc.UntypedServiceImplementation {
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const method of service.methods) {
    const implementation = (impl as Record<string, Implementation | undefined>)[method.localName];
    if (implementation === undefined) continue;
    const handler = handlerFor(service, method, implementation.bind(impl));
    if (handler) handlers[method.localName] = handler;
  }
  return handlers;
}

function handlerFor(service: DescService, method: DescMethod, implementation: Implementation): grpc.UntypedHandleCall | undefined {
  switch (method.methodKind) {
    case "unary":
      return (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        const context = contextOf(service, method, call);
        answer(context, callback, () => implementation(call.request, context));
      };
    case "client_streaming":
      return (call: grpc.ServerReadableStream<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        const context = contextOf(service, method, call);
        // Not the call itself: iterating a Node stream destroys it when the loop ends.
        const requests = { [Symbol.asyncIterator]: () => call.iterator({ destroyOnReturn: false }) };
        answer(context, callback, () => implementation(requests, context));
      };
    case "server_streaming":
      return (call: grpc.ServerWritableStream<unknown, unknown>) => {
        const context = contextOf(service, method, call);
        void stream(context, call, () => implementation(call.request, context));
      };
    case "bidi_streaming":
      return undefined;
  }
}

function contextOf(service: DescService, method: DescMethod, call: Call): Context {
  const deadline = call.getDeadline();
  const deadlineMs = deadline instanceof Date ? deadline.getTime() : deadline;
  const cancelled = new AbortController();
  call.once("cancelled", () => cancelled.abort(new ConnectError("the client cancelled the call", Code.Canceled)));
  return createHandlerContext({
    service,
    method,
    protocolName: "grpc",
    requestMethod: "POST",
    url: `/${service.typeName}/${method.name}`,
    timeoutMs: Number.isFinite(deadlineMs) ? deadlineMs - Date.now() : undefined,
    requestSignal: cancelled.signal,
  });
}

/** Unary and client-streaming: the implementation's one response, or its error. */
function answer(context: Context, callback: grpc.sendUnaryData<unknown>, run: () => unknown) {
  new Promise((resolve) => resolve(run())).then(
    (response) => {
      context.abort();
      callback(null, response);
    },
    (error: unknown) => {
      context.abort();
      callback(statusOf(error));
    },
  );
}

/** Server-streaming: the responses as fast as the client takes them, then the status. */
async function stream(context: Context, call: grpc.ServerWritableStream<unknown, unknown>, run: () => AsyncIterable<unknown>) {
  try {
    for await (const response of run()) {
      if (context.signal.aborted) return;
      if (!call.write(response)) await writable(call);
    }
    call.end();
  } catch (error) {
    call.emit("error", statusOf(error));
  } finally {
    context.abort();
  }
}

/** Until the stream takes writes again, or the client is gone. */
function writable(call: grpc.ServerWritableStream<unknown, unknown>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      call.off("drain", done);
      call.off("cancelled", done);
      resolve();
    };
    call.on("drain", done);
    call.on("cancelled", done);
  });
}

/** connect's codes are gRPC's, number for number. */
function statusOf(error: unknown): Partial<grpc.StatusObject> {
  const connectError = ConnectError.from(error);
  return { code: connectError.code as number as grpc.status, details: connectError.rawMessage };
}
