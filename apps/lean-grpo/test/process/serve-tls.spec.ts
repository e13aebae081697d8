// `lean-grpo serve all` beyond loopback: without TLS or server.allow_plaintext it stops before
// any service starts, naming every service's keys (serve() alone refused only when it reached
// the service, after the ones before it had started); with TLS the mesh's own calls run over
// it, and the start-up message gives the https:// URLs and the file clients must trust.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { readFileSync } from "node:fs";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { repoRoot } from "../../../../tests/support/interop-verifier.js";
import { issueTestCertificate, writeTestCertificate } from "../../../../tests/support/test-certificate.js";

const SERVICES = ["inference", "verifier", "reward", "learner", "orchestrator"];
const CLI = `${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`;

let dir: string;
let files: { ca: string; cert: string; key: string };

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "serve-tls-"));
  mkdirSync(path.join(dir, "certs"));
  files = writeTestCertificate(path.join(dir, "certs"), issueTestCertificate(["127.0.0.1", "localhost"]));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `serve all` in its own folder (its token file lands there), on free ports, with the shipped model. */
function serveAll(overrides: string[], env: NodeJS.ProcessEnv = {}, cwd = dir): ChildProcess {
  const base = SERVICES.flatMap((s) => [`${s}.server.port=0`, `${s}.server.shutdown.drain_delay_ms=0`]);
  return spawn(
    process.execPath,
    [
      CLI,
      "serve",
      "all",
      ...base,
      `model.dir=${repoRoot}models/arith-tiny`,
      `orchestrator.runs_dir=${path.join(cwd, "runs")}`,
      ...overrides,
    ],
    {
      cwd,
      env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LEANGRPO_"))), LOG_LEVEL: "info", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
}

async function exitOf(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let [stdout, stderr] = ["", ""];
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

describe("lean-grpo serve all beyond loopback", () => {
  it("without TLS or allow_plaintext starts nothing, and names every service's keys", async () => {
    const cwd = mkdtempSync(path.join(dir, "plain-"));
    const result = await exitOf(serveAll(["verifier.server.host=0.0.0.0", "reward.server.host=0.0.0.0"], {}, cwd));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("nothing was started");
    for (const service of ["verifier", "reward"]) {
      expect(result.stderr).toContain(`give ${service}.server.tls.cert_file and ${service}.server.tls.key_file (PEM)`);
      expect(result.stderr).toContain(`or set ${service}.server.allow_plaintext=true`);
    }
    // Nothing served, not even the services before the first refused one; no token generated either.
    expect(result.stderr).not.toContain('"msg":"serving"');
    expect(result.stdout).not.toContain("SERVING");
    expect(existsSync(path.join(cwd, ".lean-grpo"))).toBe(false);
  }, 60_000);

  it("with a certificate its own clients would not trust starts nothing, and says to trust its CA", async () => {
    const tls = SERVICES.flatMap((s) => [`${s}.server.tls.cert_file=${files.cert}`, `${s}.server.tls.key_file=${files.key}`]);
    const result = await exitOf(serveAll(["--host", "0.0.0.0", ...tls]));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/verifier: this mesh's own clients would refuse verifier\.server\.tls\.cert_file .*NODE_EXTRA_CA_CERTS/);
    expect(result.stderr).not.toContain('"msg":"serving"');
  }, 60_000);

  describe("with TLS, its CA trusted through NODE_EXTRA_CA_CERTS", () => {
    let child: ChildProcess;
    const lines: string[] = [];
    const stderr: string[] = [];

    beforeAll(async () => {
      const tls = SERVICES.flatMap((s) => [`${s}.server.tls.cert_file=${files.cert}`, `${s}.server.tls.key_file=${files.key}`]);
      child = serveAll(["--host", "0.0.0.0", ...tls], { NODE_EXTRA_CA_CERTS: files.ca, LOG_LEVEL: "warn" });
      child.stderr!.on("data", (d) => stderr.push(String(d)));
      for await (const line of createInterface({ input: child.stdout! })) {
        lines.push(line);
        if (line.startsWith("model ")) break;
      }
    }, 90_000);
    afterAll(async () => {
      if (child && child.exitCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    });

    const urlOf = (service: string) => lines.find((l) => l.startsWith(`${service} `))?.split(/\s+/)[1];

    it("prints https:// URLs at a name the certificate holds, the file to trust, and buf curl's flags for TLS", () => {
      expect(lines.length, stderr.join("")).toBeGreaterThan(5);
      for (const service of SERVICES) expect(urlOf(service), service).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const tlsLine = lines.find((l) => l.startsWith("tls    on"));
      expect(tlsLine).toContain("(inference, verifier, reward, learner, orchestrator)");
      expect(tlsLine).toContain("a name the certificate holds (127.0.0.1, localhost)");
      expect(tlsLine).toContain(`NODE_EXTRA_CA_CERTS=${files.ca}`);
      expect(tlsLine).toContain(`grpcurl -cacert ${files.ca}`);
      expect(lines.find((l) => l.startsWith("start a run:"))).toContain(`--http2-prior-knowledge --cacert ${files.ca}`);
      expect(lines.find((l) => l.startsWith("auth   on"))).toBeDefined();
    });

    it("answers over TLS only, and its services call each other over TLS (reward to verifier)", async () => {
      const ca = readFileSync(files.ca);
      const token = readFileSync(path.join(dir, ".lean-grpo", "auth-token"), "utf8").trim();
      for (const service of SERVICES) {
        const health = createClient(Health, createGrpcTransport({ baseUrl: urlOf(service)!, nodeOptions: { ca } }));
        expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      }
      const plain = createClient(Health, createGrpcTransport({ baseUrl: urlOf("verifier")!.replace("https:", "http:") }));
      await expect(plain.check({ service: "" }, { timeoutMs: 3_000 })).rejects.toThrow();
      // A Lean proof goes on to the verifier serve all started, over TLS; with no REPL configured it says so.
      const reward = createClient(RewardService, createGrpcTransport({ baseUrl: urlOf("reward")!, nodeOptions: { ca } }));
      const error = await reward
        .score(
          { theorem: { name: "t", statement: "theorem t : True" }, completion: { text: "```lean\ntheorem t : True := by trivial\n```" } },
          { headers: { authorization: `Bearer ${token}` } },
        )
        .then(
          () => undefined,
          (e) => ConnectError.from(e),
        );
      expect(error?.code, error?.rawMessage).toBe(Code.Unavailable);
      expect(error?.rawMessage).toContain("repl.command");
    }, 30_000);
  });

  describe("--topology", () => {
    function serveTopology(topology: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
      const file = path.join(dir, `topology-${Math.random().toString(36).slice(2)}.yaml`);
      writeFileSync(file, topology.join("\n"));
      return spawn(process.execPath, [CLI, "serve", "all", "--topology", file], {
        cwd: dir,
        env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LEANGRPO_"))), LOG_LEVEL: "warn", ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
    }

    it("starts no replica when one would bind beyond loopback in plain text", async () => {
      const result = await exitOf(serveTopology(["host: 0.0.0.0", "base_port: 50460", "services:", "  verifier: { replicas: 2 }"]));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('verifier (topology services.verifier): server.host "0.0.0.0" is beyond loopback without TLS');
      expect(result.stderr).toContain("give server.tls.cert_file and server.tls.key_file (PEM), or set server.allow_plaintext=true");
    }, 60_000);

    it("dials a TLS replica at https://, trusting the CA the replicas are started with", async () => {
      const child = serveTopology(
        [
          "host: 0.0.0.0",
          "base_port: 50470",
          "services:",
          "  verifier:",
          "    replicas: 1",
          `    overrides: ["server.tls.cert_file=${files.cert}", "server.tls.key_file=${files.key}", "server.shutdown.drain_delay_ms=0"]`,
        ],
        { NODE_EXTRA_CA_CERTS: files.ca },
      );
      try {
        const lines: string[] = [];
        for await (const line of createInterface({ input: child.stdout! })) {
          lines.push(line);
          if (line.startsWith("tls    on")) break;
        }
        expect(lines[0]).toMatch(/^verifier\[0\]\s+https:\/\/127\.0\.0\.1:50470\s+SERVING/);
        expect(lines.at(-1)).toContain(`trust ${files.ca}`);
        const health = createClient(
          Health,
          createGrpcTransport({ baseUrl: "https://127.0.0.1:50470", nodeOptions: { ca: readFileSync(files.ca) } }),
        );
        expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      } finally {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    }, 60_000);
  });
});
