// A Python grpcio client (Debian's python3-grpcio, installed by .ci/run) calls a
// kit server over real loopback gRPC and sees the right status codes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setupTracing, type RunningServer } from "@lean-grpo/kit";
import { repoRoot, startInteropServer } from "../support/interop-verifier.js";

// Debian's python3 (not a pyenv shim) is the one python3-grpcio installs into.
const python = ["/usr/bin/python3", "python3"].find(
  (bin) => spawnSync(bin, ["-c", "import grpc, google.protobuf"], { stdio: "ignore" }).status === 0,
);
if (!python)
  console.warn("skipping python grpcio interop: no python3 with grpc + protobuf (apt-get install python3-grpcio python3-protobuf)");

describe.skipIf(!python)("Python grpcio client against a kit server", () => {
  let server: RunningServer;
  let descriptorSet: string;

  beforeAll(async () => {
    setupTracing({ serviceName: "grpcio-interop", env: {} });
    server = await startInteropServer();
    descriptorSet = join(mkdtempSync(join(tmpdir(), "fds-")), "mesh.binpb");
    execFileSync(join(repoRoot, "node_modules/.bin/buf"), ["build", "--as-file-descriptor-set", "-o", descriptorSet], {
      cwd: repoRoot,
    });
  });
  afterAll(() => server?.shutdown());

  it("sees OK, INVALID_ARGUMENT, UNIMPLEMENTED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED and a continued trace", async () => {
    // Asynchronously: the server runs in this process and must keep answering.
    const { stdout: out } = await promisify(execFile)(
      python!,
      [join(repoRoot, "tests/interop/grpcio_client.py"), `127.0.0.1:${server.port}`, descriptorSet],
      {
        timeout: 30_000,
      },
    );
    const results = JSON.parse(out);
    expect(results.ok.code).toBe("OK");
    expect(results.ok.response.verdict).toBe("VERDICT_PROVED");
    expect(results.invalid).toEqual({ code: "INVALID_ARGUMENT", details: 'field "proof": "bad" is not a proof' });
    expect(results.unimplemented.code).toBe("UNIMPLEMENTED");
    expect(results.deadline.code).toBe("DEADLINE_EXCEEDED");
    expect(results.too_big.code).toBe("RESOURCE_EXHAUSTED");
    expect(results.health).toEqual({ code: "OK", response: { status: "SERVING" } });
    expect(results.traced.response.reason).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  });
});
