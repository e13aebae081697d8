// Process-wide tracing: W3C trace context propagation always, OTLP export only
// when OTEL_EXPORTER_OTLP_ENDPOINT (or the traces-specific variable) is set.
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { trace } from "@opentelemetry/api";

export interface TracingSetup {
  provider: NodeTracerProvider;
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
 * Registers the global tracer provider once per process. Later calls return the
 * first setup: in embedded mode several services share one process and one provider.
 */
export function setupTracing(options: SetupTracingOptions): TracingSetup {
  if (active) return active;
  const env = options.env ?? process.env;
  const processors = [...(options.spanProcessors ?? [])];
  const exporting =
    env.OTEL_SDK_DISABLED !== "true" &&
    env.OTEL_TRACES_EXPORTER !== "none" &&
    Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  // The exporter reads the endpoint, headers and protocol details from OTEL_* itself.
  if (exporting) processors.push(new BatchSpanProcessor(new OTLPTraceExporter()));
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || options.serviceName, "service.namespace": "lean-grpo" }),
    ),
    spanProcessors: processors,
  });
  provider.register();
  const setup: TracingSetup = {
    provider,
    exporting,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      if (active === setup) active = undefined;
    },
  };
  active = setup;
  return setup;
}
