// The kit's health probe (src/bin/health-probe.ts, compiled into every image) against a
// service that speaks TLS: what Kubernetes' native grpc probe cannot do. It dials the
// address it is given and checks the certificate against --ca for --server-name, so an
// exec probe inside a pod can dial 127.0.0.1 and check the Service's name.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { serve, serviceRegistration, type RunningServer } from "../src/index.js";
import { issueTestCertificate } from "../../../tests/support/test-certificate.js";

const PROBE = fileURLToPath(new URL("../src/bin/health-probe.ts", import.meta.url));

function probe(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", PROBE, ...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

let dir: string;
let server: RunningServer;
let ca: string;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "health-probe-"));
  // Issued for the Service's name only, as in a cluster: not for 127.0.0.1.
  const issued = issueTestCertificate(["inference", "inference.lean-grpo.svc"]);
  for (const [name, text] of Object.entries({ "ca.crt": issued.ca, "tls.crt": issued.cert, "tls.key": issued.key })) {
    writeFileSync(path.join(dir, name), text);
  }
  ca = path.join(dir, "ca.crt");
  server = await serve({
    name: "probe-test",
    services: [serviceRegistration(InferenceService, {})],
    config: {
      tls: { cert_file: path.join(dir, "tls.crt"), key_file: path.join(dir, "tls.key") },
      shutdown: { drain_delay_ms: 0, grace_period_ms: 1_000 },
    },
  });
  port = server.port;
});

afterAll(async () => {
  await server?.shutdown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the health probe against a TLS service", () => {
  it("answers SERVING over TLS, checking the certificate for --server-name against --ca", async () => {
    const [whole, named] = await Promise.all([
      probe(`https://127.0.0.1:${port}`, "--ca", ca, "--server-name", "inference"),
      probe(`https://127.0.0.1:${port}`, "leangrpo.v1.InferenceService", "--ca", ca, "--server-name", "inference.lean-grpo.svc"),
    ]);
    expect(whole).toMatchObject({ code: 0, stdout: "SERVING\n" });
    expect(named).toMatchObject({ code: 0, stdout: "SERVING\n" });
  }, 60_000);

  it("fails where the certificate would not be trusted: another name, no CA, plain text to the TLS port", async () => {
    const [wrongName, noCa, plain, unknownService] = await Promise.all([
      probe(`https://127.0.0.1:${port}`, "--ca", ca, "--server-name", "verifier"),
      probe(`https://127.0.0.1:${port}`, "--server-name", "inference"),
      probe(`127.0.0.1:${port}`),
      probe(`https://127.0.0.1:${port}`, "leangrpo.v1.NoSuchService", "--ca", ca, "--server-name", "inference"),
    ]);
    expect(wrongName.code).toBe(1);
    expect(wrongName.stderr).toMatch(/Hostname\/IP does not match certificate's altnames: Host: verifier/);
    expect(noCa.code).toBe(1);
    expect(noCa.stderr).toMatch(/unable to (verify the first certificate|get local issuer certificate)/);
    expect(plain.code).toBe(1);
    expect(unknownService.code).toBe(1);
  }, 60_000);

  it("refuses TLS options for a plain-text address, and a CA file it cannot read, exiting 2", async () => {
    const [plainWithCa, missingCa] = await Promise.all([
      probe(`127.0.0.1:${port}`, "--ca", ca),
      probe(`https://127.0.0.1:${port}`, "--ca", path.join(dir, "absent.crt")),
    ]);
    expect(plainWithCa.code).toBe(2);
    expect(plainWithCa.stderr).toContain(`give the address as https://127.0.0.1:${port}`);
    expect(missingCa.code).toBe(2);
    expect(missingCa.stderr).toContain("cannot read --ca");
    expect(missingCa.stderr).toContain("ENOENT");
  }, 60_000);
});
