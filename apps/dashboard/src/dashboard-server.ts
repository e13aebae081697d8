// `lean-grpo dashboard`'s HTTP server: the page at "/", OrchestratorService over the Connect
// protocol at "/leangrpo.v1.OrchestratorService/*" (same origin, so no CORS), and the
// run's checkpoint and adapter files under "/files/<run>/". Its own port, HTTP/1.1: a
// browser speaks HTTP/2 only over TLS, and the mesh's ports are h2c (gRPC's wire).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { pageAssets } from "./page-bundle.js";
import { pageHtml } from "./page-html.js";
import { serveRunFile } from "./run-files.js";

export interface DashboardServerOptions {
  /** The orchestrator the page talks to: an in-process one, or a proxy to a remote one. */
  orchestrator: Partial<ServiceImpl<typeof OrchestratorService>>;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Where the runs' directories are, to serve their checkpoint and adapter files; none: no files. */
  runsDir?: string;
}

export interface DashboardServer {
  url: string;
  close(): Promise<void>;
}

export async function startDashboardServer(options: DashboardServerOptions): Promise<DashboardServer> {
  const assets = await pageAssets(); // bundled before listening, so the first page load is quick
  const html = pageHtml(assets, { title: "lean-grpo dashboard" });
  const rpc = connectNodeAdapter({ routes: (router) => router.service(OrchestratorService, options.orchestrator) });
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    // A request target the URL parser refuses is the client's error, never the process's end.
    const url = URL.parse(request.url ?? "/", "http://dashboard");
    if (url === null) return plain(response, 400, "malformed request target\n");
    if (url.pathname.startsWith(`/${OrchestratorService.typeName}/`)) return rpc(request, response);
    if (request.method !== "GET" && request.method !== "HEAD") return plain(response, 405, "only GET here\n");
    if (url.pathname === "/" || url.pathname === "/index.html") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" });
      return response.end(html);
    }
    if (url.pathname.startsWith("/files/") && options.runsDir) {
      return void serveRunFile(options.runsDir, url.pathname.slice(7), response).catch(() => {
        if (!response.headersSent) plain(response, 500, "could not serve that file\n");
        else response.destroy();
      });
    }
    return plain(response, 404, `no ${url.pathname} here: the dashboard is at /\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? "127.0.0.1";
  return { url: `http://${host.includes(":") ? `[${host}]` : host}:${port}/`, close: () => closeServer(server) };
}

function plain(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  response.end(text);
}

/** Stops listening and ends open streams (a page's WatchRun never ends by itself). */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
