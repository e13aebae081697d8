// serve() started for real on loopback, called over gRPC, Connect
// and gRPC-Web with connect-node clients.
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type HandlerContext, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { LeanVerifierService, Verdict, type VerifyRequest } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { serve, serviceRegistration, type RunningServer } from "../src/server/serve.js";
import type { ServerConfigInput } from "../src/server/server-config.js";

/** A verifier whose behaviour the test steers through the proof text. */
function steerableVerifier() {
  const seen: { signalReason?: unknown }[] = [];
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const impl = {
    async verify(req: VerifyRequest, ctx: HandlerContext) {
      const record: { signalReason?: unknown } = {};
      seen.push(record);
      ctx.signal.addEventListener("abort", () => (record.signalReason = ctx.signal.reason));
      if (req.proof === "wait-for-release") await released;
      if (req.proof === "wait-for-abort") {
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        throw ctx.signal.reason;
      }
      if (req.proof === "with-metadata") {
        ctx.responseHeader.set("x-checked-by", "kit-test");
        ctx.responseTrailer.set("x-lean-ms", "12");
      }
      if (req.proof === "bad") throw new ConnectError('field "proof": "bad" is not a proof', Code.InvalidArgument);
      return { verdict: Verdict.PROVED, reason: `checked ${req.proof.length} chars` };
    },
  };
  return { impl, seen, release };
}

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.shutdown()));
});

async function start(config: ServerConfigInput = {}, verifier = steerableVerifier()) {
  const server = await serve({
    name: "test",
    services: [serviceRegistration(LeanVerifierService, verifier.impl)],
    config: { shutdown: { drain_delay_ms: 0, grace_period_ms: 2_000 }, ...config },
  });
  running.push(server);
  return { server, verifier };
}

const transports: Record<string, (baseUrl: string) => Transport> = {
  grpc: (baseUrl) => createGrpcTransport({ baseUrl }),
  "connect over HTTP/2": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "2" }),
  "connect over HTTP/1.1": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
  "grpc-web over HTTP/2": (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "2" }),
  "grpc-web over HTTP/1.1": (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
};

async function codeOf(promise: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await promise;
    return "ok";
  } catch (e) {
    return ConnectError.from(e).code;
  }
}

describe.each(Object.keys(transports))("serve() over %s", (protocol) => {
  const transport = transports[protocol]!;

  it("answers a call and maps handler errors to their codes", async () => {
    const { server } = await start();
    const client = createClient(LeanVerifierService, transport(server.url));
    const res = await client.verify({ proof: "by simp" });
    expect(res.verdict).toBe(Verdict.PROVED);
    expect(res.reason).toBe("checked 7 chars");
    const err = await client.verify({ proof: "bad" }).catch((e) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    expect((err as ConnectError).rawMessage).toBe('field "proof": "bad" is not a proof');
  });

  it("sends the handler's response headers and trailers, and only on that call", async () => {
    const { server } = await start();
    const client = createClient(LeanVerifierService, transport(server.url));
    const seen = async (proof: string) => {
      let header: Headers | undefined;
      let trailer: Headers | undefined;
      await client.verify({ proof }, { onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) });
      return { header: header?.get("x-checked-by") ?? null, trailer: trailer?.get("x-lean-ms") ?? null };
    };
    expect(await seen("with-metadata")).toEqual({ header: "kit-test", trailer: "12" });
    expect(await seen("plain")).toEqual({ header: null, trailer: null });
  });

  it("answers UNIMPLEMENTED for methods without an implementation", async () => {
    const { server } = await start();
    const client = createClient(LeanVerifierService, transport(server.url));
    expect(await codeOf(client.poolStats({}))).toBe(Code.Unimplemented);
  });

  it("refuses a request over read_max_bytes with RESOURCE_EXHAUSTED", async () => {
    const { server, verifier } = await start({
      limits: { read_max_bytes: 1024, write_max_bytes: 1 << 20, max_concurrent_calls: 8, max_timeout_ms: 60_000 },
    });
    const client = createClient(LeanVerifierService, transport(server.url));
    expect(await codeOf(client.verify({ proof: "x".repeat(5000) }))).toBe(Code.ResourceExhausted);
    expect(verifier.seen).toHaveLength(0);
    expect(await codeOf(client.verify({ proof: "x".repeat(500) }))).toBe("ok");
  });

  it("refuses calls beyond max_concurrent_calls with RESOURCE_EXHAUSTED, then recovers", async () => {
    const { server, verifier } = await start({
      limits: { read_max_bytes: 1 << 20, write_max_bytes: 1 << 20, max_concurrent_calls: 2, max_timeout_ms: 60_000 },
    });
    const client = createClient(LeanVerifierService, transport(server.url));
    const first = client.verify({ proof: "wait-for-release" });
    const second = client.verify({ proof: "wait-for-release" });
    await waitFor(() => verifier.seen.length === 2);
    expect(await codeOf(client.verify({ proof: "third" }))).toBe(Code.ResourceExhausted);
    verifier.release();
    expect(await codeOf(first)).toBe("ok");
    expect(await codeOf(second)).toBe("ok");
    expect(await codeOf(client.verify({ proof: "after" }))).toBe("ok");
  });

  it("aborts the handler's signal when the deadline expires", async () => {
    const { server, verifier } = await start();
    const client = createClient(LeanVerifierService, transport(server.url));
    const t0 = performance.now();
    expect(await codeOf(client.verify({ proof: "wait-for-abort" }, { timeoutMs: 150 }))).toBe(Code.DeadlineExceeded);
    expect(performance.now() - t0).toBeLessThan(2_000);
    await waitFor(() => verifier.seen[0]?.signalReason !== undefined);
    // Clients close their stream at their deadline, a moment before the server's timer
    // fires, so connect-node may report the close rather than the deadline: the test
    // checks that the handler's signal was aborted.
  });

  it("requires the bearer token when auth is configured, but not for health", async () => {
    const { server } = await start({ auth: { token: "s3cret" } });
    const anonymous = createClient(LeanVerifierService, transport(server.url));
    expect(await codeOf(anonymous.verify({ proof: "p" }))).toBe(Code.Unauthenticated);
    const wrong = await codeOf(anonymous.verify({ proof: "p" }, { headers: { authorization: "Bearer nope" } }));
    expect(wrong).toBe(Code.Unauthenticated);
    expect(await codeOf(anonymous.verify({ proof: "p" }, { headers: { authorization: "Bearer s3cret" } }))).toBe("ok");
    const health = createClient(Health, transport(server.url));
    expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });
});

describe("graceful drain", () => {
  it("turns NOT_SERVING first, lets the in-flight call finish, then closes", async () => {
    const { server, verifier } = await start({ shutdown: { drain_delay_ms: 200, grace_period_ms: 5_000 } });
    const client = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: server.url }));
    const health = createClient(Health, createGrpcTransport({ baseUrl: server.url }));
    const watched: HealthCheckResponse_ServingStatus[] = [];
    const watching = (async () => {
      for await (const res of health.watch({ service: "leangrpo.v1.LeanVerifierService" })) watched.push(res.status);
    })();
    await waitFor(() => watched.length === 1);

    const inFlight = client.verify({ proof: "wait-for-release" });
    await waitFor(() => verifier.seen.length === 1);
    const stopped = server.shutdown();
    await waitFor(() => watched.includes(HealthCheckResponse_ServingStatus.NOT_SERVING));
    // During the drain delay the server still answers, and says it is going away.
    const check = await health.check({ service: "" });
    expect(check.status).toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
    let finished = false;
    void stopped.then(() => (finished = true));
    await new Promise((r) => setTimeout(r, 400));
    expect(finished).toBe(false); // still waiting for the in-flight call
    verifier.release();
    expect((await inFlight).verdict).toBe(Verdict.PROVED);
    await stopped;
    await watching;
    expect(watched).toEqual([HealthCheckResponse_ServingStatus.SERVING, HealthCheckResponse_ServingStatus.NOT_SERVING]);
    const fresh = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: server.url }));
    expect(await codeOf(fresh.verify({ proof: "late" }, { timeoutMs: 1_000 }))).toBe(Code.Unavailable);
  });

  it("aborts calls still running after the grace period", async () => {
    const { server, verifier } = await start({ shutdown: { drain_delay_ms: 0, grace_period_ms: 300 } });
    const client = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: server.url }));
    const stuck = codeOf(client.verify({ proof: "wait-for-abort" }));
    await waitFor(() => verifier.seen.length === 1);
    const t0 = performance.now();
    await server.shutdown();
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(await stuck).not.toBe("ok");
    expect(verifier.seen[0]!.signalReason).toBeDefined();
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000) {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("service lifecycle", () => {
  it("closes what a service owns after the drain, not before", async () => {
    const events: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = await serve({
      name: "lifecycle",
      services: [
        {
          ...serviceRegistration(LeanVerifierService, {
            async verify() {
              await held;
              events.push("call finished");
              return { verdict: Verdict.PROVED };
            },
          }),
          close: async () => {
            events.push("closed");
          },
        },
      ],
      config: { shutdown: { drain_delay_ms: 0, grace_period_ms: 5_000 } },
    });
    const client = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: server.url }));
    const call = client.verify({ proof: "x" });
    await new Promise((r) => setTimeout(r, 50));
    const stopped = server.shutdown();
    await new Promise((r) => setTimeout(r, 50));
    expect(events).toEqual([]);
    release();
    await call;
    await stopped;
    expect(events).toEqual(["call finished", "closed"]);
  });
});

describe("streams in both directions", () => {
  it("answers a bidi stream of 300 requests, each as it is read, and ends it", async () => {
    const server = await serve({
      name: "bidi",
      services: [
        serviceRegistration(InferenceService, {
          async *tokenizeBatch(requests) {
            let index = 0;
            for await (const request of requests) {
              yield { index, tokenIds: [request.prompt?.kind.case === "text" ? request.prompt.kind.value.length : -1] };
              index++;
            }
          },
        }),
      ],
      config: { shutdown: { drain_delay_ms: 0, grace_period_ms: 1_000 } },
    });
    running.push(server);
    for (const transport of [
      createGrpcTransport({ baseUrl: server.url }),
      createConnectTransport({ baseUrl: server.url, httpVersion: "2" }),
    ]) {
      async function* requests() {
        for (let i = 0; i < 300; i++) yield { prompt: { kind: { case: "text" as const, value: "x".repeat(i) } } };
      }
      const lengths: number[] = [];
      for await (const response of createClient(InferenceService, transport).tokenizeBatch(requests(), { timeoutMs: 10_000 })) {
        lengths.push(response.tokenIds[0]!);
      }
      expect(lengths).toEqual(Array.from({ length: 300 }, (_, i) => i));
    }
  });
});
