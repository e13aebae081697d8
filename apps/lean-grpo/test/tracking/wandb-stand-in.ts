// A loopback stand-in for the W&B API, speaking what W&B's clients send: POST /graphql
// (Viewer, UpsertBucket) and POST /files/<entity>/<project>/<run>/file_stream. It records
// every request; `hang` leaves requests unanswered (an unreachable server that accepted the connection).
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
}

export interface WandbStandIn {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return JSON.parse(Buffer.concat(parts).toString("utf8")) as Record<string, unknown>;
}

export async function startWandbStandIn(options: { hang?: boolean } = {}): Promise<WandbStandIn> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    requests.push({ path: request.url ?? "", authorization: request.headers.authorization, body });
    if (options.hang) return;
    const reply = (value: unknown) => {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(JSON.stringify(value));
    };
    if (request.url === "/graphql") {
      const query = String(body.query);
      const variables = (body.variables ?? {}) as Record<string, unknown>;
      if (query.includes("viewer")) return reply({ data: { viewer: { id: "u1", entity: "default-team" } } });
      if (query.includes("upsertBucket")) {
        return reply({
          data: {
            upsertBucket: {
              bucket: {
                id: "b1",
                name: variables.name,
                displayName: variables.displayName,
                project: { id: "p1", name: variables.project, entity: { id: "e1", name: variables.entity } },
              },
              inserted: true,
            },
          },
        });
      }
      return reply({ errors: [{ message: `unknown query ${query.slice(0, 40)}` }] });
    }
    if (/^\/files\/[^/]+\/[^/]+\/[^/]+\/file_stream$/.test(request.url ?? "")) return reply({ exitcode: null, limits: {} });
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
