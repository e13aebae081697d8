// What happens around every handler, whichever engine serves the call (grpc-js for
// gRPC, connect-node for Connect and gRPC-Web): a server span continuing the caller's
// trace, and the service's domain errors mapped to statuses. Defined once here, on the
// implementation itself, so both engines run exactly the same code for a call.
//
// Span attributes are the classic RPC set that instrumentation-grpc and otelgrpc emit
// and that backends query: rpc.system, rpc.service, rpc.method, rpc.grpc.status_code.
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanOptions,
  type TextMapGetter,
  type Tracer,
} from "@opentelemetry/api";
import { toConnectError, type DomainErrorMapping } from "../../errors/domain-error-mapping.js";
import { requestHeaderOf } from "./call-context.js";
import { OPEN_SERVICES } from "./call-routes.js";

// biome-ignore lint/suspicious/noExplicitAny: handlers of every method shape pass through one wrapper
type AnyHandler = (input: any, context: HandlerContext) => any;

export interface ServicePipelineOptions {
  /** How the service's own errors answer; unknown errors answer INTERNAL. */
  errors?: DomainErrorMapping;
  /** Called with errors no mapping knows (bugs), with their stack, for the log. */
  onUnmapped?: (error: unknown, rpc: string) => void;
  /** Services not traced (health and reflection by default). */
  untraced?: ReadonlySet<string>;
}

/**
 * The implementation with every method wrapped (a method the service lacks answers
 * UNIMPLEMENTED, as connect does). The result is a complete implementation.
 */
export function wrapServiceImpl<T extends DescService>(
  service: T,
  impl: Partial<ServiceImpl<T>>,
  options: ServicePipelineOptions = {},
): ServiceImpl<T> {
  const wrapped: Record<string, AnyHandler> = {};
  const traced = !(options.untraced ?? OPEN_SERVICES).has(service.typeName);
  // A proxy that follows whatever provider is registered, now or later.
  const tracer = trace.getTracer("@lean-grpo/kit");
  for (const method of service.methods) {
    const own = (impl as Record<string, AnyHandler | undefined>)[method.localName];
    const handler: AnyHandler =
      typeof own === "function"
        ? own.bind(impl)
        : () => {
            throw new ConnectError(`${service.typeName}.${method.name} is not implemented`, Code.Unimplemented);
          };
    const rpc = `${service.typeName}/${method.name}`;
    const statusOf = (error: unknown, ctx: HandlerContext) =>
      toConnectError(error, options.errors ?? [], ctx.signal, options.onUnmapped && ((e) => options.onUnmapped!(e, rpc)));
    const streamsOut = method.methodKind === "server_streaming" || method.methodKind === "bidi_streaming";
    const spans = traced ? new ServerSpans(tracer, service, method) : undefined;
    wrapped[method.localName] = streamsOut ? streamingHandler(handler, statusOf, spans) : singleResponseHandler(handler, statusOf, spans);
  }
  return wrapped as unknown as ServiceImpl<T>;
}

type StatusOf = (error: unknown, ctx: HandlerContext) => ConnectError;

/**
 * Unary and client-streaming: one response, or one error. A handler that answers at
 * once is answered at once (no promise in between); one that returns a promise gets one.
 */
function singleResponseHandler(handler: AnyHandler, statusOf: StatusOf, spans: ServerSpans | undefined) {
  return (input: unknown, ctx: HandlerContext): unknown => {
    const span = spans?.start(ctx);
    let output: unknown;
    try {
      output = span?.context ? context.with(span.context, handler, undefined, input, ctx) : handler(input, ctx);
    } catch (error) {
      throw failed(error, ctx, statusOf, span?.span);
    }
    if (!isThenable(output)) {
      if (span) endSpan(span.span);
      return output;
    }
    return output.then(
      (value) => {
        if (span) endSpan(span.span);
        return value;
      },
      (error: unknown) => {
        throw failed(error, ctx, statusOf, span?.span);
      },
    );
  };
}

function failed(error: unknown, ctx: HandlerContext, statusOf: StatusOf, span: Span | undefined): ConnectError {
  const status = statusOf(error, ctx);
  if (span) endSpan(span, status);
  return status;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === "function";
}

/** Server-streaming and bidi: the span ends, and errors are mapped, when the response stream does. */
function streamingHandler(handler: AnyHandler, statusOf: StatusOf, spans: ServerSpans | undefined) {
  return async function* (input: unknown, ctx: HandlerContext) {
    const span = spans?.start(ctx);
    // Each pull runs inside the span's context: async generators run lazily, so the
    // handler's own work would otherwise run outside the span.
    const inSpan = <T>(work: () => T): T => (span?.context ? context.with(span.context, work) : work());
    let ended = false;
    let iterator: AsyncIterator<unknown> | undefined;
    try {
      iterator = inSpan(() => (handler(input, ctx) as AsyncIterable<unknown>)[Symbol.asyncIterator]());
      for (;;) {
        const result = await inSpan(() => iterator!.next());
        if (result.done) break;
        yield result.value;
      }
      ended = true;
      if (span) endSpan(span.span);
    } catch (error) {
      ended = true;
      const status = statusOf(error, ctx);
      if (span) endSpan(span.span, status);
      throw status;
    } finally {
      if (!ended) {
        // The consumer stopped early: the call was cancelled.
        if (span) endSpan(span.span, new ConnectError("stream cancelled", Code.Canceled));
        await iterator?.return?.();
      }
    }
  };
}

const headerGetter: TextMapGetter<HandlerContext> = {
  get: (ctx, key) => requestHeaderOf(ctx, key),
  keys: (ctx) => [...ctx.requestHeader.keys()],
};

/** The server spans of one method: its name and attributes made once, a span per call. */
class ServerSpans {
  private readonly name: string;
  private readonly options: SpanOptions;

  constructor(
    private readonly tracer: Tracer,
    service: DescService,
    method: DescMethod,
  ) {
    this.name = `${service.typeName}/${method.name}`;
    this.options = {
      kind: SpanKind.SERVER,
      attributes: { "rpc.system": "grpc", "rpc.service": service.typeName, "rpc.method": method.name },
    };
  }

  start(ctx: HandlerContext): { span: Span; context?: Context } {
    const active = context.active();
    const propagated = requestHeaderOf(ctx, "traceparent") !== undefined || requestHeaderOf(ctx, "baggage") !== undefined;
    const parent = propagated ? propagation.extract(active, ctx, headerGetter) : active;
    const span = this.tracer.startSpan(this.name, this.options, parent);
    // Only a recording span or a propagated context needs to be the active one while
    // the handler runs (for its child spans, and the traceparent of its own calls).
    return { span, context: span.isRecording() || propagated ? trace.setSpan(parent, span) : undefined };
  }
}

function endSpan(span: Span, error?: ConnectError) {
  if (error === undefined) {
    span.setAttribute("rpc.grpc.status_code", 0); // OK
  } else {
    span.setAttribute("rpc.grpc.status_code", error.code);
    span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: `${Code[error.code]}: ${error.rawMessage}` });
  }
  span.end();
}
