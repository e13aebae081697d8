// With OTEL_EXPORTER_OTLP_ENDPOINT set, RPC spans leave the process as OTLP
// http/protobuf: a loopback sink stands in for the collector.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { LeanVerifierService } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { setupTracing, type RunningServer, type TracingSetup } from "@lean-grpo/kit";
import { startInteropServer } from "../support/interop-verifier.js";

interface Received {
  path: string;
  contentType: string;
  body: Buffer;
}

const received: Received[] = [];
let sink: http.Server;
let tracing: TracingSetup;
let server: RunningServer;

beforeAll(async () => {
  sink = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      received.push({ path: req.url ?? "", contentType: req.headers["content-type"] ?? "", body: Buffer.concat(chunks) });
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  // The exporter reads its endpoint from the environment, as in a deployment.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
  tracing = setupTracing({
    serviceName: "otlp-test",
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: "lean-grpo-verifier" },
  });
  server = await startInteropServer();
});

afterAll(async () => {
  await server?.shutdown();
  await tracing?.shutdown();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  sink?.close();
});

describe("OTLP export", () => {
  it("posts the RPC's server span to /v1/traces as protobuf, with the service name", async () => {
    expect(tracing.exporting).toBe(true);
    const client = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: server.url }));
    await client.verify({ proof: "exported" });
    await tracing.provider!.forceFlush();
    const traces = received.filter((r) => r.path === "/v1/traces");
    expect(traces.length).toBeGreaterThan(0);
    expect(traces[0]!.contentType).toBe("application/x-protobuf");
    const body = Buffer.concat(traces.map((t) => t.body)).toString("latin1");
    // Strings in the protobuf payload appear verbatim.
    expect(body).toContain("leangrpo.v1.LeanVerifierService/Verify");
    expect(body).toContain("lean-grpo-verifier");
    expect(body).toContain("rpc.grpc.status_code");
  });
});
