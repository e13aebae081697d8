// What an anonymous client can hold with connections alone, attacked through a real
// serve() on loopback: sockets that never speak, HTTP/2 sessions that never call,
// header blocks that never end, and floods of connections past the caps. Each test
// checks that the server keeps answering a new caller (a health probe) throughout.
import * as http2 from "node:http2";
import * as net from "node:net";
import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { create, toBinary } from "@bufbuild/protobuf";
import { LeanVerifierService, Verdict, VerifyRequestSchema } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { serve, serviceRegistration, type RunningServer } from "../src/server/serve.js";
import type { ServerConfigInput } from "../src/server/server-config.js";

const running: RunningServer[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(running.splice(0).map((s) => s.shutdown()));
});

let release: () => void = () => {};
async function start(connections: NonNullable<ServerConfigInput["limits"]>["connections"], extra: ServerConfigInput = {}) {
  const server = await serve({
    name: "connections",
    services: [
      serviceRegistration(LeanVerifierService, {
        async verify(req) {
          if (req.proof === "hold") await new Promise<void>((resolve) => (release = resolve));
          return { verdict: Verdict.PROVED };
        },
      }),
    ],
    config: { shutdown: { drain_delay_ms: 0, grace_period_ms: 200 }, limits: { connections }, ...extra },
  });
  running.push(server);
  return server;
}

/** A TCP connection that has connected and says nothing more than `bytes`. */
async function rawConnection(server: RunningServer, bytes?: Buffer): Promise<net.Socket> {
  const socket = net.connect(server.port, "127.0.0.1");
  socket.on("error", () => {});
  // Reads (and drops) what the server sends, so that its close is seen.
  socket.resume();
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  if (bytes) socket.write(bytes);
  return socket;
}

function closed(socket: net.Socket): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    if (socket.destroyed && socket.readyState === "closed") resolve(0);
    socket.once("close", () => resolve(performance.now() - t0));
  });
}

async function probe(server: RunningServer) {
  const health = createClient(Health, createGrpcTransport({ baseUrl: server.url }));
  return (await health.check({ service: "" }, { timeoutMs: 3_000 })).status;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
const EMPTY_SETTINGS = frame(4, 0, 0, Buffer.alloc(0));

/** An HTTP/2 frame (RFC 9113 §4.1). */
function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

/** The HEADERS of a gRPC health check, in HPACK literals; without END_HEADERS the block is never finished. */
function headersFrame(streamId: number, endHeaders: boolean): Buffer {
  const fields: [string, string][] = [
    [":method", "POST"],
    [":scheme", "http"],
    [":path", "/grpc.health.v1.Health/Check"],
    [":authority", "localhost"],
    ["content-type", "application/grpc"],
    ["te", "trailers"],
  ];
  // Literal header field without indexing, new name (RFC 7541 §6.2.2), no Huffman coding.
  const block = Buffer.concat(
    fields.map(([n, v]) => Buffer.concat([Buffer.from([0, n.length]), Buffer.from(n), Buffer.from([v.length]), Buffer.from(v)])),
  );
  return frame(1, endHeaders ? 0x4 : 0, streamId, block);
}

function framesOf(bytes: Buffer): { type: number; streamId: number }[] {
  const frames = [];
  for (let at = 0; at + 9 <= bytes.length; at += 9 + bytes.readUIntBE(at, 3)) {
    frames.push({ type: bytes[at + 3]!, streamId: bytes.readUInt32BE(at + 5) & 0x7fffffff });
  }
  return frames;
}

function dataFrame(streamId: number, payload: Buffer): Buffer {
  return frame(0, 0x1, streamId, payload);
}

describe("deadlines for connections that hold without calling", () => {
  it("closes a connection that never shows its protocol at handshake_timeout_ms", async () => {
    const server = await start({ handshake_timeout_ms: 300 });
    const silent = await rawConnection(server);
    const elapsed = await closed(silent);
    expect(elapsed).toBeGreaterThan(200);
    expect(elapsed).toBeLessThan(3_000);
    expect(await probe(server)).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it("closes an HTTP/1.1 connection whose request header never ends", async () => {
    const server = await start({ handshake_timeout_ms: 300 });
    const slow = await rawConnection(server, Buffer.from("POST /grpc.health.v1.Health/Check HTTP/1.1\r\nHost: x\r\n"));
    const elapsed = await closed(slow);
    expect(elapsed).toBeLessThan(3_000);
  });

  it("closes an HTTP/2 session that never calls at handshake_timeout_ms", async () => {
    const server = await start({ handshake_timeout_ms: 300, idle_timeout_ms: 60_000 });
    const quiet = await rawConnection(server, Buffer.concat([PREFACE, EMPTY_SETTINGS]));
    const elapsed = await closed(quiet);
    expect(elapsed).toBeGreaterThan(200);
    expect(elapsed).toBeLessThan(3_000);
  });

  it("says GOAWAY to a session idle past idle_timeout_ms after its calls", async () => {
    const server = await start({ handshake_timeout_ms: 5_000, idle_timeout_ms: 300 });
    const socket = await rawConnection(server);
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    socket.write(Buffer.concat([PREFACE, EMPTY_SETTINGS, headersFrame(1, true), dataFrame(1, Buffer.alloc(5))]));
    const t0 = performance.now();
    await waitFor(() => framesOf(Buffer.concat(received)).some((f) => f.type === 7));
    expect(performance.now() - t0).toBeGreaterThan(250);
    expect(performance.now() - t0).toBeLessThan(3_000);
  });

  it("closes an HTTP/2 session whose first header block never ends at handshake_timeout_ms", async () => {
    const server = await start({ handshake_timeout_ms: 400, idle_timeout_ms: 60_000 });
    const unfinished = await rawConnection(server, Buffer.concat([PREFACE, EMPTY_SETTINGS, headersFrame(1, false)]));
    expect(await closed(unfinished)).toBeLessThan(3_000);
  });

  it("cuts a session that called, then left a header block unfinished, an idle timeout plus a handshake deadline later", async () => {
    const server = await start({ handshake_timeout_ms: 400, idle_timeout_ms: 300 });
    const socket = await rawConnection(
      server,
      Buffer.concat([PREFACE, EMPTY_SETTINGS, headersFrame(1, true), dataFrame(1, Buffer.alloc(5))]),
    );
    // The health check is answered; then the next header block starts and never ends.
    await new Promise((r) => setTimeout(r, 100));
    socket.write(headersFrame(3, false));
    const elapsed = await closed(socket);
    expect(elapsed).toBeGreaterThan(300);
    expect(elapsed).toBeLessThan(3_000);
    expect(await probe(server)).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it("keeps a session with a call open past idle_timeout_ms", async () => {
    const server = await start({ idle_timeout_ms: 200 });
    const verifier = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: server.url }));
    const held = verifier.verify({ proof: "hold" });
    await new Promise((r) => setTimeout(r, 600));
    release();
    expect((await held).verdict).toBe(Verdict.PROVED);
  });
});

describe("connection caps", () => {
  it("makes room for a new caller by closing the connection idle longest", async () => {
    const server = await start({ max: 20, per_peer: 20 });
    const idle = await Promise.all(Array.from({ length: 20 }, () => rawConnection(server, Buffer.concat([PREFACE, EMPTY_SETTINGS]))));
    await waitFor(() => server.connections() === 20);
    expect(await probe(server)).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect(server.connections()).toBeLessThanOrEqual(20);
    // One of the idle ones made the room.
    await waitFor(() => idle.filter(isClosed).length === 1);
  });

  it("refuses a connection only when every one has a call open, and the calls go on", async () => {
    const server = await start({ max: 3, per_peer: 3 });
    const sessions = Array.from({ length: 3 }, () => http2.connect(server.url));
    const held = sessions.map((session) => {
      session.on("error", () => {});
      const stream = session.request({
        ":method": "POST",
        ":path": "/leangrpo.v1.LeanVerifierService/Verify",
        "content-type": "application/grpc",
        te: "trailers",
      });
      stream.on("error", () => {});
      // A whole message for "hold", never ended: the call stays open.
      stream.write(grpcFrame(toBinary(VerifyRequestSchema, create(VerifyRequestSchema, { proof: "hold" }))));
      return stream;
    });
    await waitFor(() => server.inFlight() === 3);
    const newcomer = await rawConnection(server, Buffer.concat([PREFACE, EMPTY_SETTINGS]));
    expect(await closed(newcomer)).toBeLessThan(1_000);
    expect(server.inFlight()).toBe(3);
    for (const stream of held) stream.close();
    for (const session of sessions) session.destroy();
  });

  it("holds a flood of connections from one address under the cap, answering probes throughout", async () => {
    const server = await start({ max: 64 });
    const before = openFiles();
    const flood = await Promise.all(
      Array.from({ length: 600 }, (_, i) => rawConnection(server, i % 2 ? Buffer.concat([PREFACE, EMPTY_SETTINGS]) : undefined)),
    );
    expect(server.connections()).toBeLessThanOrEqual(64);
    expect(await probe(server)).toBe(HealthCheckResponse_ServingStatus.SERVING);
    // The server's side of the flood holds no more files than its cap (the client's side
    // of each socket is in this process too, so count only what stays open).
    await waitFor(() => flood.filter((s) => !isClosed(s)).length <= 64);
    expect(openFiles() - before).toBeLessThan(2 * 64 + 32);
  });
});

function grpcFrame(payload: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + payload.length);
  frame.writeUInt32BE(payload.length, 1);
  frame.set(payload, 5);
  return frame;
}

function isClosed(socket: net.Socket): boolean {
  return socket.destroyed || socket.readyState === "closed";
}

function openFiles(): number {
  return readdirSync("/proc/self/fd").length;
}

async function waitFor(condition: () => boolean, timeoutMs = 5_000) {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
