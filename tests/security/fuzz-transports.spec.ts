// Fuzzes the transports of every service of `lean-grpo serve all` on loopback: raw bytes
// that are neither HTTP/2 nor HTTP/1.1, HTTP/2 frames of every type with random contents,
// gRPC, Connect and gRPC-Web calls over HTTP/2 and Connect and gRPC-Web calls over
// HTTP/1.1 whose headers or bodies are malformed, oversized, cut short, left half-open,
// reset, or dropped with the connection. After every attack each of the five services must still answer a health
// check, and the process must still be running.
//
// Three meshes take the same attacks: auth off; auth on (the attacks carry no token, or
// a wrong one); and auth on over TLS (the attacks speak TLS, or garbage to the TLS port).
//
// Seeded (FUZZ_SEED, default 34) and bounded (FUZZ_CASES attacks per service and mesh,
// default 16; every attack ends within a second or two): a failure names the mesh, the
// seed, the case and the attack, and `FUZZ_SEED=<seed> npx vitest run
// tests/security/fuzz-transports.spec.ts` replays exactly that sequence.
//
// Attacks only reach methods that change nothing when a garbage message does decode
// (lookups, listings, health, reflection, unknown paths): the point is the transport, and
// a decodable random SaveCheckpoint must not write into the repository.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as http2 from "node:http2";
import { connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { SeededRandom } from "@lean-grpo/random";
import { MESH_SERVICES, startServeAll, type MeshService, type ServeAllProcess } from "../support/serve-all-process.js";
import { issueTestCertificate, writeTestCertificate } from "../support/test-certificate.js";

const SEED = Number(process.env.FUZZ_SEED ?? 34);
const CASES = Number(process.env.FUZZ_CASES ?? 16);

/** Methods a decoded garbage message cannot change anything through, per service. */
const SAFE_PATHS: Record<MeshService, string[]> = {
  inference: ["/leangrpo.v1.InferenceService/Tokenize", "/leangrpo.v1.InferenceService/ListModels"],
  verifier: ["/leangrpo.v1.LeanVerifierService/PoolStats"],
  reward: ["/leangrpo.v1.RewardService/ListScorers"],
  learner: ["/leangrpo.v1.LearnerService/GetStatus", "/leangrpo.v1.LearnerService/ListAlgorithms"],
  orchestrator: ["/leangrpo.v1.OrchestratorService/ListRuns", "/leangrpo.v1.OrchestratorService/GetRun"],
};
const COMMON_PATHS = [
  "/grpc.health.v1.Health/Check",
  "/grpc.health.v1.Health/Watch",
  "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
  "/leangrpo.v1.NoSuchService/Nothing",
  "/",
];
const CONTENT_TYPES = [
  "application/grpc",
  "application/grpc+proto",
  "application/grpc-web+proto",
  "application/grpc-web-text",
  "application/proto",
  "application/json",
  "application/connect+proto",
  "application/connect+json",
  "text/plain",
];
/** Above every service's read_max_bytes in this mesh (the defaults: 4 MiB). */
const OVERSIZED_BYTES = 4 * 1024 * 1024 + 1;

class Fuzz {
  private readonly random: SeededRandom;
  constructor(seed: number) {
    this.random = new SeededRandom(seed);
  }
  int(below: number): number {
    return Math.floor(this.random.next() * below);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.random.next() < p;
  }
  bytes(length: number): Buffer {
    const out = Buffer.alloc(length);
    for (let i = 0; i < length; i++) out[i] = this.int(256);
    return out;
  }
}

interface Attack {
  name: string;
  run(fuzz: Fuzz, target: Target, service: MeshService): Promise<string>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/** How the attacks reach a mesh: its CA when it speaks TLS. */
interface Target {
  url: string;
  ca?: Buffer;
}

/**
 * A raw connection to the service: writes, lingers, and closes; never waits on the
 * server. Over TLS when the mesh speaks it, unless `plainToTls` (garbage for the handshake).
 */
async function rawSocket(target: Target, chunks: Buffer[], lingerMs: number, plainToTls = false): Promise<void> {
  const { hostname, port } = new URL(target.url);
  const secure = target.ca !== undefined && !plainToTls;
  const socket: Socket = secure
    ? tlsConnect({ port: Number(port), host: hostname, ca: target.ca, ALPNProtocols: ["h2", "http/1.1"], servername: "localhost" })
    : netConnect(Number(port), hostname);
  socket.on("error", () => {});
  socket.on("data", () => {});
  await Promise.race([once(socket, secure ? "secureConnect" : "connect").catch(() => {}), sleep(1_000)]);
  for (const chunk of chunks) if (!socket.destroyed) socket.write(chunk);
  await sleep(lingerMs);
  socket.destroy();
}

function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([header, payload]);
}

/** A gRPC/Connect envelope: flags, a declared length (true or not), and the payload. */
function envelope(flags: number, declared: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header[0] = flags;
  header.writeUInt32BE(declared >>> 0, 1);
  return Buffer.concat([header, payload]);
}

/** Bodies whose framing or message is wrong in one way each. */
function malformedBody(fuzz: Fuzz): { what: string; body: Buffer } {
  const payload = fuzz.bytes(fuzz.int(64));
  return fuzz.pick([
    { what: "random bytes", body: fuzz.bytes(1 + fuzz.int(512)) },
    { what: "an empty message (valid framing)", body: envelope(0, 0, Buffer.alloc(0)) },
    { what: "random message bytes in a valid frame", body: envelope(0, payload.length, payload) },
    { what: "a frame longer than declared", body: envelope(0, Math.max(0, payload.length - 3), payload) },
    { what: "a frame shorter than declared", body: envelope(0, payload.length + 100, payload) },
    { what: "the compressed flag without an encoding", body: envelope(1, payload.length, payload) },
    { what: "an end-stream flag from a client", body: envelope(2, payload.length, payload) },
    { what: "a declared length of 4 GiB", body: envelope(0, 0xffffffff, payload) },
    { what: "a truncated frame header", body: Buffer.from([0, 0, 0]) },
    { what: "two messages on a unary call", body: Buffer.concat([envelope(0, 0, Buffer.alloc(0)), envelope(0, 0, Buffer.alloc(0))]) },
    { what: "malformed JSON", body: Buffer.from('{"prompt": {"text": "unterminated') },
  ]);
}

type Ending = "end" | "half-open, then drop the connection" | "reset the stream" | "destroy the session mid-call";

/** One call over HTTP/2 with the given headers and body, ended the given way; resolves within ~1.5 s. */
async function h2Call(target: Target, headers: http2.OutgoingHttpHeaders, body: Buffer, ending: Ending): Promise<void> {
  const session = http2.connect(target.url, target.ca ? { ca: target.ca } : {});
  session.on("error", () => {});
  try {
    await Promise.race([once(session, "connect"), sleep(1_000)]);
    const stream = session.request({ ":method": "POST", ...headers }, { endStream: false });
    stream.on("error", () => {});
    stream.on("data", () => {});
    const closed = once(stream, "close").catch(() => {});
    if (ending === "end") {
      stream.end(body);
      await Promise.race([closed, sleep(1_500)]);
    } else {
      stream.write(body);
      await sleep(30);
      if (ending === "reset the stream") stream.close(http2.constants.NGHTTP2_CANCEL);
      await sleep(20);
    }
  } finally {
    session.destroy();
  }
}

const ATTACKS: Attack[] = [
  {
    name: "bytes that are not HTTP/2",
    async run(fuzz, target) {
      const length = 1 + fuzz.int(4096);
      await rawSocket(target, [fuzz.bytes(length)], 20, fuzz.chance(0.5));
      return `${length} random bytes`;
    },
  },
  {
    name: "the preface, then garbage",
    async run(fuzz, target) {
      const length = 1 + fuzz.int(2048);
      await rawSocket(target, [PREFACE, fuzz.bytes(length)], 20);
      return `${length} random bytes after the preface`;
    },
  },
  {
    name: "random HTTP/2 frames",
    async run(fuzz, target) {
      const frames = Array.from({ length: 1 + fuzz.int(8) }, () =>
        frame(fuzz.int(12), fuzz.int(256), fuzz.chance(0.5) ? 1 + 2 * fuzz.int(8) : fuzz.int(2 ** 31), fuzz.bytes(fuzz.int(300))),
      );
      await rawSocket(target, [PREFACE, frame(4, 0, 0, Buffer.alloc(0)), ...frames], 30);
      return `${frames.length} frames of types ${frames.map((f) => f[3]).join(",")}`;
    },
  },
  {
    name: "a HEADERS frame whose header block is garbage",
    async run(fuzz, target) {
      await rawSocket(target, [PREFACE, frame(4, 0, 0, Buffer.alloc(0)), frame(1, 0x4, 1, fuzz.bytes(1 + fuzz.int(200)))], 30);
      return "garbage HPACK block on stream 1";
    },
  },
  {
    name: "a malformed call",
    async run(fuzz, target, service) {
      const pathName = fuzz.pick([...SAFE_PATHS[service], ...COMMON_PATHS]);
      const contentType = fuzz.pick(CONTENT_TYPES);
      const { what, body } = malformedBody(fuzz);
      const ending = fuzz.pick<Ending>([
        "end",
        "end",
        "half-open, then drop the connection",
        "reset the stream",
        "destroy the session mid-call",
      ]);
      await h2Call(target, { ":path": pathName, "content-type": contentType, te: "trailers", ...fuzzedAuth(fuzz) }, body, ending);
      return `${contentType} ${pathName}: ${what}; ${ending}`;
    },
  },
  {
    name: "a complete message on a stream that never ends, then a dropped connection",
    async run(fuzz, target, service) {
      const pathName = fuzz.pick(SAFE_PATHS[service]);
      const contentType = fuzz.pick(["application/grpc", "application/grpc-web+proto", "application/connect+proto"]);
      await h2Call(
        target,
        { ":path": pathName, "content-type": contentType, te: "trailers", ...fuzzedAuth(fuzz) },
        envelope(0, 0, Buffer.alloc(0)),
        "half-open, then drop the connection",
      );
      return `${contentType} ${pathName}`;
    },
  },
  {
    name: "an oversized message",
    async run(fuzz, target, service) {
      const pathName = fuzz.pick(SAFE_PATHS[service]);
      const contentType = fuzz.pick(["application/grpc", "application/grpc-web+proto", "application/proto"]);
      const payload = Buffer.alloc(OVERSIZED_BYTES, 0x0a);
      const body = contentType === "application/proto" ? payload : envelope(0, payload.length, payload);
      await h2Call(
        target,
        { ":path": pathName, "content-type": contentType, te: "trailers" },
        body,
        fuzz.pick<Ending>(["end", "destroy the session mid-call"]),
      );
      return `${contentType} ${pathName}: ${OVERSIZED_BYTES} bytes`;
    },
  },
  {
    name: "garbage headers",
    async run(fuzz, target, service) {
      const pathName = fuzz.pick(SAFE_PATHS[service]);
      const headers: http2.OutgoingHttpHeaders = {
        ":path": pathName,
        "content-type": fuzz.pick(CONTENT_TYPES),
        "grpc-timeout": fuzz.pick(["", "x", "99999999999H", "-1m", "1n", `${fuzz.int(1e9)}u`]),
        "connect-timeout-ms": fuzz.pick(["", "abc", "99999999999", "-5", "0"]),
        "grpc-encoding": fuzz.pick(["gzip", "br", "identity", "no-such-codec"]),
        "connect-protocol-version": fuzz.pick(["1", "2", ""]),
        authorization: `Bearer ${fuzz.bytes(16).toString("hex")}`,
        "x-filler": "v".repeat(fuzz.int(8_000)),
      };
      await h2Call(target, headers, envelope(0, 0, Buffer.alloc(0)), "end");
      return `${headers["content-type"]} grpc-timeout=${headers["grpc-timeout"]} connect-timeout-ms=${headers["connect-timeout-ms"]} grpc-encoding=${headers["grpc-encoding"]}`;
    },
  },
  {
    name: "a flood of half-open streams on one connection, then dropped",
    async run(fuzz, target, service) {
      const session = http2.connect(target.url, target.ca ? { ca: target.ca } : {});
      session.on("error", () => {});
      const count = 50 + fuzz.int(300);
      try {
        await Promise.race([once(session, "connect"), sleep(1_000)]);
        for (let i = 0; i < count && !session.destroyed; i++) {
          const stream = session.request({
            ":method": "POST",
            ":path": fuzz.pick(SAFE_PATHS[service]),
            "content-type": "application/grpc",
          });
          stream.on("error", () => {});
          stream.write(Buffer.from([0, 0, 0, 0]));
        }
        await sleep(100);
      } finally {
        session.destroy();
      }
      return `${count} streams`;
    },
  },
  {
    name: "a malformed HTTP/1.1 call",
    async run(fuzz, target, service) {
      const pathName = fuzz.pick([...SAFE_PATHS[service], ...COMMON_PATHS]);
      const contentType = fuzz.pick(CONTENT_TYPES);
      const { what, body } = malformedBody(fuzz);
      const shape = fuzz.pick(["whole", "declared longer than sent", "chunked garbage", "header only, then dropped"] as const);
      const length = shape === "declared longer than sent" ? body.length + 1 + fuzz.int(10_000) : body.length;
      const head = [
        `POST ${pathName} HTTP/1.1`,
        "host: localhost",
        `content-type: ${contentType}`,
        ...Object.entries(fuzzedAuth(fuzz)).map(([k, v]) => `${k}: ${v}`),
        shape === "chunked garbage" ? "transfer-encoding: chunked" : `content-length: ${length}`,
        "",
        "",
      ].join("\r\n");
      const chunks =
        shape === "header only, then dropped"
          ? [Buffer.from(head)]
          : [Buffer.from(head), shape === "chunked garbage" ? fuzz.bytes(64) : body];
      await rawSocket(target, chunks, 50);
      return `${contentType} ${pathName}: ${what}; ${shape}`;
    },
  },
  {
    name: "a garbage HTTP/1.1 request head",
    async run(fuzz, target) {
      const head = fuzz.pick([
        `GET /${fuzz.bytes(40).toString("latin1")} HTTP/1.1\r\n\r\n`,
        `POST / HTTP/1.1\r\n${"x-h: v\r\n".repeat(2_000)}\r\n`,
        `POST /grpc.health.v1.Health/Check HTTP/1.1\r\ncontent-length: -1\r\n\r\n`,
        `POST /grpc.health.v1.Health/Check HTTP/1.1\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n`,
        `${fuzz.bytes(20).toString("latin1")} / HTTP/9.9\r\n\r\n`,
      ]);
      await rawSocket(target, [Buffer.from(head, "latin1")], 30);
      return JSON.stringify(head.slice(0, 60));
    },
  },
];

/** An authorization header an attacker might send: none, a wrong token, or garbage. */
function fuzzedAuth(fuzz: Fuzz): Record<string, string> {
  return fuzz.pick<Record<string, string>>([
    {},
    { authorization: `Bearer ${fuzz.bytes(16).toString("hex")}` },
    { authorization: "Basic Zm9vOmJhcg==" },
  ]);
}

type MeshMode = "auth off" | "auth on" | "auth on, TLS";
const TOKEN = "fuzz-mesh-token";

describe.each<MeshMode>(["auth off", "auth on", "auth on, TLS"])("serve all under transport fuzzing (%s)", (mode) => {
  let dir: string;
  let mesh: ServeAllProcess;
  let urls: ServeAllProcess["urls"];
  let ca: Buffer | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "fuzz-transports-"));
    const overrides = [`orchestrator.runs_dir=${path.join(dir, "runs")}`];
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "warn" };
    if (mode !== "auth off") overrides.push(...MESH_SERVICES.map((name) => `${name}.server.auth.token=${TOKEN}`));
    if (mode === "auth on, TLS") {
      const files = writeTestCertificate(dir, issueTestCertificate(["localhost", "127.0.0.1"]));
      ca = readFileSync(files.ca);
      overrides.push(
        ...MESH_SERVICES.flatMap((name) => [`${name}.server.tls.cert_file=${files.cert}`, `${name}.server.tls.key_file=${files.key}`]),
      );
      // The clients inside the mesh trust the mesh's certificate authority.
      env.NODE_EXTRA_CA_CERTS = files.ca;
    }
    mesh = await startServeAll(overrides, env);
    urls = mesh.urls;
  }, 120_000);

  afterAll(async () => {
    await mesh?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const healthTransports: ((baseUrl: string) => Transport)[] = [
    (baseUrl) => createGrpcTransport({ baseUrl, nodeOptions: { ca } }),
    (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "2", nodeOptions: { ca } }),
    (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1", nodeOptions: { ca } }),
    (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1", nodeOptions: { ca } }),
    (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "2", nodeOptions: { ca } }),
  ];

  /** Every service answers SERVING (over gRPC, and Connect and gRPC-Web over both HTTP versions, in turn); the reason when one does not. */
  async function unhealthy(round: number): Promise<string | undefined> {
    const { exitCode, signalCode } = mesh.child;
    if (exitCode !== null || signalCode !== null) return `serve all exited (${exitCode ?? signalCode})`;
    const problems = await Promise.all(
      MESH_SERVICES.map(async (service) => {
        const transport = healthTransports[round % healthTransports.length]!(urls.get(service)!);
        try {
          const res = await createClient(Health, transport).check({ service: "" }, { timeoutMs: 10_000 });
          return res.status === HealthCheckResponse_ServingStatus.SERVING
            ? undefined
            : `${service}: ${HealthCheckResponse_ServingStatus[res.status]}`;
        } catch (error) {
          return `${service}: ${String(error)}`;
        }
      }),
    );
    return problems.filter(Boolean).join("; ") || undefined;
  }

  it(`every service answers its health check after every attack (seed ${SEED}, ${CASES} attacks per service)`, async () => {
    expect(await unhealthy(0)).toBeUndefined();
    // The mesh is the one the mode names.
    for (const url of urls.values()) expect(url.startsWith(mode === "auth on, TLS" ? "https:" : "http:")).toBe(true);
    const anonymous = createClient(OrchestratorService, healthTransports[0]!(urls.get("orchestrator")!));
    const listed = await anonymous.listRuns({}).then(
      () => "answered",
      (e: unknown) => Code[ConnectError.from(e).code],
    );
    expect(listed).toBe(mode === "auth off" ? "answered" : "Unauthenticated");
    const fuzz = new Fuzz(SEED);
    const seen = new Set<string>();
    let round = 0;
    for (let index = 0; index < CASES; index++) {
      for (const service of MESH_SERVICES) {
        const attack = fuzz.pick(ATTACKS);
        const detail = await attack.run(fuzz, { url: urls.get(service)!, ca }, service);
        seen.add(attack.name);
        const problem = await unhealthy(++round);
        if (problem !== undefined) {
          throw new Error(
            `${mode}: after case ${index} (FUZZ_SEED=${SEED}), ${attack.name} against ${service} (${detail}): ${problem}\n--- serve all's log ---\n${mesh.log()}`,
          );
        }
      }
    }
    // The sequence is long enough to have tried every kind of attack.
    expect([...seen].sort()).toEqual(ATTACKS.map((a) => a.name).sort());
  }, 300_000);
});
