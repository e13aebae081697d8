// A service implementation (connect's ServiceImpl, wrapped by the service pipeline)
// served by grpc-js: one grpc-js handler per method, each giving the implementation
// the HandlerContext it would get from connect-node (made by the admission, see
// admitting-call.ts). Services do not know which library serves them.
import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type * as grpc from "@grpc/grpc-js";
import type { GrpcCallGate } from "./admitting-call.js";
import type { GrpcCallContext } from "./grpc-call-context.js";
import { grpcStatusOf, toMetadata } from "./grpc-status.js";

// biome-ignore lint/suspicious/noExplicitAny: one adapter serves every method's message types
type Handler = (input: any, context: HandlerContext) => any;

/** What every grpc-js call object offers, whatever its shape. */
interface SurfaceCall {
  readonly metadata: grpc.Metadata;
  sendMetadata(metadata: grpc.Metadata): void;
}

type StreamingCall = grpc.ServerWritableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>;

export function grpcMethodHandler(method: DescMethod, handler: Handler, gate: GrpcCallGate) {
  switch (method.methodKind) {
    case "unary":
      return (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) =>
        respond(contextOf(gate, call), call, callback, handler, call.request);
    case "client_streaming":
      return (call: grpc.ServerReadableStream<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) =>
        respond(contextOf(gate, call), call, callback, handler, requestsOf(call));
    case "server_streaming":
      return (call: grpc.ServerWritableStream<unknown, unknown>) => void stream(contextOf(gate, call), call, handler, call.request);
    case "bidi_streaming":
      return (call: grpc.ServerDuplexStream<unknown, unknown>) => void stream(contextOf(gate, call), call, handler, requestsOf(call));
  }
}

/**
 * The request stream as the handler reads it. Not the call itself: iterating a Node
 * stream destroys it when the loop ends, and a bidi call's stream is also where the
 * responses go after the requests have ended.
 */
function requestsOf(call: grpc.ServerReadableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>): AsyncIterable<unknown> {
  return { [Symbol.asyncIterator]: () => call.iterator({ destroyOnReturn: false }) };
}

function contextOf(gate: GrpcCallGate, call: SurfaceCall): GrpcCallContext {
  const ctx = gate.contextOf(call.metadata);
  // Every routed call passes the admission, which makes its context.
  if (ctx === undefined) throw new ConnectError("the call was not admitted", Code.Internal);
  return ctx;
}

/** Unary and client-streaming: the handler's one response, or its error, with the headers and trailers it set. */
function respond(ctx: GrpcCallContext, call: SurfaceCall, callback: grpc.sendUnaryData<unknown>, handler: Handler, input: unknown) {
  let output: unknown;
  try {
    output = handler(input, ctx);
  } catch (error) {
    settle(ctx, call, callback, ConnectError.from(error), undefined);
    return;
  }
  // A handler that answers at once is answered at once, with no promise in between.
  if (typeof (output as PromiseLike<unknown> | undefined)?.then !== "function") {
    settle(ctx, call, callback, undefined, output);
    return;
  }
  (output as PromiseLike<unknown>).then(
    (value) => settle(ctx, call, callback, undefined, value),
    (error: unknown) =>
      settle(ctx, call, callback, ConnectError.from(error ?? new Error("the handler failed without an error")), undefined),
  );
}

function settle(
  ctx: GrpcCallContext,
  call: SurfaceCall,
  callback: grpc.sendUnaryData<unknown>,
  failure: ConnectError | undefined,
  value: unknown,
) {
  if (ctx.aborted) return; // grpc-js has answered already (deadline, cancel)
  ctx.answered = true;
  sendHeader(ctx, call);
  const trailer = ctx.responseTrailerIfAny;
  if (failure !== undefined) callback(grpcStatusOf(failure, trailer));
  else callback(null, value, trailer ? toMetadata(trailer) : undefined);
}

/** Server-streaming and bidi: the handler's responses as fast as the client takes them, then its status. */
async function stream(ctx: GrpcCallContext, call: StreamingCall, handler: Handler, input: unknown) {
  let headerSent = false;
  try {
    for await (const message of handler(input, ctx) as AsyncIterable<unknown>) {
      if (ctx.aborted) return;
      if (!headerSent) headerSent = sendHeader(ctx, call);
      if (!call.write(message)) await writable(call);
    }
    if (ctx.aborted) return;
    ctx.answered = true;
    if (!headerSent) sendHeader(ctx, call);
    const trailer = ctx.responseTrailerIfAny;
    call.end(trailer ? toMetadata(trailer) : undefined);
  } catch (error) {
    if (ctx.aborted) return;
    ctx.answered = true;
    if (!headerSent) sendHeader(ctx, call);
    // grpc-js answers the error once what was written before it is out.
    call.emit("error", grpcStatusOf(ConnectError.from(error), ctx.responseTrailerIfAny));
  }
}

/** Sends the response headers the handler set, if any; true once done. */
function sendHeader(ctx: GrpcCallContext, call: SurfaceCall): true {
  const header = ctx.responseHeaderIfAny;
  if (header && !isEmpty(header)) call.sendMetadata(toMetadata(header));
  return true;
}

/** Waits until the stream takes writes again, or the call is over. */
function writable(call: StreamingCall): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      call.off("drain", done);
      call.off("close", done);
      call.off("cancelled", done);
      resolve();
    };
    call.on("drain", done);
    call.on("close", done);
    call.on("cancelled", done);
  });
}

function isEmpty(headers: Headers): boolean {
  for (const _ of headers.keys()) return false;
  return true;
}
