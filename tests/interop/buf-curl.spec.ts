// A real service process is listed and called by `buf curl` through server
// reflection alone (no proto files), over gRPC, Connect and gRPC-Web.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { join } from "node:path";
import { repoRoot } from "../support/interop-verifier.js";
import { startServiceProcess, type ServiceProcess } from "../support/service-process.js";

const buf = join(repoRoot, "node_modules/.bin/buf");

/** buf curl with its arguments; gRPC is sent over HTTP/2 (prior knowledge), Connect and gRPC-Web over HTTP/1.1. */
async function bufCurl(
  args: string[],
  http2 = args[args.indexOf("--protocol") + 1] === "grpc",
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      buf,
      ["curl", ...(http2 ? ["--http2-prior-knowledge"] : []), "--timeout", "10s", ...args],
      {
        cwd: "/",
      },
    );
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe("buf curl against a running verifier process", () => {
  let verifier: ServiceProcess;
  beforeAll(async () => {
    verifier = await startServiceProcess("verifier", ["server.shutdown.drain_delay_ms=0"]);
  });
  afterAll(() => verifier?.stop());

  it("lists the services through reflection", async () => {
    const out = await bufCurl(["--protocol", "grpc", "--list-services", verifier.url]);
    expect(out.code).toBe(0);
    expect(out.stdout.split("\n").filter(Boolean).sort()).toEqual([
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
      "leangrpo.v1.LeanVerifierService",
    ]);
  });

  it("lists the methods of the contract", async () => {
    const out = await bufCurl(["--protocol", "grpc", "--list-methods", verifier.url]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("leangrpo.v1.LeanVerifierService/Verify");
    expect(out.stdout).toContain("leangrpo.v1.LeanVerifierService/ApplyTactic");
  });

  it.each(["grpc", "connect", "grpcweb"])("calls grpc.health.v1.Health/Check over %s", async (protocol) => {
    const out = await bufCurl(["--protocol", protocol, "-d", '{"service":""}', `${verifier.url}/grpc.health.v1.Health/Check`]);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ status: "SERVING" });
  });

  it("resolves a leangrpo request schema by reflection and reports the status code", async () => {
    // No REPL is configured, so Verify answers UNAVAILABLE: buf exits with code × 8.
    const out = await bufCurl([
      "--protocol",
      "grpc",
      "-d",
      '{"theorem":{"name":"t","statement":"theorem t : 1 + 1 = 2"},"proof":"by norm_num"}',
      `${verifier.url}/leangrpo.v1.LeanVerifierService/Verify`,
    ]);
    expect(out.code).toBe(14 * 8);
    expect(out.stderr).toContain("unavailable");
  });

  it("rejects a field the schema does not have, before sending", async () => {
    const out = await bufCurl(["--protocol", "grpc", "-d", '{"prooof":"x"}', `${verifier.url}/leangrpo.v1.LeanVerifierService/Verify`]);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain("prooof");
  });
});

describe("a service process", () => {
  it("drains and exits 0 on SIGTERM", async () => {
    const reward = await startServiceProcess("reward", ["server.shutdown.drain_delay_ms=0"]);
    expect(await reward.stop()).toBe(0);
  });

  it("refuses to start on an unknown config key, naming it and the accepted keys", async () => {
    const started = startServiceProcess("learner", ["server.limits.max_concurent_calls=4"]);
    await expect(started).rejects.toThrow(/exited with 2/);
    const { stderr } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", join(repoRoot, "services/learner/src/server.ts"), "server.limits.max_concurent_calls=4"],
      { cwd: repoRoot },
    ).catch((e: { stderr: string }) => e);
    expect(stderr).toContain('"server.limits.max_concurent_calls"');
    expect(stderr).toContain("max_concurrent_calls");
    expect(stderr).toContain("read_max_bytes");
  });

  it("refuses a bad value from the environment, naming the variable", async () => {
    const { stderr } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", join(repoRoot, "services/inference/src/server.ts")],
      { cwd: repoRoot, env: { ...process.env, LEANGRPO_INFERENCE_SERVER__PORT: "not-a-port" } },
    ).catch((e: { stderr: string }) => e);
    expect(stderr).toContain("server.port");
    expect(stderr).toContain("LEANGRPO_INFERENCE_SERVER__PORT");
  });
});
