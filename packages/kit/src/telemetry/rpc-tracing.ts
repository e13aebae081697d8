// OpenTelemetry spans for the calls a client makes, as a connect interceptor
// (connect-es has no OTel package; instrumentation-http does not see node:http2).
// Server spans are made around each handler by the server's service pipeline
// (server/calls/service-pipeline.ts), with the same name and attributes.
//
// Attributes are the classic RPC set that instrumentation-grpc and otelgrpc emit
// and that backends query: rpc.system, rpc.service, rpc.method, rpc.grpc.status_code.
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type TextMapSetter,
  type Tracer,
} from "@opentelemetry/api";
import { Code, ConnectError, type Interceptor, type StreamResponse } from "@connectrpc/connect";

const headerSetter: TextMapSetter<Headers> = {
  set: (headers, key, value) => headers.set(key, value),
};

export interface RpcTracingOptions {
  /** Defaults to the global tracer provider's "@lean-grpo/kit" tracer. */
  tracer?: Tracer;
  /** Services not traced. */
  skipServices?: ReadonlySet<string>;
}

/** Client spans: a child of the active span, propagated in the request headers. */
export function rpcClientTracing(options: RpcTracingOptions = {}): Interceptor {
  const skip = options.skipServices ?? new Set<string>();
  return (next) => async (req) => {
    if (skip.has(req.service.typeName)) return next(req);
    const tracer = options.tracer ?? trace.getTracer("@lean-grpo/kit");
    const span = tracer.startSpan(`${req.service.typeName}/${req.method.name}`, {
      kind: SpanKind.CLIENT,
      attributes: rpcAttributes(req.service.typeName, req.method.name),
    });
    const callContext = trace.setSpan(context.active(), span);
    propagation.inject(callContext, req.header, headerSetter);
    return traceCall(span, callContext, () => next(req));
  };
}

function rpcAttributes(service: string, method: string) {
  return { "rpc.system": "grpc", "rpc.service": service, "rpc.method": method };
}

async function traceCall<T extends { stream: boolean }>(span: Span, spanContext: Context, call: () => Promise<T>): Promise<T> {
  let response: T;
  try {
    response = await context.with(spanContext, call);
  } catch (error) {
    finish(span, error);
    throw error;
  }
  if (!response.stream) {
    finish(span);
    return response;
  }
  // `next` returns when a stream opens; the span must end when the stream ends.
  return wrapStream(response as unknown as StreamResponse, span, spanContext) as unknown as T;
}

function wrapStream(response: StreamResponse, span: Span, spanContext: Context): StreamResponse {
  const source = response.message;
  async function* traced() {
    const iterator = source[Symbol.asyncIterator]();
    let ended = false;
    try {
      for (;;) {
        // Each pull runs inside the span's context: async generators run lazily, so a
        // server-streaming handler would otherwise run outside the span.
        const result = await context.with(spanContext, () => iterator.next());
        if (result.done) break;
        yield result.value;
      }
      ended = true;
      finish(span);
    } catch (error) {
      ended = true;
      finish(span, error);
      throw error;
    } finally {
      if (!ended) {
        // The consumer stopped early (cancelled stream).
        finish(span, new ConnectError("stream cancelled", Code.Canceled));
        await iterator.return?.();
      }
    }
  }
  return { ...response, message: traced() };
}

function finish(span: Span, error?: unknown) {
  if (error === undefined) {
    span.setAttribute("rpc.grpc.status_code", 0); // OK
  } else {
    const connectError = ConnectError.from(error);
    span.setAttribute("rpc.grpc.status_code", connectError.code);
    span.recordException(connectError);
    span.setStatus({ code: SpanStatusCode.ERROR, message: `${Code[connectError.code]}: ${connectError.rawMessage}` });
  }
  span.end();
}
