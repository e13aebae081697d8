// Process-wide tracing. W3C trace context always propagates; spans are recorded
// only when something consumes them: an OTLP endpoint from OTEL_EXPORTER_OTLP_ENDPOINT
// (or the traces-specific variable), or processors passed in (tests).
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import type { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { loadTracingSdk } from "./tracing-sdk.js";

export interface TracingSetup {
  /** Undefined when no span is recorded (no exporter, no processors). */
  provider: NodeTracerProvider | undefined;
  /** True when spans leave the process through OTLP. */
  exporting: boolean;
  shutdown(): Promise<void>;
}

let active: TracingSetup | undefined;

export interface SetupTracingOptions {
  /** service.name unless OTEL_SERVICE_NAME is set. */
  serviceName: string;
  /** Extra processors (tests pass an in-memory exporter here). */
  spanProcessors?: SpanProcessor[];
  env?: NodeJS.ProcessEnv;
}

/**
 * Flushes and shuts down the process's tracing, when it was set up: what a process does
 * before it exits, so that the spans still batched (its last calls) are delivered.
 */
export async function shutdownTracing(): Promise<void> {
  await active?.shutdown();
}

/**
 * Sets up tracing once per process. Later calls return the first setup: in embedded
 * mode several services share one process and one provider.
 */
export function setupTracing(options: SetupTracingOptions): TracingSetup {
  if (active) return active;
  const env = options.env ?? process.env;
  const processors = [...(options.spanProcessors ?? [])];
  const exporting =
    env.OTEL_SDK_DISABLED !== "true" &&
    env.OTEL_TRACES_EXPORTER !== "none" &&
    Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const sdk = exporting || processors.length > 0 ? loadTracingSdk() : undefined;
  // The exporter reads the endpoint, headers and protocol details from OTEL_* itself.
  if (sdk && exporting) processors.push(new sdk.BatchSpanProcessor(new sdk.OTLPTraceExporter()));

  let provider: NodeTracerProvider | undefined;
  if (sdk && processors.length > 0) {
    const { NodeTracerProvider, defaultResource, resourceFromAttributes } = sdk;
    provider = new NodeTracerProvider({
      resource: defaultResource().merge(
        resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || options.serviceName, "service.namespace": "lean-grpo" }),
      ),
      spanProcessors: processors,
    });
    provider.register();
  } else {
    // Nothing would read the spans, so leave the no-op tracer in place: its spans
    // still carry the caller's trace context from the incoming traceparent to the
    // outgoing one, so a trace recorded upstream stays whole across this process.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(
      new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
    );
  }
  const setup: TracingSetup = {
    provider,
    exporting,
    async shutdown() {
      await provider?.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
      if (active === setup) active = undefined;
    },
  };
  active = setup;
  return setup;
}
