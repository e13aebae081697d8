// A plain @grpc/grpc-js client, with stubs loaded from the .proto files by
// @grpc/proto-loader (no generated TS), calls a kit server and sees the right codes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { setupTracing } from "@lean-grpo/kit";
import type { RunningServer } from "@lean-grpo/kit";
import { repoRoot, startInteropServer } from "../support/interop-verifier.js";

type Callback = (err: grpc.ServiceError | null, res?: Record<string, unknown>) => void;
type UnaryStub = (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: Callback) => void;

let server: RunningServer;
let authServer: RunningServer;
let pkg: Record<string, any>;

beforeAll(async () => {
  setupTracing({ serviceName: "grpc-js-interop", env: {} });
  [server, authServer] = await Promise.all([startInteropServer(), startInteropServer("t0ken")]);
  const definition = protoLoader.loadSync(["leangrpo/v1/verifier.proto", "grpc/health/v1/health.proto"], {
    includeDirs: [`${repoRoot}proto`, `${repoRoot}vendor/proto`],
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  pkg = grpc.loadPackageDefinition(definition) as Record<string, any>;
});

afterAll(async () => {
  await Promise.all([server?.shutdown(), authServer?.shutdown()]);
});

function stub(url: string, path: string[]): grpc.Client & Record<string, UnaryStub> {
  const Ctor = path.reduce((o, k) => o[k], pkg) as unknown as typeof grpc.Client;
  return new Ctor(url.replace("http://", ""), grpc.credentials.createInsecure(), {
    "grpc.max_send_message_length": 8 << 20,
  }) as grpc.Client & Record<string, UnaryStub>;
}

function call(client: Record<string, UnaryStub>, method: string, req: object, opts: { deadlineMs?: number; md?: grpc.Metadata } = {}) {
  return new Promise<{ code: grpc.status; res?: Record<string, unknown>; details?: string }>((resolve) => {
    client[method]!.call(client, req, opts.md ?? new grpc.Metadata(), { deadline: Date.now() + (opts.deadlineMs ?? 5_000) }, (err, res) =>
      resolve(err ? { code: err.code, details: err.details } : { code: grpc.status.OK, res }),
    );
  });
}

describe("@grpc/grpc-js client against a kit server", () => {
  it("gets OK with the decoded response", async () => {
    const verifier = stub(server.url, ["leangrpo", "v1", "LeanVerifierService"]);
    const out = await call(verifier, "Verify", { theorem: { statement: "theorem t : True" }, proof: "trivial" });
    expect(out.code).toBe(grpc.status.OK);
    expect(out.res?.verdict).toBe("VERDICT_PROVED");
    expect(out.res?.checkedSource).toBe("theorem t : True := trivial");
    verifier.close();
  });

  it("sees INVALID_ARGUMENT with the message, UNIMPLEMENTED, DEADLINE_EXCEEDED and RESOURCE_EXHAUSTED", async () => {
    const verifier = stub(server.url, ["leangrpo", "v1", "LeanVerifierService"]);
    const bad = await call(verifier, "Verify", { proof: "bad" });
    expect(bad.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(bad.details).toBe('field "proof": "bad" is not a proof');
    expect((await call(verifier, "PoolStats", {})).code).toBe(grpc.status.UNIMPLEMENTED);
    expect((await call(verifier, "Verify", { proof: "wait-for-abort" }, { deadlineMs: 200 })).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect((await call(verifier, "Verify", { proof: "x".repeat(2 << 20) })).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    verifier.close();
  });

  it("sees UNAUTHENTICATED without the token and OK with it; health needs none", async () => {
    const verifier = stub(authServer.url, ["leangrpo", "v1", "LeanVerifierService"]);
    expect((await call(verifier, "Verify", { proof: "p" })).code).toBe(grpc.status.UNAUTHENTICATED);
    const md = new grpc.Metadata();
    md.set("authorization", "Bearer t0ken");
    expect((await call(verifier, "Verify", { proof: "p" }, { md })).code).toBe(grpc.status.OK);
    const health = stub(authServer.url, ["grpc", "health", "v1", "Health"]);
    const check = await call(health, "Check", { service: "leangrpo.v1.LeanVerifierService" });
    expect(check.res?.status).toBe("SERVING");
    expect((await call(health, "Check", { service: "no.such.Service" })).code).toBe(grpc.status.NOT_FOUND);
    verifier.close();
    health.close();
  });

  it("continues the caller's W3C trace", async () => {
    const verifier = stub(server.url, ["leangrpo", "v1", "LeanVerifierService"]);
    const md = new grpc.Metadata();
    md.set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    const out = await call(verifier, "Verify", { proof: "p" }, { md });
    expect(out.res?.reason).toBe("0af7651916cd43dd8448eb211c80319c");
    verifier.close();
  });
});
