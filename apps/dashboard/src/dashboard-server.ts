// `lean-grpo dashboard`'s HTTP server: the page at "/", OrchestratorService over the Connect
// protocol at "/leangrpo.v1.OrchestratorService/*" (same origin, so no CORS), and the
// run's checkpoint and adapter files under "/files/<run>/". Its own port, HTTP/1.1: a
// browser speaks HTTP/2 only over TLS, and the mesh's ports are h2c (gRPC's wire).
//
// It is a client of the mesh like any other: with auth on, nothing but the page itself (a
// script with no data) is answered without a token (browser-access.ts); every request needs
// a Host it serves, and writes and the orchestrator's calls need its own Origin
// (request-guard.ts); files are the run's listed artefacts, read through no symlink
// (run-files.ts). It never binds beyond loopback without auth.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient, createRouterTransport, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { isLoopbackHost, PathRoot } from "@lean-grpo/kit";
import { BrowserAccess } from "./browser-access.js";
import { pageAssets } from "./page-bundle.js";
import { pageHtml } from "./page-html.js";
import { checkHost, checkOrigin, servedHostnames } from "./request-guard.js";
import { serveRunFile, type RunFiles } from "./run-files.js";

export interface DashboardServerOptions {
  /** The orchestrator the page talks to: an in-process one, or a proxy to a remote one. */
  orchestrator: Partial<ServiceImpl<typeof OrchestratorService>>;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Where the runs' directories are, to serve their checkpoint and adapter files; none: no files. */
  runsDir?: string;
  /**
   * Auth on: every request but the page needs a token (one of `accept`, or the page token the
   * server makes, in `pageUrl`), or the session cookie a token was traded for. Required to
   * bind beyond loopback.
   */
  auth?: { accept: readonly string[] };
  /** Names besides loopback's and the bound host that the page may be opened by (the Host header). */
  allowHosts?: readonly string[];
}

export interface DashboardServer {
  /** Where it listens. */
  url: string;
  /** The link to open: `url`, with `#token=<page token>` when auth is on. */
  pageUrl: string;
  /** Whether a token is required. */
  authOn: boolean;
  close(): Promise<void>;
}

const SESSION_PATH = "/session";

/** The page's headers: its own script and styles only, calls to this origin only (page-policy.ts), never framed, the address kept home. */
function pageHeaders(policy: string): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-cache",
    // frame-ancestors works only in a header: no other page may frame this one (clickjacking).
    "content-security-policy": `${policy}; frame-ancestors 'none'`,
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
  };
}

export async function startDashboardServer(options: DashboardServerOptions): Promise<DashboardServer> {
  const host = options.host ?? "127.0.0.1";
  if (!options.auth && !isLoopbackHost(host))
    throw new Error(`the dashboard does not bind ${host}, beyond loopback, without auth: give it a token to require`);
  const assets = await pageAssets(); // bundled before listening, so the first page load is quick
  const page = pageHtml(assets, { title: "lean-grpo dashboard" });
  const headers = pageHeaders(page.policy);
  const rpc = connectNodeAdapter({ routes: (router) => router.service(OrchestratorService, options.orchestrator) });
  const files = options.runsDir ? runFiles(options.runsDir, options.orchestrator) : undefined;
  const served = servedHostnames(host, options.allowHosts);
  let access: BrowserAccess | undefined;

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    // A request target the URL parser refuses is the client's error, never the process's end.
    const url = URL.parse(request.url ?? "/", "http://dashboard");
    if (url === null) return plain(response, 400, "malformed request target\n");
    if (options.auth && !access) return plain(response, 503, "starting\n"); // never answered as if auth were off
    const refusedHost = checkHost(request, served);
    if (refusedHost) return plain(response, refusedHost.status, refusedHost.message);
    const toOrchestrator = url.pathname.startsWith(`/${OrchestratorService.typeName}/`);
    const reads = request.method === "GET" || request.method === "HEAD";
    if (toOrchestrator || !reads) {
      const refusedOrigin = checkOrigin(request);
      if (refusedOrigin) return plain(response, refusedOrigin.status, refusedOrigin.message);
    }
    if (url.pathname === SESSION_PATH && request.method === "POST") {
      if (access) return access.openSession(request, response);
      response.writeHead(204, { "cache-control": "no-store" }); // auth is off: nothing to trade
      return response.end();
    }
    if (toOrchestrator) {
      if (access && !access.allows(request)) return unauthenticated(response);
      return rpc(request, response);
    }
    if (!reads) return plain(response, 405, "only GET here\n");
    if (url.pathname === "/" || url.pathname === "/index.html") {
      // The page is a script with no data in it: it loads without a token and then asks for one.
      response.writeHead(200, headers);
      return response.end(page.html);
    }
    if (url.pathname.startsWith("/files/") && files) {
      if (access && !access.allows(request)) return plain(response, 401, "this dashboard needs its token: open the link it printed\n");
      return void serveRunFile(files, url.pathname.slice(7), response).catch(() => {
        if (!response.headersSent) plain(response, 500, "could not serve that file\n");
        else response.destroy();
      });
    }
    return plain(response, 404, `no ${url.pathname} here: the dashboard is at /\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      // The session cookie's name carries the port, known from here on.
      if (options.auth) access = new BrowserAccess(options.auth.accept, (server.address() as AddressInfo).port);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}/`;
  return {
    url,
    pageUrl: access ? `${url}#token=${access.pageToken}` : url,
    authOn: access !== undefined,
    close: () => closeServer(server),
  };
}

/** The run's files, under runsDir, as far as GetRun lists them. */
function runFiles(runsDir: string, orchestrator: Partial<ServiceImpl<typeof OrchestratorService>>): RunFiles {
  // The page's own orchestrator, called in process: the same answers the page gets.
  const client = createClient(
    OrchestratorService,
    createRouterTransport((router) => router.service(OrchestratorService, orchestrator)),
  );
  return {
    root: new PathRoot({ dir: runsDir, key: "--runs-dir" }),
    async listed(runId) {
      const details = await client.getRun({ runId });
      return [...details.checkpoints, ...details.adapters];
    },
  };
}

function plain(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  response.end(text);
}

/** As a Connect error, so that the page's client reads the code and the reason. */
function unauthenticated(response: ServerResponse): void {
  response.writeHead(401, { "content-type": "application/json" });
  response.end(
    JSON.stringify({
      code: "unauthenticated",
      message:
        'this dashboard needs its token: open the link `lean-grpo dashboard` printed (…/#token=…), or send "authorization: Bearer <token>"',
    }),
  );
}

/** Stops listening and ends open streams (a page's WatchRun never ends by itself). */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
