// The main() of a service process: parse argv, load config, set up tracing, serve
// until SIGTERM. Services' src/server.ts files are this call and nothing else.
import { parseArgs } from "node:util";
import type { z } from "zod";
import { loadConfig, ConfigError } from "../config/index.js";
import { setupTracing } from "../telemetry/setup-tracing.js";
import { createLogger } from "../log.js";
import { requireAuthBeyondLoopback } from "../auth/mesh-token.js";
import { serve, type RunningServer, type ServiceRegistration } from "./serve.js";
import { requireSafeExposure } from "./exposure.js";
import { surviveUnhandledRejections } from "./unhandled-rejections.js";
import type { ServerConfig } from "./server-config.js";

export interface RunServiceOptions<S extends z.ZodType<{ server: ServerConfig }>> {
  /** Short name: "verifier", "learner", ... (env prefix LEANGRPO_<NAME>_). */
  name: string;
  schema: S;
  create: (config: z.infer<S>) => ServiceRegistration[] | Promise<ServiceRegistration[]>;
  argv?: string[];
}

const USAGE = "usage: [--config FILE.yaml] [--host HOST] [--port PORT] [key.path=value ...]";

export async function runService<S extends z.ZodType<{ server: ServerConfig }>>(options: RunServiceOptions<S>): Promise<RunningServer> {
  const logger = createLogger(options.name);
  surviveUnhandledRejections(logger);
  let config: z.infer<S>;
  try {
    const { values, positionals } = parseArgs({
      args: options.argv ?? process.argv.slice(2),
      options: {
        config: { type: "string" },
        host: { type: "string" },
        port: { type: "string" },
      },
      allowPositionals: true,
    });
    const server: Record<string, unknown> = {};
    if (values.host !== undefined) server.host = values.host;
    if (values.port !== undefined) server.port = Number(values.port);
    config = loadConfig(options.schema, {
      file: values.config,
      env: process.env,
      envPrefix: `LEANGRPO_${options.name.toUpperCase()}_`,
      flags: Object.keys(server).length > 0 ? { server } : {},
      overrides: positionals,
    });
    requireAuthBeyondLoopback(config.server);
    requireSafeExposure(config.server);
  } catch (error: unknown) {
    const message = error instanceof ConfigError || error instanceof TypeError || error instanceof Error ? error.message : String(error);
    process.stderr.write(`lean-grpo ${options.name}: ${message}\n${USAGE}\n`);
    process.exit(2);
  }
  setupTracing({ serviceName: `lean-grpo-${options.name}` });
  return serve({
    name: options.name,
    services: await options.create(config),
    config: config.server,
    handleSignals: true,
    logger,
  });
}
