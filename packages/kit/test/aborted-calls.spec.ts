// A request can end a call, never the process. Each test drives a raw HTTP/2 client
// at serve() the way an attacker would (a complete message on a stream that never
// ends, then a dropped connection; a reset in the middle of a body) and checks that
// no promise rejection escaped and the server still answers.
import * as http2 from "node:http2";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { toBinary, create } from "@bufbuild/protobuf";
import { LeanVerifierService, Verdict, VerifyRequestSchema } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { serve, serviceRegistration, type RunningServer } from "../src/server/serve.js";
import type { ServerConfigInput } from "../src/server/server-config.js";

const running: RunningServer[] = [];
const escaped: unknown[] = [];
const recordEscape = (reason: unknown) => escaped.push(reason);
beforeEach(() => {
  escaped.length = 0;
  process.on("unhandledRejection", recordEscape);
});
afterEach(async () => {
  process.off("unhandledRejection", recordEscape);
  await Promise.all(running.splice(0).map((s) => s.shutdown()));
});

async function start(config: ServerConfigInput = {}) {
  const server = await serve({
    name: "aborted-calls",
    services: [
      serviceRegistration(LeanVerifierService, {
        async verify(req) {
          if (req.proof === "fail") throw new Error("handler failed on purpose");
          return { verdict: Verdict.PROVED };
        },
      }),
    ],
    config: { shutdown: { drain_delay_ms: 0, grace_period_ms: 500 }, ...config },
  });
  running.push(server);
  return server;
}

function grpcFrame(proof: string): Buffer {
  const payload = toBinary(VerifyRequestSchema, create(VerifyRequestSchema, { proof }));
  const frame = Buffer.alloc(5 + payload.length);
  frame.writeUInt32BE(payload.length, 1);
  Buffer.from(payload).copy(frame, 5);
  return frame;
}

/** Sends a whole message on a stream it never ends, then drops the connection. */
async function completeMessageThenDrop(url: string, proof: string, headers: http2.OutgoingHttpHeaders = {}) {
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
  stream.write(grpcFrame(proof));
  await new Promise((r) => setTimeout(r, 50));
  session.destroy();
  // Give the server's reactions (and any escaped rejection) time to surface.
  await new Promise((r) => setTimeout(r, 200));
}

async function stillAnswers(server: RunningServer) {
  const transport = createGrpcTransport({ baseUrl: server.url });
  const health = await createClient(Health, transport).check({ service: "" });
  expect(health.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
}

describe("a dropped call never escapes as an unhandled rejection", () => {
  it("complete message, stream never ended, connection dropped (no auth)", async () => {
    const server = await start();
    for (const proof of ["ok", "fail"]) await completeMessageThenDrop(server.url, proof);
    expect(escaped).toEqual([]);
    await stillAnswers(server);
  });

  it("the same with auth on and no token: UNAUTHENTICATED is answered, not thrown into the process", async () => {
    const server = await start({ auth: { token: "s3cret" } });
    await completeMessageThenDrop(server.url, "ok");
    await completeMessageThenDrop(server.url, "ok", { authorization: "Bearer wrong" });
    expect(escaped).toEqual([]);
    await stillAnswers(server);
  });

  it("a stream reset in the middle of its message", async () => {
    const server = await start();
    const session = http2.connect(server.url);
    session.on("error", () => {});
    const stream = session.request({
      ":method": "POST",
      ":path": "/leangrpo.v1.LeanVerifierService/Verify",
      "content-type": "application/grpc",
    });
    stream.on("error", () => {});
    stream.write(grpcFrame("x".repeat(1000)).subarray(0, 300));
    await new Promise((r) => setTimeout(r, 50));
    stream.close(http2.constants.NGHTTP2_CANCEL);
    await new Promise((r) => setTimeout(r, 200));
    session.destroy();
    expect(escaped).toEqual([]);
    await stillAnswers(server);
  });
});
