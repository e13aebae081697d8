// A topology: how many processes of each service `lean-grpo serve all --topology`
// starts on this machine, and on which ports. Replicas of one service are separate
// processes, as they would be separate pods, so balancing and failover are real.
import { z } from "zod";
import { loadConfig, type ServerConfig } from "@lean-grpo/kit";
import { SERVICE_CATALOG, SERVICE_NAMES } from "./service-catalog.js";
import { dialUrl } from "./mesh-tls.js";

const ServiceTopologySchema = z
  .object({
    /** Processes of this service (0 leaves it out). */
    replicas: z.number().int().min(0).max(64).default(1),
    /** Config file for every replica (the service's own schema). */
    config: z.string().min(1).optional(),
    /**
     * Dotted overrides for every replica. `${urls.<service>}` becomes the flow list of
     * that service's replica URLs, e.g. `verifier.urls=${urls.verifier}`; `${replica}` becomes
     * the replica's index (0, 1, …), for what each must hold on its own, e.g.
     * `adapters.dir=/tmp/adapters-${replica}`.
     */
    overrides: z.array(z.string()).default([]),
    /** Start a replica again when it exits on its own. */
    restart: z.boolean().default(false),
  })
  .strict();

export const TopologySchema = z
  .object({
    /** The address every replica binds and is called at (one machine). */
    host: z.string().min(1).default("127.0.0.1"),
    /** Replicas take consecutive ports from here, in service order. */
    base_port: z.number().int().min(1024).max(65000).default(50100),
    /** Per service (inference, verifier, reward, learner, orchestrator): its replicas, config and overrides; a service left out runs no replica. */
    services: z
      .object(
        Object.fromEntries(
          SERVICE_NAMES.map((name) => [
            name,
            ServiceTopologySchema.prefault({ replicas: 0 }).describe(
              `The ${name} service's replicas: how many, and each one's config and overrides.`,
            ),
          ]),
        ),
      )
      .strict(),
  })
  .strict();

export type Topology = z.infer<typeof TopologySchema>;
export type ServiceTopology = z.infer<typeof ServiceTopologySchema>;

export interface PlannedReplica {
  service: string;
  index: number;
  port: number;
  /** How the others and this process dial it: https:// when it serves TLS. */
  url: string;
  args: string[];
  restart: boolean;
  /** Its `server` section as the replica will read it (its config file, LEANGRPO_<SERVICE>_ variables, overrides). */
  server: ServerConfig;
}

export function loadTopology(file: string, overrides: string[] = []): Topology {
  return loadConfig(TopologySchema, { file, overrides }) as Topology;
}

/**
 * Assigns ports, reads each service's `server` section as its replicas will (to dial a TLS
 * service at https://), and expands `${urls.<service>}` in overrides.
 */
export function planTopology(topology: Topology, env: NodeJS.ProcessEnv = process.env): PlannedReplica[] {
  const services = topology.services as Record<string, ServiceTopology>;
  const ports: Record<string, number[]> = {};
  let port = topology.base_port;
  for (const name of SERVICE_NAMES) {
    ports[name] = Array.from({ length: services[name]!.replicas }, () => port++);
  }
  const expand = (urls: Record<string, string[]>) => (o: string) =>
    o.replace(/\$\{urls\.([a-z]+)\}/g, (_, target: string) => {
      if (!(target in urls)) throw new Error(`topology: unknown service "${target}" in ${o}; accepted: ${SERVICE_NAMES.join(", ")}`);
      return `[${urls[target]!.join(", ")}]`;
    });
  // The server sections decide the scheme; they do not depend on the URLs (which stand in as plain text here).
  const plainUrls = Object.fromEntries(SERVICE_NAMES.map((name) => [name, ports[name]!.map((p) => `http://${topology.host}:${p}`)]));
  const servers = Object.fromEntries(
    SERVICE_NAMES.filter((name) => ports[name]!.length > 0).map((name) => {
      const overrides = services[name]!.overrides.map(expand(plainUrls));
      return [name, replicaServer(name, services[name]!, topology.host, ports[name]![0]!, overrides, env)];
    }),
  );
  const urls = Object.fromEntries(SERVICE_NAMES.map((name) => [name, ports[name]!.map((p) => dialUrl(servers[name]!, p))]));
  return SERVICE_NAMES.flatMap((name) => {
    const service = services[name]!;
    const overrides = service.overrides.map(expand(urls));
    return ports[name]!.map((p, index) => ({
      service: name,
      index,
      port: p,
      url: urls[name]![index]!,
      restart: service.restart,
      server: servers[name]!,
      args: [
        "serve",
        name,
        "--host",
        topology.host,
        "--port",
        String(p),
        ...(service.config ? ["--config", service.config] : []),
        ...overrides.map((o) => o.replace(/\$\{replica\}/g, String(index))),
      ],
    }));
  });
}

/** A replica's `server` section, read as `lean-grpo serve <service> --host H --port P [--config F] overrides` will. */
function replicaServer(
  name: string,
  service: ServiceTopology,
  host: string,
  port: number,
  overrides: string[],
  env: NodeJS.ProcessEnv,
): ServerConfig {
  const entry = SERVICE_CATALOG.find((s) => s.name === name)!;
  return loadConfig(entry.schema, {
    file: service.config,
    env,
    envPrefix: `LEANGRPO_${name.toUpperCase()}_`,
    flags: { server: { host, port } },
    overrides,
  }).server;
}
