// OpenTelemetry spans for RPCs, as connect interceptors (connect-es has no OTel
// package; instrumentation-http does not see node:http2). One interceptor serves
// every protocol connect-node answers: gRPC, gRPC-Web and Connect.
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
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from "@opentelemetry/api";
import { Code, ConnectError, type Interceptor, type StreamResponse } from "@connectrpc/connect";

const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};
const headerSetter: TextMapSetter<Headers> = {
  set: (headers, key, value) => headers.set(key, value),
};

export interface RpcTracingOptions {
  /** Defaults to the global tracer provider's "@lean-grpo/kit" tracer. */
  tracer?: Tracer;
  /** Services not traced (health checks and reflection by default on the server). */
  skipServices?: ReadonlySet<string>;
}

export const UNTRACED_SERVICES: ReadonlySet<string> = new Set([
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);

/** Server spans: continue the caller's W3C traceparent, one span per call. */
export function rpcServerTracing(options: RpcTracingOptions = {}): Interceptor {
  const skip = options.skipServices ?? UNTRACED_SERVICES;
  return (next) => async (req) => {
    if (skip.has(req.service.typeName)) return next(req);
    const tracer = options.tracer ?? trace.getTracer("@lean-grpo/kit");
    const parent = propagation.extract(context.active(), req.header, headerGetter);
    const span = tracer.startSpan(
      `${req.service.typeName}/${req.method.name}`,
      { kind: SpanKind.SERVER, attributes: rpcAttributes(req.service.typeName, req.method.name) },
      parent,
    );
    return traceCall(span, trace.setSpan(parent, span), () => next(req));
  };
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
