// Starts the services a training run needs in this process, each on its own loopback
// port through its public createXService(config) (the same code path as `serve all` and
// a deployment), wired to each other, with the orchestrator last pointed at them all.
import { ConfigError, deepMerge, loadConfig, serve, type ServerConfig } from "@lean-grpo/kit";
import { sectionConfigError } from "./section-error.js";
import { OrchestratorConfigSchema, type OrchestratorConfig } from "@lean-grpo/orchestrator";
import { createOrchestratorService } from "@lean-grpo/orchestrator";
import { renderOfflineReport } from "@lean-grpo/dashboard";
import type { RunManager } from "@lean-grpo/orchestrator";
import { SERVICE_CATALOG, type CatalogEntry } from "./service-catalog.js";
import { startServiceThread, type ThreadedServer } from "./service-thread.js";
import { splitLearnerSection, startTorchLearner, type TorchLearnerOptions } from "./torch-learner-process.js";
import { shareRunsDir } from "./shared-runs-dir.js";
import { applyMeshAuth } from "./mesh-auth.js";

type ServiceConfig = { server: ServerConfig } & Record<string, unknown>;

export interface MeshOptions {
  /** Hugging Face model directory for the embedded sampler and the learner. */
  modelDir: string;
  /** The mesh model's `reasoning_*` keys, for the services that hold the model (mesh-model.ts reasoningKeys). */
  reasoning?: Record<string, unknown>;
  /**
   * Per-service config sections (catalog schemas), e.g. { learner: { optimizer: { learning_rate: 1e-3 } } }.
   * A section holding only `url` (e.g. `services.learner.url: 127.0.0.1:50054`) names a remote
   * service: it is not started here and the run calls it there.
   */
  services?: Record<string, Record<string, unknown> | undefined>;
  /** Orchestrator settings (runs_dir, retries). */
  orchestrator?: Record<string, unknown>;
  /** Services started in worker threads of their own (default: the learner). */
  threads?: readonly string[];
  /**
   * Where the mesh token comes from (mesh-auth.ts): LEANGRPO_AUTH_TOKEN of `env` (default the
   * process's), else a token the sections set; every service started here then requires it.
   */
  auth?: { env?: NodeJS.ProcessEnv; tokenFile?: string };
}

/**
 * The learner and the sampler each compute in a thread of their own, so generation of the
 * next step overlaps training (training.async) and the main thread (the orchestrator, the
 * verifier, the reward service, the CLI) stays free to move RPCs: with the sampler on the
 * main thread, a TrainStep's 129 messages and each adapter sync waited behind its decode
 * passes, about 0.8 s of every step of the README's main command (issue 26).
 */
export const DEFAULT_THREADS: readonly string[] = ["learner", "inference"];

export interface RunningMesh {
  urls: Record<string, string>;
  /** In-process servers, and ThreadedServers (which also report their thread's busy share). */
  servers: Record<string, { url: string; shutdown(): Promise<void> } | ThreadedServer>;
  runs: RunManager;
  /** The token every service here requires and its callers present; absent: auth is off. */
  token?: string;
  shutdown(): Promise<void>;
}

const EPHEMERAL = { server: { port: 0, shutdown: { drain_delay_ms: 0, grace_period_ms: 2000 } } };

export async function startMesh(options: MeshOptions): Promise<RunningMesh> {
  const urls: Record<string, string> = {};
  const servers: RunningMesh["servers"] = {};
  const started: { shutdown(): Promise<void> }[] = [];
  // Parsed first: the learner started here writes the runs' checkpoints into runs_dir.
  const orchestratorConfig = meshOrchestratorConfig(options);
  // Every config before any service starts: the mesh token is decided over all of them (mesh-auth.ts).
  const resolved = resolveMeshServices(options, orchestratorConfig);
  const local = resolved.filter((s): s is LocalService => "config" in s);
  for (const service of resolved) if ("remote" in service) urls[service.entry.name] = service.remote;
  const auth = applyMeshAuth(
    { ...Object.fromEntries(local.map(({ entry, config }) => [entry.name, config])), orchestrator: orchestratorConfig },
    options.auth ?? {},
  );
  try {
    for (const { entry, config, torch } of local) {
      entry.wire?.(config, urls);
      if (torch) {
        const server = await startTorchLearner(config as { server: ServerConfig }, torch);
        started.push(server);
        servers[entry.name] = server;
        urls[entry.name] = server.url;
        continue;
      }
      if ((options.threads ?? DEFAULT_THREADS).includes(entry.name)) {
        // Its own thread, so its tensor work runs on another core (service-thread.ts).
        const server = await startServiceThread(entry.name, config as Record<string, unknown>);
        started.push(server);
        servers[entry.name] = server;
        urls[entry.name] = server.url;
        continue;
      }
      const server = await serve({ name: entry.name, services: [entry.create(config)], config: config.server });
      started.push(server);
      servers[entry.name] = server;
      urls[entry.name] = server.url;
    }
    const config = orchestratorConfig;
    // Where options.orchestrator names a service itself, that one wins.
    config.services = {
      inference: urls.inference,
      reward: urls.reward,
      learner: urls.learner,
      verifier: urls.verifier,
      ...config.services,
    };
    const orchestrator = createOrchestratorService(config, { renderReport: renderOfflineReport });
    const server = await serve({ name: "orchestrator", services: [orchestrator], config: config.server as ServerConfig });
    started.push(server);
    servers.orchestrator = server;
    urls.orchestrator = server.url;
    return {
      urls,
      servers,
      runs: orchestrator.runs,
      ...(auth.token === undefined ? {} : { token: auth.token }),
      async shutdown() {
        await orchestrator.runs.shutdown();
        await Promise.all(started.map((s) => s.shutdown()));
      },
    };
  } catch (error) {
    await Promise.all(started.map((s) => s.shutdown()));
    throw error;
  }
}

/** The orchestrator's config of a mesh started with `options`. */
export function meshOrchestratorConfig(options: Pick<MeshOptions, "orchestrator">): OrchestratorConfig {
  try {
    return loadConfig(OrchestratorConfigSchema, { flags: deepMerge(EPHEMERAL, options.orchestrator ?? {}) });
  } catch (error) {
    throw error instanceof ConfigError ? sectionConfigError(error, "services.orchestrator") : error;
  }
}

/** A service of the mesh started here: its config as it will start, and for the PyTorch learner how. */
export type LocalService = { entry: CatalogEntry; config: ServiceConfig; torch: TorchLearnerOptions | null };
/** A service of the mesh (all but the orchestrator): started here, or the URL of a remote one. */
export type MeshService = LocalService | { entry: CatalogEntry; remote: string };

/**
 * Every service but the orchestrator, resolved as startMesh starts them: each local one's
 * config through its own schema (so a bad key is refused before anything starts), a section
 * holding only `url` as a remote service. `lean-grpo train` checks its plan with this too.
 */
export function resolveMeshServices(options: MeshOptions, orchestratorConfig: OrchestratorConfig): MeshService[] {
  return SERVICE_CATALOG.filter((s) => s.name !== "orchestrator").map((entry): MeshService => {
    const remote = remoteUrl(entry.name, options.services?.[entry.name]);
    if (remote) return { entry, remote };
    // services.learner.impl: torch starts the PyTorch learner; its keys are not the TS schema's.
    const { config: section, torch } = splitLearnerSection(entry.name, options.services?.[entry.name]);
    let config: ServiceConfig;
    try {
      config = loadConfig(entry.schema, {
        flags: deepMerge(deepMerge(EPHEMERAL, modelFlags(entry.name, options.modelDir, options.reasoning ?? {})), section),
      }) as ServiceConfig;
    } catch (error) {
      throw error instanceof ConfigError ? sectionConfigError(error, `services.${entry.name}`) : error;
    }
    if (entry.name === "learner") shareRunsDir(config as unknown as { checkpoint_dir: string }, orchestratorConfig);
    return { entry, config, torch };
  });
}

function remoteUrl(service: string, section: Record<string, unknown> | undefined): string | undefined {
  if (section?.url === undefined) return undefined;
  const { url, ...rest } = section;
  if (typeof url !== "string" || url === "")
    throw new Error(`services.${service}.url must be host:port or an http(s):// URL, got ${JSON.stringify(url)}`);
  if (Object.keys(rest).length > 0)
    throw new Error(
      `services.${service}.url names a remote ${service}: its other settings (${Object.keys(rest).join(", ")}) belong in that process's config`,
    );
  return /^https?:\/\//.test(url) ? url : `http://${url}`;
}

function modelFlags(service: string, modelDir: string, reasoning: Record<string, unknown>): Record<string, unknown> {
  if (service === "inference") return { embedded: { model_dir: modelDir }, model: reasoning };
  if (service === "learner") return { model: { dir: modelDir, ...reasoning } };
  return {};
}
