// Runs in the worker thread: builds the service from the catalog, serves it, reports the
// URL, and on "shutdown" drains and closes it. A thread has its own OpenTelemetry globals,
// so it sets up tracing of its own (OTEL_* from the environment it was started with): its
// server spans continue the caller's traceparent, and are flushed before it reports stopped.
import { parentPort, workerData } from "node:worker_threads";
import { createLogger, loadConfig, serve, setupTracing, surviveUnhandledRejections } from "@lean-grpo/kit";
import { SERVICE_CATALOG } from "./service-catalog.js";
import type { ServiceThreadCommand, ServiceThreadReply, ServiceThreadRequest } from "./service-thread-protocol.js";

const port = parentPort!;
const reply = (message: ServiceThreadReply) => port.postMessage(message);
const { service, flags } = workerData as ServiceThreadRequest;

// A thread has its own process events: without this, one rejection nobody handled ends the thread's service.
surviveUnhandledRejections(createLogger(service));
const tracing = setupTracing({ serviceName: `lean-grpo-${service}` });
try {
  const entry = SERVICE_CATALOG.find((s) => s.name === service);
  if (!entry) throw new Error(`unknown service ${service}; known: ${SERVICE_CATALOG.map((s) => s.name).join(", ")}`);
  const config = loadConfig(entry.schema, { flags });
  const server = await serve({ name: entry.name, services: [entry.create(config)], config: config.server });
  port.on("message", async (command: ServiceThreadCommand) => {
    if (command.kind !== "shutdown") return;
    await server.shutdown();
    await tracing.shutdown().catch(() => {});
    reply({ kind: "stopped" });
    port.close();
  });
  reply({ kind: "serving", url: server.url });
} catch (error) {
  reply({ kind: "failed", message: (error as Error).message });
}
