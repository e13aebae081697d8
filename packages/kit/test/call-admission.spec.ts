// The call admission, attacked through a real serve() on loopback: auth is decided on
// the headers while the body is still unsent, every call holds a slot in its budget
// (health watches in their own, so that they never take a service's slots nor stop
// health checks), and a call that sends no deadline gets the configured default even
// when its body never ends.
import * as http2 from "node:http2";
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { LeanVerifierService, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { serve, serviceRegistration, type RunningServer } from "../src/server/serve.js";
import { ServerConfigSchema, type ServerConfigInput } from "../src/server/server-config.js";

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.shutdown()));
});

let verifyCalls = 0;
async function start(config: ServerConfigInput = {}) {
  const server = await serve({
    name: "request-gate",
    services: [
      serviceRegistration(LeanVerifierService, {
        async verify() {
          verifyCalls++;
          return { verdict: Verdict.PROVED };
        },
      }),
    ],
    config: { shutdown: { drain_delay_ms: 0, grace_period_ms: 300 }, ...config },
  });
  running.push(server);
  return server;
}

const limits = (extra: NonNullable<ServerConfigInput["limits"]>): ServerConfigInput["limits"] => ({
  read_max_bytes: 1 << 20,
  write_max_bytes: 1 << 20,
  max_concurrent_calls: 256,
  max_timeout_ms: 60_000,
  ...extra,
});

/** Opens a unary gRPC call and sends part of a message, never ending the stream; resolves with the response headers. */
function halfOpenCall(url: string, headers: http2.OutgoingHttpHeaders = {}) {
  const session = http2.connect(url);
  session.on("error", () => {});
  const stream = session.request({
    ":method": "POST",
    ":path": "/leangrpo.v1.LeanVerifierService/Verify",
    "content-type": "application/grpc",
    te: "trailers",
    ...headers,
  });
  stream.on("error", () => {});
  // A frame header announcing 1000 bytes, and only 10 of them.
  const partial = Buffer.alloc(15);
  partial.writeUInt32BE(1000, 1);
  stream.write(partial);
  const answered = new Promise<{ headers: http2.IncomingHttpHeaders | undefined; rstCode: number | undefined }>((resolve) => {
    stream.once("response", (h) => resolve({ headers: h, rstCode: undefined }));
    stream.once("close", () => resolve({ headers: undefined, rstCode: stream.rstCode }));
  });
  return { answered, close: () => session.destroy() };
}

const transports: Record<string, (baseUrl: string) => Transport> = {
  grpc: (baseUrl) => createGrpcTransport({ baseUrl }),
  connect: (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
  "grpc-web": (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
};

describe("auth is decided on the headers", () => {
  it("answers UNAUTHENTICATED to a call whose body has not arrived, and never runs the handler", async () => {
    const server = await start({ auth: { token: "s3cret" } });
    verifyCalls = 0;
    const call = halfOpenCall(server.url);
    const { headers } = await call.answered;
    call.close();
    expect(headers?.["grpc-status"]).toBe(String(Code.Unauthenticated));
    expect(decodeURIComponent(String(headers?.["grpc-message"]))).toBe(
      'missing credentials: send the header "authorization: Bearer <token>"',
    );
    expect(verifyCalls).toBe(0);
  });

  it("lets a call with the token through to read its body", async () => {
    const server = await start({ auth: { token: "s3cret" }, limits: limits({ default_timeout_ms: 300 }) });
    const call = halfOpenCall(server.url, { authorization: "Bearer s3cret" });
    const t0 = performance.now();
    const { headers } = await call.answered;
    call.close();
    // Admitted, it waited for its body until the default deadline ended it.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
    expect(headers?.["grpc-status"]).not.toBe(String(Code.Unauthenticated));
  });
});

describe("a call without a deadline gets the default one", () => {
  it("ends a unary call whose body never ends, at default_timeout_ms", async () => {
    const server = await start({ limits: limits({ default_timeout_ms: 300 }) });
    const t0 = performance.now();
    const call = halfOpenCall(server.url);
    const outcome = await call.answered;
    call.close();
    const elapsed = performance.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(3_000);
    // DEADLINE_EXCEEDED from connect, or the gate's reset one second later.
    if (outcome.headers) expect(outcome.headers["grpc-status"]).toBe(String(Code.DeadlineExceeded));
    else expect(outcome.rstCode).toBe(http2.constants.NGHTTP2_CANCEL);
  });

  it("refuses a default above max_timeout_ms, naming the key", () => {
    const parsed = ServerConfigSchema.safeParse({ limits: { max_timeout_ms: 1_000, default_timeout_ms: 5_000 } });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain("default_timeout_ms (5000) must be <= max_timeout_ms (1000)");
  });
});

describe.each(Object.keys(transports))("health has budgets of its own (%s)", (protocol) => {
  it("Health.Watch streams past max_watches are RESOURCE_EXHAUSTED; checks and the service's own slots are untouched", async () => {
    const server = await start({ limits: limits({ max_concurrent_calls: 1, open_services: { max_watches: 2, calls_per_connection: 8 } }) });
    const health = createClient(Health, transports[protocol]!(server.url));
    const controller = new AbortController();
    const watching = [0, 1].map(async () => {
      for await (const res of health.watch({ service: "" }, { signal: controller.signal })) {
        expect(res.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      }
    });
    await waitFor(() => server.inFlight() === 2);
    const third = await (async () => {
      for await (const _ of health.watch({ service: "" })) return "streamed";
      return "ended";
    })().catch((e: unknown) => ConnectError.from(e));
    expect(third).toBeInstanceOf(ConnectError);
    expect((third as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((third as ConnectError).rawMessage).toContain("server.limits.open_services.max_watches");
    // While the watches are held: checks answer, and the verifier has its one slot.
    expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    const verifier = createClient(LeanVerifierService, transports[protocol]!(server.url));
    expect((await verifier.verify({ proof: "p" })).verdict).toBe(Verdict.PROVED);
    controller.abort();
    await Promise.allSettled(watching);
    await waitFor(() => server.inFlight() === 0);
  });
});

describe("anonymous clients cannot starve what others need", () => {
  it("watches held without a token leave Health/Check answering for everyone, and authenticated calls their slots", async () => {
    const server = await start({ auth: { token: "s3cret" }, limits: limits({ max_concurrent_calls: 4 }) });
    const { open_services } = ServerConfigSchema.parse({}).limits;
    // The attack: many connections, each holding as many watches as it may, no token.
    const sessions = Array.from({ length: 45 }, () => http2.connect(server.url));
    const watches: http2.ClientHttp2Stream[] = [];
    for (const session of sessions) {
      session.on("error", () => {});
      for (let i = 0; i < open_services.calls_per_connection + 2; i++) {
        const stream = session.request({
          ":method": "POST",
          ":path": "/grpc.health.v1.Health/Watch",
          "content-type": "application/grpc",
          te: "trailers",
        });
        stream.on("error", () => {});
        stream.end(Buffer.from([0, 0, 0, 0, 0]));
        watches.push(stream);
      }
    }
    await waitFor(() => server.inFlight() >= open_services.max_watches);
    expect(server.inFlight()).toBe(open_services.max_watches);
    try {
      // A probe on a connection of its own, and a caller with the token, both get through.
      const probe = createClient(Health, createGrpcTransport({ baseUrl: server.url }));
      expect((await probe.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      const verifier = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: server.url }));
      const results = await Promise.all(
        [0, 1, 2, 3].map(() => verifier.verify({ proof: "p" }, { headers: { authorization: "Bearer s3cret" } })),
      );
      expect(results.map((r) => r.verdict)).toEqual([Verdict.PROVED, Verdict.PROVED, Verdict.PROVED, Verdict.PROVED]);
    } finally {
      for (const session of sessions) session.destroy();
    }
  });

  it("a call without the token takes no slot of the service", async () => {
    const server = await start({ auth: { token: "s3cret" }, limits: limits({ max_concurrent_calls: 1 }) });
    const anonymous = Array.from({ length: 5 }, () => halfOpenCall(server.url));
    const answers = await Promise.all(anonymous.map((c) => c.answered));
    for (const c of anonymous) c.close();
    expect(answers.map((a) => a.headers?.["grpc-status"])).toEqual(Array(5).fill(String(Code.Unauthenticated)));
    const verifier = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: server.url }));
    expect((await verifier.verify({ proof: "p" }, { headers: { authorization: "Bearer s3cret" } })).verdict).toBe(Verdict.PROVED);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000) {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
