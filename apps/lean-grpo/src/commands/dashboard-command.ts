// `lean-grpo dashboard [--runs-dir DIR] [--port N] [--host H] [--allow-host NAME] [--url ORCHESTRATOR]`:
// the browser dashboard (apps/dashboard) on its own HTTP/1.1 port, calling OrchestratorService
// over Connect. Over --runs-dir it mounts an orchestrator of its own on those runs (a run
// another process trains there is re-read as it grows); with --url it relays to a running
// orchestrator, which is also how `train --ui` shows the run it trains.
//
// A client of the mesh like any other: the relay presents the mesh token (LEANGRPO_AUTH_TOKEN,
// else the token file `serve` keeps), and whenever there is one the page needs a token too
// (the link it prints carries one); beyond loopback there must be one.
import type { Command } from "commander";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  realRunFoldersOnly,
  renderOfflineReport,
  startDashboardServer,
  type DashboardServer,
  type ReadOnlyOrchestrator,
} from "@lean-grpo/dashboard";
import { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { AUTH_TOKEN_ENV, callerAuth, createServiceClient, isLoopbackHost, loadConfig } from "@lean-grpo/kit";
import { createOrchestratorService, OrchestratorConfigSchema } from "@lean-grpo/orchestrator";
import { DEFAULT_TOKEN_FILE, findMeshToken, type MeshAuth } from "../mesh/mesh-auth.js";
import { nonNegativeInteger } from "./flag-values.js";

export interface DashboardCommandOptions {
  runsDir: string;
  port: string;
  host: string;
  url?: string;
  /** Names the page may be opened by besides loopback's and --host (--allow-host). */
  allowHost?: string[];
}

export interface DashboardContext {
  /** Where LEANGRPO_AUTH_TOKEN is read (default: the process's environment). */
  env?: NodeJS.ProcessEnv;
  /** The token file `serve` generates (default .lean-grpo/auth-token). */
  tokenFile?: string;
  /** The mesh's token as its starter knows it (`train --ui`), instead of looking for one; undefined: none. */
  meshToken?: string | undefined;
}

export interface RunningDashboard extends DashboardServer {
  /** Where the mesh token came from. */
  meshAuth: MeshAuth;
  /** The orchestrator the page's calls are relayed to (--url); absent: runs read from disk. */
  relayTo?: string;
}

export function registerDashboardCommand(program: Command): void {
  program
    .command("dashboard")
    .description("open the runs in a browser: live curves over WatchRun, comparisons, completions")
    .option("--runs-dir <dir>", "where runs live", "runs")
    .option("--port <port>", "HTTP port of the page (0 picks a free one)", "8080")
    .option("--host <host>", `address to bind; beyond loopback it needs ${AUTH_TOKEN_ENV}`, "127.0.0.1")
    .option(
      "--allow-host <name>",
      "a name the page may be opened by besides localhost and --host (repeatable; others are refused)",
      (name: string, names: string[] = []) => [...names, name],
    )
    .option("--url <url>", "a running orchestrator, e.g. http://127.0.0.1:50055 (default: read --runs-dir here)")
    .action(async (options: DashboardCommandOptions) => {
      const dashboard = await dashboardCommand(options);
      process.stderr.write(`lean-grpo dashboard: ${dashboard.pageUrl} (Ctrl-C to stop)\n${describeDashboardAuth(dashboard)}\n`);
      await new Promise<void>((resolve) => process.once("SIGINT", resolve));
      await dashboard.close();
    });
}

export async function dashboardCommand(options: DashboardCommandOptions, context: DashboardContext = {}): Promise<RunningDashboard> {
  const port = nonNegativeInteger("--port", options.port);
  if (port > 65535) throw new Error(`--port is ${port}; it must be at most 65535`);
  const meshAuth: MeshAuth =
    "meshToken" in context
      ? context.meshToken === undefined
        ? { source: "none" }
        : { token: context.meshToken, source: "config" }
      : findMeshToken({ ...(context.env ? { env: context.env } : {}), ...(context.tokenFile ? { tokenFile: context.tokenFile } : {}) });
  if (meshAuth.token === undefined && !isLoopbackHost(options.host))
    throw new Error(
      `--host ${options.host} is beyond loopback, and the dashboard binds there only with a token to require: set ${AUTH_TOKEN_ENV} ` +
        `(the mesh's token; \`lean-grpo serve\` keeps the one it generates in ${DEFAULT_TOKEN_FILE}), or keep --host 127.0.0.1`,
    );
  const shared = {
    host: options.host,
    port,
    runsDir: options.runsDir,
    ...(meshAuth.token === undefined ? {} : { auth: { accept: [meshAuth.token] } }),
    ...(options.allowHost ? { allowHosts: options.allowHost } : {}),
  };
  if (options.url) {
    const relay = orchestratorRelay(options.url, meshAuth.token);
    const server = await startDashboardServer({ ...shared, orchestrator: relay.impl });
    return {
      ...server,
      meshAuth,
      relayTo: options.url,
      async close() {
        await server.close();
        relay.close();
      },
    };
  }
  const config = loadConfig(OrchestratorConfigSchema, { flags: { runs_dir: options.runsDir } });
  const { impl } = createOrchestratorService(config, { renderReport: renderOfflineReport });
  // The page only reads: no StartRun or StopRun through this port; and no run folder that is a symlink.
  const { listRuns, getRun, watchRun } = impl;
  if (!listRuns || !getRun || !watchRun) throw new Error("the orchestrator service lacks ListRuns, GetRun or WatchRun");
  const orchestrator = realRunFoldersOnly({ listRuns, getRun, watchRun }, config.runs_dir);
  const server = await startDashboardServer({ ...shared, orchestrator, runsDir: config.runs_dir });
  return { ...server, meshAuth };
}

/** What the operator is told under the link: whether the page needs a token, and which one the relay presents. */
export function describeDashboardAuth(dashboard: RunningDashboard): string {
  if (!dashboard.authOn) return `auth   off (on loopback with no mesh token; set ${AUTH_TOKEN_ENV} to require one)`;
  const where =
    dashboard.meshAuth.source === "file"
      ? `the token in ${dashboard.meshAuth.file}`
      : dashboard.meshAuth.source === "env"
        ? AUTH_TOKEN_ENV
        : "the mesh's token";
  const relay = dashboard.relayTo ? `; the orchestrator at ${dashboard.relayTo} is called with ${where}` : "";
  return `auth   on: open the link above (its token is this process's own), or present ${where}${relay}`;
}

/**
 * The page's (read-only) calls, passed on to an orchestrator over gRPC (its port speaks h2c,
 * which browsers do not), presenting the mesh token. An orchestrator that refuses it is a
 * setting to fix here, not the page's token: said so, not passed on as UNAUTHENTICATED.
 */
export function orchestratorRelay(url: string, token: string | undefined): { impl: ReadOnlyOrchestrator; close(): void } {
  const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [url], interceptors: callerAuth(token) });
  const refusedHere = (error: unknown) => {
    const e = ConnectError.from(error);
    if (e.code !== Code.Unauthenticated) return e;
    return new ConnectError(
      `the orchestrator at ${url} refused the dashboard's token: start the dashboard with ${AUTH_TOKEN_ENV} set to the mesh's token`,
      Code.FailedPrecondition,
    );
  };
  const impl: ReadOnlyOrchestrator = {
    listRuns: (request, ctx) => client.listRuns(request, { signal: ctx.signal }).catch((e: unknown) => Promise.reject(refusedHere(e))),
    getRun: (request, ctx) => client.getRun(request, { signal: ctx.signal }).catch((e: unknown) => Promise.reject(refusedHere(e))),
    async *watchRun(request, ctx) {
      try {
        yield* client.watchRun(request, { signal: ctx.signal });
      } catch (error) {
        throw refusedHere(error);
      }
    },
  };
  return { impl: impl satisfies Partial<ServiceImpl<typeof OrchestratorService>>, close: () => transport.close() };
}
