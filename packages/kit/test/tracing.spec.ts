// Two hops, one trace: a caller → RewardService (whose handler calls the verifier)
// → LeanVerifierService, all over real loopback gRPC, spans in an in-memory exporter.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { context, trace, SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { LeanVerifierService, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { serve, serviceRegistration, type RunningServer } from "../src/server/serve.js";
import { setupTracing, type TracingSetup } from "../src/telemetry/setup-tracing.js";
import { rpcClientTracing } from "../src/telemetry/rpc-tracing.js";
import { createServiceClient, type ServiceClient } from "../src/client/index.js";

const exporter = new InMemorySpanExporter();
let tracing: TracingSetup;
let verifier: RunningServer;
let reward: RunningServer;
let verifierClient: ServiceClient<typeof LeanVerifierService>;

beforeAll(async () => {
  tracing = setupTracing({ serviceName: "trace-test", spanProcessors: [new SimpleSpanProcessor(exporter)], env: {} });
  const quick = { shutdown: { drain_delay_ms: 0, grace_period_ms: 1_000 } };
  verifier = await serve({
    name: "verifier",
    config: quick,
    services: [
      serviceRegistration(LeanVerifierService, {
        verify: (req) => {
          // The handler runs inside its server span.
          expect(trace.getActiveSpan()).toBeDefined();
          return { verdict: req.proof === "by simp" ? Verdict.PROVED : Verdict.ERROR };
        },
        async *verifyBatch(req) {
          for (const [index, item] of req.items.entries()) {
            await new Promise((r) => setTimeout(r, 30));
            yield { index, result: { verdict: item.proof === "by simp" ? Verdict.PROVED : Verdict.ERROR } };
          }
        },
      }),
    ],
  });
  verifierClient = createServiceClient(LeanVerifierService, {
    endpoints: [verifier.url],
    interceptors: [rpcClientTracing()],
  });
  reward = await serve({
    name: "reward",
    config: quick,
    services: [
      serviceRegistration(RewardService, {
        async score(req) {
          const verdict = await verifierClient.client.verify({ theorem: req.theorem, proof: req.completion?.text ?? "" });
          const solved = verdict.verdict === Verdict.PROVED;
          return { result: { reward: solved ? 1 : 0, solved } };
        },
      }),
    ],
  });
});

afterAll(async () => {
  verifierClient?.transport.close();
  await Promise.all([reward?.shutdown(), verifier?.shutdown()]);
  await tracing?.shutdown();
});

describe("tracing across two hops", () => {
  it("puts the caller, reward and verifier spans in one trace, each the parent of the next", async () => {
    exporter.reset();
    const tracer = trace.getTracer("test");
    const root = tracer.startSpan("rollout.completion");
    const client = createClient(RewardService, createGrpcTransport({ baseUrl: reward.url, interceptors: [rpcClientTracing()] }));
    const res = await context.with(trace.setSpan(context.active(), root), () =>
      client.score({ theorem: { name: "t", statement: "theorem t : True" }, completion: { text: "by simp" } }),
    );
    root.end();
    expect(res.result?.solved).toBe(true);

    const spans = exporter.getFinishedSpans();
    const find = (name: string, kind: SpanKind) => {
      const span = spans.find((s) => s.name === name && s.kind === kind);
      expect(span, `${SpanKind[kind]} span ${name}`).toBeDefined();
      return span as ReadableSpan;
    };
    const rewardClient = find("leangrpo.v1.RewardService/Score", SpanKind.CLIENT);
    const rewardServer = find("leangrpo.v1.RewardService/Score", SpanKind.SERVER);
    const verifyClient = find("leangrpo.v1.LeanVerifierService/Verify", SpanKind.CLIENT);
    const verifyServer = find("leangrpo.v1.LeanVerifierService/Verify", SpanKind.SERVER);

    const traceId = root.spanContext().traceId;
    for (const span of [rewardClient, rewardServer, verifyClient, verifyServer]) {
      expect(span.spanContext().traceId).toBe(traceId);
    }
    expect(rewardClient.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    expect(rewardServer.parentSpanContext?.spanId).toBe(rewardClient.spanContext().spanId);
    expect(verifyClient.parentSpanContext?.spanId).toBe(rewardServer.spanContext().spanId);
    expect(verifyServer.parentSpanContext?.spanId).toBe(verifyClient.spanContext().spanId);

    expect(verifyServer.attributes).toMatchObject({
      "rpc.system": "grpc",
      "rpc.service": "leangrpo.v1.LeanVerifierService",
      "rpc.method": "Verify",
      "rpc.grpc.status_code": 0,
    });
  });

  it("records the status code of a failed call", async () => {
    exporter.reset();
    const client = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: verifier.url, interceptors: [rpcClientTracing()] }));
    await expect(client.poolStats({})).rejects.toThrow();
    const server = exporter.getFinishedSpans().find((s) => s.name.endsWith("/PoolStats") && s.kind === SpanKind.SERVER);
    expect(server?.attributes["rpc.grpc.status_code"]).toBe(12); // UNIMPLEMENTED
    expect(server?.status.message).toMatch(/^Unimplemented/);
  });

  it("ends a server-streaming span when its stream ends, not when it opens", async () => {
    exporter.reset();
    const client = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: verifier.url, interceptors: [rpcClientTracing()] }));
    let lastMessageAt = 0;
    const indexes: number[] = [];
    for await (const item of client.verifyBatch({ items: [{ proof: "by simp" }, { proof: "nope" }, { proof: "by simp" }] })) {
      indexes.push(item.index);
      lastMessageAt = Date.now();
    }
    expect(indexes).toEqual([0, 1, 2]);
    const server = exporter.getFinishedSpans().find((s) => s.name.endsWith("/VerifyBatch") && s.kind === SpanKind.SERVER);
    expect(server).toBeDefined();
    const endMs = server!.endTime[0] * 1000 + server!.endTime[1] / 1e6;
    const startMs = server!.startTime[0] * 1000 + server!.startTime[1] / 1e6;
    // The handler sleeps 30 ms per item: a span ended at stream open would be ~0 ms long.
    expect(endMs - startMs).toBeGreaterThanOrEqual(80);
    expect(endMs).toBeLessThanOrEqual(lastMessageAt + 5);
  });
});
