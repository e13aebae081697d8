// `lean-grpo serve <service|all>`: starts one service, or all five in this process
// on loopback ports, each on its own real gRPC port (the same code path as a
// deployment), and drains them on SIGTERM/SIGINT.
import { z } from "zod";
import { AUTH_TOKEN_ENV, loadConfig, serve, createLogger, surviveUnhandledRejections, type ServerConfig } from "@lean-grpo/kit";
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
import { shareRunsDir } from "../mesh/shared-runs-dir.js";
import { applyMeshAuth, describeMeshAuth } from "../mesh/mesh-auth.js";
import { requireMeshExposure } from "../mesh/mesh-exposure.js";
import { bufCurlFlags, describeMeshTls, dialUrl, requireTrustedInProcess } from "../mesh/mesh-tls.js";

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
  // Before anything starts: beyond loopback TLS or an explicit allow_plaintext for every service, and
  // certificates that load (serve() checks each server as it starts, after the ones before it).
  const exposed = entries.map((service) => ({
    service: service.name,
    keyPrefix: target === "all" ? `${service.name}.` : "",
    server: (configs[service.name] as { server: ServerConfig }).server,
  }));
  requireMeshExposure(exposed);
  // The services this process's own clients dial (serve all's wiring) must trust their certificates.
  if (target === "all") await requireTrustedInProcess(exposed.filter((e) => wiredTargets(entries, configs).has(e.service)));
  // Flushed by the stop request, after the servers drained (stop-signals.ts).
  startTracing(target === "all" ? "lean-grpo" : `lean-grpo-${target}`);

  // Beyond loopback, auth is on: one token, required by every service and presented by every client inside (mesh-auth.ts).
  const auth = applyMeshAuth(configs);
  if (target === "all") shareRunsDir(configs.learner as LearnerConfig, configs.orchestrator as { runs_dir: string });
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
    // The URL the others dial: a TLS server bound to every interface at a name its certificate holds.
    urls[service.name] = config.server.tls ? dialUrl(config.server, Number(new URL(servers.at(-1)!.url).port)) : servers.at(-1)!.url;
  }
  // Handlers first: whoever reads the table may signal at once.
  onStopSignal(async () => {
    // Together: each turns NOT_SERVING at once, so the drain delays overlap.
    await Promise.all(servers.map((server) => server.shutdown()));
  });
  printTable(
    entries.map((e, i) => ({ service: e.name, url: urls[e.name] ?? servers[i]!.url })),
    bufCurlFlags(exposed[0]!.server),
  );
  process.stdout.write(`${describeMeshAuth(auth)}\n`);
  for (const line of describeMeshTls(exposed)) process.stdout.write(`${line}\n`);
  if (target === "all") {
    const orchestrator = urls.orchestrator!;
    const header = auth.token ? ` -H "authorization: Bearer $${AUTH_TOKEN_ENV}"` : "";
    const server = (configs.orchestrator as { server: ServerConfig }).server;
    process.stdout.write(
      `start a run: npx buf curl --protocol grpc${bufCurlFlags(server)}${header} -d '{"datasetPath": "examples/arith.jsonl"}' ${orchestrator}/leangrpo.v1.OrchestratorService/StartRun\n`,
    );
  }
  // Last: whoever waits for the mesh reads up to this line.
  if (model && modelUsers.length > 0) process.stdout.write(`model ${model.dir} (${modelUsers.join(", ")})\n`);
}

/** `serve all --topology FILE`: every replica is its own `lean-grpo serve <service>` process. */
async function serveTopology(file: string, overrides: string[]): Promise<void> {
  const plan = planTopology(loadTopology(file, overrides));
  // One replica per service stands for all of them: they differ only in their port.
  const firsts = plan
    .filter((r) => r.index === 0)
    .map((r) => ({ service: `${r.service} (topology services.${r.service})`, keyPrefix: "", server: r.server }));
  requireMeshExposure(firsts);
  // This process waits for each replica's health, and the replicas dial each other, at these URLs.
  await requireTrustedInProcess(firsts);
  const running = await runTopology(plan);
  onStopSignal(() => running.stop());
  printTable(
    running.replicas.map((r) => ({ service: `${r.service}[${r.index}]`, url: r.url, pid: r.pid() })),
    bufCurlFlags(running.replicas[0]!.server),
  );
  for (const line of describeMeshTls(firsts)) process.stdout.write(`${line}\n`);
}

function printTable(rows: { service: string; url: string; pid?: number }[], tlsFlags: string) {
  const width = Math.max(...rows.map((r) => r.url.length));
  process.stdout.write(
    rows.map((r) => `${r.service.padEnd(15)} ${r.url.padEnd(width)}  SERVING${r.pid ? `  pid ${r.pid}` : ""}`).join("\n") +
      `\n(Ctrl-C to stop; try: npx buf curl --protocol grpc${tlsFlags} --list-services ${rows[0]!.url})\n`,
  );
}

/**
 * The services another service of this process will dial at the URL `serve all` gives it: a
 * catalog entry's wire reads a service's URL only when its own config leaves it unset.
 */
function wiredTargets(entries: readonly CatalogEntry[], configs: Record<string, unknown>): Set<string> {
  const read = new Set<string>();
  const urls = new Proxy({} as Record<string, string>, {
    get: (_, name) => {
      read.add(String(name));
      return "https://wired.invalid:1";
    },
  });
  for (const entry of entries) entry.wire?.(structuredClone(configs[entry.name]) as { server: ServerConfig }, urls);
  return read;
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
