// GET /metrics in the Prometheus text format, on its own plain HTTP/1.1 port: the
// service's gRPC port speaks HTTP/2 only, which Prometheus does not scrape.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(registry: Registry, host: string, port: number): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    if (request.method !== "GET" || request.url?.split("?")[0] !== "/metrics") {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found; metrics are at GET /metrics\n");
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { "content-type": registry.contentType }).end(text),
      (error: unknown) => response.writeHead(500, { "content-type": "text/plain" }).end(`${String(error)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
