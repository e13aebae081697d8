// What `lean-grpo serve` checks before it starts anything beyond loopback (mesh-exposure.ts), and
// how it dials, trusts and describes services that speak TLS (mesh-tls.ts); the topology's plan
// dials a TLS service at https://. The commands themselves: test/process/serve-tls.spec.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { loadConfig, type ServerConfig } from "@lean-grpo/kit";
import { RewardConfigSchema } from "@lean-grpo/reward";
import { requireMeshExposure } from "../src/mesh/mesh-exposure.js";
import { describeMeshTls, dialHost, requireTrustedInProcess, servernameFor, trustedFile } from "../src/mesh/mesh-tls.js";
import { TopologySchema, planTopology } from "../src/mesh/topology.js";
import { issueTestCertificate, writeTestCertificate } from "../../../tests/support/test-certificate.js";

let dir: string;
/** Issued by a test CA for 127.0.0.1 and localhost. */
let loopback: { ca: string; cert: string; key: string };
/** Issued by another CA for a name only. */
let namedOnly: { ca: string; cert: string; key: string };
/** Self-signed for localhost. */
let selfSigned: { cert: string; key: string };

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "mesh-tls-"));
  const sub = (name: string) => {
    const d = path.join(dir, name);
    execFileSync("mkdir", ["-p", d]);
    return d;
  };
  loopback = writeTestCertificate(sub("loopback"), issueTestCertificate(["127.0.0.1", "localhost"]));
  namedOnly = writeTestCertificate(sub("named"), issueTestCertificate(["mesh.example"]));
  selfSigned = { cert: path.join(dir, "self.crt"), key: path.join(dir, "self.key") };
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"].concat([
      "-addext",
      "subjectAltName=DNS:localhost",
      "-keyout",
      selfSigned.key,
      "-out",
      selfSigned.cert,
    ]),
    { stdio: "ignore" },
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const server = (host: string, more: Partial<ServerConfig> = {}) => ({ host, allow_plaintext: false, ...more }) as ServerConfig;
const tls = (files: { cert: string; key: string }) => ({ cert_file: files.cert, key_file: files.key });

describe("requireMeshExposure", () => {
  it("refuses every service beyond loopback without TLS or allow_plaintext, naming each one's keys, in one error", () => {
    const attempt = () =>
      requireMeshExposure([
        { service: "inference", keyPrefix: "inference.", server: server("127.0.0.1") },
        { service: "verifier", keyPrefix: "verifier.", server: server("0.0.0.0") },
        { service: "reward", keyPrefix: "reward.", server: server("10.1.2.3") },
        { service: "learner", keyPrefix: "learner.", server: server("0.0.0.0", { allow_plaintext: true }) },
        { service: "orchestrator", keyPrefix: "orchestrator.", server: server("0.0.0.0", { tls: tls(loopback) }) },
      ]);
    expect(attempt).toThrow(/^nothing was started:/);
    const message = (() => {
      try {
        attempt();
      } catch (error) {
        return (error as Error).message;
      }
    })()!;
    expect(message).toContain('verifier: verifier.server.host "0.0.0.0" is beyond loopback without TLS');
    expect(message).toContain(
      "give verifier.server.tls.cert_file and verifier.server.tls.key_file (PEM), or set verifier.server.allow_plaintext=true",
    );
    expect(message).toContain('reward: reward.server.host "10.1.2.3"');
    for (const accepted of ["inference", "learner", "orchestrator"]) expect(message).not.toContain(`${accepted}:`);
  });

  it("names the keys without a prefix for one service, and refuses a certificate that cannot serve", () => {
    expect(() => requireMeshExposure([{ service: "verifier", keyPrefix: "", server: server("0.0.0.0") }])).toThrow(
      "give server.tls.cert_file and server.tls.key_file",
    );
    const missing = { cert_file: path.join(dir, "absent.crt"), key_file: loopback.key };
    expect(() => requireMeshExposure([{ service: "reward", keyPrefix: "reward.", server: server("127.0.0.1", { tls: missing }) }])).toThrow(
      /reward: reward\.server\.tls\.cert_file ".*absent\.crt" cannot be read \(ENOENT\)/,
    );
    const mismatched = { cert_file: loopback.cert, key_file: namedOnly.key };
    expect(() => requireMeshExposure([{ service: "reward", keyPrefix: "", server: server("0.0.0.0", { tls: mismatched }) }])).toThrow(
      /server\.tls\.cert_file .* and server\.tls\.key_file .* are not a PEM certificate and its key/,
    );
  });
});

describe("dialHost", () => {
  it("dials a TLS server bound to every interface at a loopback name its certificate holds", () => {
    expect(dialHost(server("0.0.0.0", { tls: tls(loopback) }))).toBe("127.0.0.1");
    expect(dialHost(server("0.0.0.0", { tls: tls(selfSigned) }))).toBe("localhost");
    expect(dialHost(server("0.0.0.0", { tls: tls(namedOnly) }))).toBe("0.0.0.0");
    expect(dialHost(server("0.0.0.0"))).toBe("0.0.0.0");
    expect(dialHost(server("mesh.example", { tls: tls(namedOnly) }))).toBe("mesh.example");
  });
});

describe("servernameFor", () => {
  it("names the certificate's first DNS name where the dial host is not among its names", () => {
    expect(servernameFor(server("127.0.0.1", { tls: tls(namedOnly) }))).toBe("mesh.example");
    expect(servernameFor(server("127.0.0.1", { tls: tls(loopback) }))).toBeUndefined();
    expect(servernameFor(server("0.0.0.0", { tls: tls(loopback) }))).toBeUndefined();
    expect(servernameFor(server("127.0.0.1"))).toBeUndefined();
  });
});

describe("requireTrustedInProcess", () => {
  it("refuses a certificate this process would not trust, or that does not name the host it is dialled at", async () => {
    // This process trusts neither test CA (NODE_EXTRA_CA_CERTS is read at start).
    await expect(
      requireTrustedInProcess([{ service: "verifier", keyPrefix: "verifier.", server: server("0.0.0.0", { tls: tls(selfSigned) }) }]),
    ).rejects.toThrow(/verifier: this mesh's own clients would refuse verifier\.server\.tls\.cert_file .*self-signed.*NODE_EXTRA_CA_CERTS/);
    await expect(
      requireTrustedInProcess([{ service: "reward", keyPrefix: "", server: server("0.0.0.0", { tls: tls(namedOnly) }) }]),
    ).rejects.toThrow(
      /reward: this mesh's own clients dial it at 0\.0\.0\.0, which server\.tls\.cert_file ".*" does not name \(it names mesh\.example\); the certificate must name 0\.0\.0\.0 \(bound to every interface: or 127\.0\.0\.1, or localhost\)/,
    );
    await expect(requireTrustedInProcess([{ service: "learner", keyPrefix: "", server: server("0.0.0.0") }])).resolves.toBeUndefined();
  });
});

describe("describeMeshTls", () => {
  it("tells clients the names the certificate holds and the file to trust: the CA that issued it, or the certificate itself", () => {
    const leaf = (file: string) => new X509Certificate(readFileSync(file));
    expect(trustedFile(leaf(loopback.cert), loopback.cert, { NODE_EXTRA_CA_CERTS: loopback.ca })).toBe(loopback.ca);
    expect(trustedFile(leaf(loopback.cert), loopback.cert, { NODE_EXTRA_CA_CERTS: namedOnly.ca })).toBeUndefined();
    expect(trustedFile(leaf(selfSigned.cert), selfSigned.cert, {})).toBe(selfSigned.cert);

    const [line] = describeMeshTls(
      [
        { service: "inference", server: server("0.0.0.0", { tls: tls(loopback) }) },
        { service: "verifier", server: server("0.0.0.0", { tls: tls(loopback) }) },
        { service: "reward", server: server("127.0.0.1") },
      ],
      { NODE_EXTRA_CA_CERTS: loopback.ca },
    );
    expect(line).toContain("tls    on (inference, verifier): clients dial https:// at a name the certificate holds (127.0.0.1, localhost)");
    expect(line).toContain(`grpcurl -cacert ${loopback.ca}`);
    expect(line).toContain(`buf curl --http2-prior-knowledge --cacert ${loopback.ca}`);
    expect(line).toContain(`NODE_EXTRA_CA_CERTS=${loopback.ca}`);
    expect(line).toContain(`grpc.ssl_channel_credentials(open("${loopback.ca}", "rb").read())`);
    const [unknownCa] = describeMeshTls([{ service: "learner", server: server("0.0.0.0", { tls: tls(namedOnly) }) }], {});
    expect(unknownCa).toContain("trust the CA that issued it (CN=test CA)");
    expect(describeMeshTls([{ service: "learner", server: server("127.0.0.1") }])).toEqual([]);
  });
});

describe("planTopology with TLS", () => {
  it("dials a replica that serves TLS at https://, in the plan and in its callers' URLs, with the server section it will read", () => {
    const certificate = `server.tls.cert_file=${loopback.cert}`;
    const key = `server.tls.key_file=${loopback.key}`;
    const topology = TopologySchema.parse({
      host: "0.0.0.0",
      base_port: 50400,
      services: {
        verifier: { replicas: 2, overrides: [certificate, key] },
        // The topology's own placeholder, expanded by planTopology.
        reward: { replicas: 1, overrides: [`verifier.url=$\{urls.verifier}`, "server.allow_plaintext=true"] },
      },
    });
    const plan = planTopology(topology, {});
    expect(plan.map((r) => r.url)).toEqual(["https://127.0.0.1:50400", "https://127.0.0.1:50401", "http://0.0.0.0:50402"]);
    const reward = plan.find((r) => r.service === "reward")!;
    expect(loadConfig(RewardConfigSchema, { overrides: reward.args.filter((a) => a.includes("=")) }).verifier.url).toEqual([
      "https://127.0.0.1:50400",
      "https://127.0.0.1:50401",
    ]);
    expect(plan[0]!.server.tls).toEqual({ cert_file: loopback.cert, key_file: loopback.key });
    expect(reward.server.allow_plaintext).toBe(true);
    // Read as the replica will: its LEANGRPO_<SERVICE>_ variables count.
    const fromEnv = planTopology(TopologySchema.parse({ host: "0.0.0.0", services: { learner: { replicas: 1 } } }), {
      LEANGRPO_LEARNER_SERVER__TLS__CERT_FILE: loopback.cert,
      LEANGRPO_LEARNER_SERVER__TLS__KEY_FILE: loopback.key,
    });
    expect(fromEnv[0]!.url).toBe("https://127.0.0.1:50100");
  });
});
