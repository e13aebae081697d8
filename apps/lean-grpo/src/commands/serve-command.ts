// `lean-grpo serve <service|all>`: starts one service, or all five in this process
// on loopback ports, each on its own real gRPC port (the same code path as a
// deployment), and drains them on SIGTERM/SIGINT.
import { z } from "zod";
import { loadConfig, serve, createLogger, surviveUnhandledRejections, type ServerConfig } from "@lean-grpo/kit";
import type { InferenceConfig } from "@lean-grpo/inference";
import type { LearnerConfig } from "@lean-grpo/learner";
import { SERVICE_CATALOG, SERVICE_NAMES, type CatalogEntry } from "../mesh/service-catalog.js";
import { loadTopology, planTopology } from "../mesh/topology.js";
import { runTopology } from "../mesh/topology-runner.js";
import { onStopRequest } from "../process/stop-signals.js";
import { startTracing } from "../process/process-tracing.js";
import { DEFAULT_THREADS } from "../mesh/start-mesh.js";
import { startServiceThread } from "../mesh/service-thread.js";
import { applyMeshModel, MeshModelSchema, type MeshModel } from "../mesh/mesh-model.js";
import { checkModelDir, configDir } from "./train-config.js";

export interface ServeCommandOptions {
  config?: string;
  host?: string;
  port?: string;
  topology?: string;
  overrides: string[];
}

/**
 * `all` reads one YAML with a section per service, e.g. `verifier: { server: { port: 50052 } }`,
 * and the mesh's `model` (mesh-model.ts).
 */
const MeshConfigSchema = z
  .object({
    ...(Object.fromEntries(SERVICE_CATALOG.map((s) => [s.name, s.schema.prefault({})])) as Record<string, z.ZodType>),
    model: MeshModelSchema,
  })
  .strict();

export async function serveCommand(target: string, options: ServeCommandOptions): Promise<void> {
  // One request must never end the services: a rejection nobody handled is logged and counted.
  surviveUnhandledRejections(createLogger("lean-grpo"));
  if (options.topology !== undefined) {
    if (target !== "all") throw new Error("--topology applies to `serve all`");
    return serveTopology(options.topology, options.overrides);
  }
  const entries = target === "all" ? SERVICE_CATALOG : SERVICE_CATALOG.filter((s) => s.name === target);
  if (entries.length === 0) {
    throw new Error(`unknown service "${target}"; accepted: ${[...SERVICE_NAMES, "all"].join(", ")}`);
  }
  const configs = loadConfigs(target, entries, options);
  const model = configs.model as MeshModel | undefined;
  const modelUsers = model
    ? applyMeshModel(model, configs.inference as InferenceConfig | undefined, configs.learner as LearnerConfig | undefined)
    : [];
  if (model && modelUsers.length > 0) checkModelDir(model.dir, configDir());
  // Flushed by the stop request, after the servers drained (stop-signals.ts).
  startTracing(target === "all" ? "lean-grpo" : `lean-grpo-${target}`);

  const servers: { url: string; shutdown(): Promise<void> }[] = [];
  const urls: Record<string, string> = {};
  for (const service of entries) {
    const config = configs[service.name] as { server: ServerConfig };
    if (target === "all") service.wire?.(config, urls);
    // As in `train`: the learner trains in a thread of its own, so sampling and training use two cores.
    const threaded = target === "all" && DEFAULT_THREADS.includes(service.name);
    servers.push(
      threaded
        ? await startServiceThread(service.name, config)
        : await serve({
            name: service.name,
            services: [service.create(config)],
            config: config.server,
            logger: createLogger(service.name),
          }),
    );
    urls[service.name] = servers.at(-1)!.url;
  }
  // Handlers first: whoever reads the table may signal at once.
  onStopSignal(async () => {
    // Together: each turns NOT_SERVING at once, so the drain delays overlap.
    await Promise.all(servers.map((server) => server.shutdown()));
  });
  printTable(entries.map((e, i) => ({ service: e.name, url: servers[i]!.url })));
  if (target === "all") {
    const orchestrator = urls.orchestrator!;
    process.stdout.write(
      `start a run: npx buf curl --protocol grpc --http2-prior-knowledge -d '{"datasetPath": "examples/arith.jsonl"}' ${orchestrator}/leangrpo.v1.OrchestratorService/StartRun\n`,
    );
  }
  // Last: whoever waits for the mesh reads up to this line.
  if (model && modelUsers.length > 0) process.stdout.write(`model ${model.dir} (${modelUsers.join(", ")})\n`);
}

/** `serve all --topology FILE`: every replica is its own `lean-grpo serve <service>` process. */
async function serveTopology(file: string, overrides: string[]): Promise<void> {
  const running = await runTopology(planTopology(loadTopology(file, overrides)));
  onStopSignal(() => running.stop());
  printTable(running.replicas.map((r) => ({ service: `${r.service}[${r.index}]`, url: r.url, pid: r.pid() })));
}

function printTable(rows: { service: string; url: string; pid?: number }[]) {
  const width = Math.max(...rows.map((r) => r.url.length));
  process.stdout.write(
    rows.map((r) => `${r.service.padEnd(15)} ${r.url.padEnd(width)}  SERVING${r.pid ? `  pid ${r.pid}` : ""}`).join("\n") +
      `\n(Ctrl-C to stop; try: npx buf curl --protocol grpc --http2-prior-knowledge --list-services ${rows[0]!.url})\n`,
  );
}

function onStopSignal(stop: () => Promise<void>) {
  // SIGTERM, SIGINT, SIGHUP, or the npx/npm exec that started us gone (stop-signals.ts).
  onStopRequest(async (reason) => {
    createLogger("lean-grpo").info({ reason }, "stopping");
    await stop();
  }, 0);
}

function loadConfigs(target: string, entries: readonly CatalogEntry[], options: ServeCommandOptions) {
  const server: Record<string, unknown> = {};
  if (options.host !== undefined) server.host = options.host;
  if (options.port !== undefined) server.port = options.port;
  if (target !== "all") {
    const entry = entries[0]!;
    return {
      [entry.name]: loadConfig(entry.schema, {
        file: options.config,
        envPrefix: `LEANGRPO_${entry.name.toUpperCase()}_`,
        flags: Object.keys(server).length ? { server } : {},
        overrides: options.overrides,
      }),
    };
  }
  if (options.port !== undefined) throw new Error("--port applies to one service; for all, set <service>.server.port=N");
  const flags = options.host === undefined ? {} : Object.fromEntries(entries.map((e) => [e.name, { server: { host: options.host } }]));
  return loadConfig(MeshConfigSchema, {
    file: options.config,
    envPrefix: "LEANGRPO_",
    flags,
    overrides: options.overrides,
  }) as Record<string, unknown>;
}
