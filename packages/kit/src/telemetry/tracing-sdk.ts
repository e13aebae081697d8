// The OpenTelemetry SDK and OTLP exporter, loaded only by a process that records spans.
// Loaded on demand, synchronously, from their CommonJS builds: a service that exports
// nothing (the default) never carries them, and a process's heap is what each of its
// garbage collections pays for (bench/rpc). The API's global state is shared between
// its module instances (the OpenTelemetry API keeps it on globalThis by version), so
// the provider registered here is the one `@opentelemetry/api` hands out everywhere.
import { createRequire } from "node:module";
import type { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import type { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import type { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";

export interface TracingSdk {
  NodeTracerProvider: typeof NodeTracerProvider;
  BatchSpanProcessor: typeof BatchSpanProcessor;
  OTLPTraceExporter: typeof OTLPTraceExporter;
  defaultResource: typeof defaultResource;
  resourceFromAttributes: typeof resourceFromAttributes;
}

export function loadTracingSdk(): TracingSdk {
  const require = createRequire(import.meta.url);
  return {
    NodeTracerProvider: require("@opentelemetry/sdk-trace-node").NodeTracerProvider,
    BatchSpanProcessor: require("@opentelemetry/sdk-trace-base").BatchSpanProcessor,
    OTLPTraceExporter: require("@opentelemetry/exporter-trace-otlp-proto").OTLPTraceExporter,
    defaultResource: require("@opentelemetry/resources").defaultResource,
    resourceFromAttributes: require("@opentelemetry/resources").resourceFromAttributes,
  };
}
