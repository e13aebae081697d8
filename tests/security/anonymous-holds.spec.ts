// What an anonymous client can hold against `lean-grpo serve all` with auth on, with the
// default limits: held Health.Watch streams must not stop any health check, and floods
// of idle connections (three clients, thousands each) must not take the process's files
// nor keep a new health probe or an authenticated caller out.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import * as http2 from "node:http2";
import { connect as netConnect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { ServerConfigSchema } from "@lean-grpo/kit";
import { MESH_SERVICES, startServeAll, type ServeAllProcess } from "../support/serve-all-process.js";

const TOKEN = "anonymous-holds-token";
const defaults = ServerConfigSchema.parse({}).limits;

let dir: string;
let mesh: ServeAllProcess;
let urls: ServeAllProcess["urls"];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "anonymous-holds-"));
  mesh = await startServeAll(
    [...MESH_SERVICES.map((name) => `${name}.server.auth.token=${TOKEN}`), `orchestrator.runs_dir=${path.join(dir, "runs")}`],
    { ...process.env, LOG_LEVEL: "error" },
  );
  urls = mesh.urls;
}, 120_000);

afterAll(async () => {
  await mesh?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function everyHealthCheck(): Promise<string[]> {
  return Promise.all(
    MESH_SERVICES.map(async (service) => {
      const health = createClient(Health, createGrpcTransport({ baseUrl: urls.get(service)! }));
      try {
        return HealthCheckResponse_ServingStatus[(await health.check({ service: "" }, { timeoutMs: 5_000 })).status];
      } catch (error) {
        return `${service}: ${Code[ConnectError.from(error).code]} ${ConnectError.from(error).rawMessage}`;
      }
    }),
  );
}

async function authenticatedCall(): Promise<string> {
  const learner = createClient(LearnerService, createGrpcTransport({ baseUrl: urls.get("learner")! }));
  const status = await learner.getStatus({}, { headers: { authorization: `Bearer ${TOKEN}` }, timeoutMs: 5_000 });
  return status.$typeName;
}

const openFiles = () => readdirSync(`/proc/${mesh.child.pid}/fd`).length;

describe("serve all, auth on, default limits", () => {
  it("keeps answering every health check while 300 anonymous Health.Watch streams are held against one service", async () => {
    const sessions: http2.ClientHttp2Session[] = [];
    try {
      for (let i = 0; i < 75; i++) {
        const session = http2.connect(urls.get("verifier")!);
        session.on("error", () => {});
        sessions.push(session);
        for (let j = 0; j < 4; j++) {
          const stream = session.request({
            ":method": "POST",
            ":path": "/grpc.health.v1.Health/Watch",
            "content-type": "application/grpc",
            te: "trailers",
          });
          stream.on("error", () => {});
          stream.on("data", () => {});
          stream.end(Buffer.alloc(5));
        }
      }
      await new Promise((r) => setTimeout(r, 500));
      expect(await everyHealthCheck()).toEqual(Array(MESH_SERVICES.length).fill("SERVING"));
      expect(await authenticatedCall()).toBe("leangrpo.v1.GetStatusResponse");
    } finally {
      for (const session of sessions) session.destroy();
    }
  }, 60_000);

  it("holds three floods of idle connections under its caps, a new probe and an authenticated caller getting in throughout", async () => {
    const target = new URL(urls.get("learner")!);
    const before = openFiles();
    const sockets: Socket[] = [];
    const flood = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const socket = netConnect(Number(target.port), target.hostname);
        socket.on("error", () => {});
        socket.resume();
        sockets.push(socket);
        // Half of them say the HTTP/2 preface and stop there; half say nothing.
        if (i % 2) socket.once("connect", () => socket.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
        if (i % 200 === 199) await new Promise((r) => setTimeout(r, 20));
      }
    };
    try {
      await Promise.all([flood(1_500), flood(1_500), flood(1_500)]);
      await new Promise((r) => setTimeout(r, 500));
      const maxConnections = defaults.connections?.max ?? 1024;
      // The process holds at most its cap of them (and its own files), not the flood.
      expect(openFiles() - before).toBeLessThanOrEqual(maxConnections + 16);
      expect(await everyHealthCheck()).toEqual(Array(MESH_SERVICES.length).fill("SERVING"));
      expect(await authenticatedCall()).toBe("leangrpo.v1.GetStatusResponse");
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  }, 120_000);
});
