// `lean-grpo dashboard [--runs-dir DIR] [--port N] [--url ORCHESTRATOR]`: the browser
// dashboard (apps/dashboard) on its own HTTP/1.1 port, calling OrchestratorService over
// Connect. Over --runs-dir it mounts an orchestrator of its own on those runs (a run
// another process trains there is re-read as it grows); with --url it relays to a running
// orchestrator, which is also how `train --ui` shows the run it trains.
import type { Command } from "commander";
import type { ServiceImpl } from "@connectrpc/connect";
import { renderOfflineReport, startDashboardServer, type DashboardServer } from "@lean-grpo/dashboard";
import { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createServiceClient, loadConfig, callerAuth, envAuthToken } from "@lean-grpo/kit";
import { createOrchestratorService, OrchestratorConfigSchema } from "@lean-grpo/orchestrator";
import { nonNegativeInteger } from "./flag-values.js";

export interface DashboardCommandOptions {
  runsDir: string;
  port: string;
  host: string;
  url?: string;
}

export function registerDashboardCommand(program: Command): void {
  program
    .command("dashboard")
    .description("open the runs in a browser: live curves over WatchRun, comparisons, completions")
    .option("--runs-dir <dir>", "where runs live", "runs")
    .option("--port <port>", "HTTP port of the page (0 picks a free one)", "8080")
    .option("--host <host>", "address to bind", "127.0.0.1")
    .option("--url <url>", "a running orchestrator, e.g. http://127.0.0.1:50055 (default: read --runs-dir here)")
    .action(async (options: DashboardCommandOptions) => {
      const dashboard = await dashboardCommand(options);
      process.stderr.write(`lean-grpo dashboard: ${dashboard.url} (Ctrl-C to stop)\n`);
      await new Promise<void>((resolve) => process.once("SIGINT", resolve));
      await dashboard.close();
    });
}

export async function dashboardCommand(options: DashboardCommandOptions): Promise<DashboardServer> {
  const port = nonNegativeInteger("--port", options.port);
  if (port > 65535) throw new Error(`--port is ${port}; it must be at most 65535`);
  if (options.url) {
    const relay = orchestratorRelay(options.url);
    const server = await startDashboardServer({ orchestrator: relay.impl, host: options.host, port, runsDir: options.runsDir });
    return {
      url: server.url,
      async close() {
        await server.close();
        relay.close();
      },
    };
  }
  const config = loadConfig(OrchestratorConfigSchema, { flags: { runs_dir: options.runsDir } });
  const { impl } = createOrchestratorService(config, { renderReport: renderOfflineReport });
  // The page only reads: no StartRun or StopRun through this port.
  const { listRuns, getRun, watchRun } = impl;
  return startDashboardServer({ orchestrator: { listRuns, getRun, watchRun }, host: options.host, port, runsDir: config.runs_dir });
}

/** The page's (read-only) calls, passed on to an orchestrator over gRPC (its port speaks h2c, which browsers do not). */
export function orchestratorRelay(url: string): { impl: Partial<ServiceImpl<typeof OrchestratorService>>; close(): void } {
  const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [url], interceptors: callerAuth(envAuthToken()) });
  return {
    impl: {
      listRuns: (request, ctx) => client.listRuns(request, { signal: ctx.signal }),
      getRun: (request, ctx) => client.getRun(request, { signal: ctx.signal }),
      watchRun: (request, ctx) => client.watchRun(request, { signal: ctx.signal }),
    },
    close: () => transport.close(),
  };
}
