// serve() with TLS: the same services and protocols, over h2 with ALPN.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { once } from "node:events";
import { connect as connectTls } from "node:tls";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { LeanVerifierService, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { serve, serviceRegistration, type RunningServer } from "../src/server/serve.js";
import { issueTestCertificate, writeTestCertificate } from "../../../tests/support/test-certificate.js";

let server: RunningServer;
let ca: Buffer;

/** A certificate for localhost and 127.0.0.1, and the authority a client trusts. */
async function tlsFiles() {
  const files = writeTestCertificate(mkdtempSync(join(tmpdir(), "kit-tls-")), issueTestCertificate(["localhost", "127.0.0.1"]));
  return { ca: readFileSync(files.ca), config: { cert_file: files.cert, key_file: files.key } };
}

beforeAll(async () => {
  const files = await tlsFiles();
  ca = files.ca;
  server = await serve({
    name: "tls-test",
    services: [serviceRegistration(LeanVerifierService, { verify: (req) => ({ verdict: Verdict.PROVED, reason: req.proof }) })],
    config: { tls: files.config, shutdown: { drain_delay_ms: 0, grace_period_ms: 1_000 } },
  });
});
afterAll(() => server?.shutdown());

describe("serve() with TLS", () => {
  it("reports an https URL and answers gRPC and Connect over TLS", async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const grpc = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: server.url, nodeOptions: { ca } }));
    expect((await grpc.verify({ proof: "over tls" })).reason).toBe("over tls");
    const connect = createClient(Health, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", nodeOptions: { ca } }));
    expect((await connect.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it("negotiates HTTP/2 with a client that offers both (browsers, buf curl), HTTP/1.1 with one that offers only that", async () => {
    const negotiated = async (offered: string[]) => {
      const { port } = new URL(server.url);
      const socket = connectTls({ host: "127.0.0.1", port: Number(port), ca, servername: "localhost", ALPNProtocols: offered });
      try {
        await once(socket, "secureConnect");
        return socket.alpnProtocol;
      } finally {
        socket.destroy();
      }
    };
    expect(await negotiated(["h2", "http/1.1"])).toBe("h2");
    expect(await negotiated(["http/1.1", "h2"])).toBe("h2");
    expect(await negotiated(["http/1.1"])).toBe("http/1.1");
    // And Connect is answered on the HTTP/2 a browser gets.
    const connect = createClient(Health, createConnectTransport({ baseUrl: server.url, httpVersion: "2", nodeOptions: { ca } }));
    expect((await connect.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it("refuses a client that does not trust the certificate", async () => {
    const untrusting = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: server.url }));
    const error = await untrusting.verify({ proof: "x" }).catch((e) => ConnectError.from(e));
    expect(error).toBeInstanceOf(ConnectError);
    // connect-node's client reports the failed handshake as INTERNAL with the TLS reason.
    expect((error as ConnectError).rawMessage).toMatch(/certificate/i);
  });
});

describe("a server beyond loopback", () => {
  const base = { services: [], config: { shutdown: { drain_delay_ms: 0, grace_period_ms: 100 } } };

  it("does not start without a token", async () => {
    await expect(serve({ ...base, name: "exposed", config: { ...base.config, host: "0.0.0.0" } })).rejects.toThrow(
      'server.host "0.0.0.0" is beyond loopback and no token is set',
    );
  });

  it("does not start without TLS, saying how to give a certificate or to trust the network", async () => {
    const start = serve({ ...base, name: "exposed", config: { ...base.config, host: "0.0.0.0", auth: { token: "t" } } });
    await expect(start).rejects.toThrow(/beyond loopback without TLS, so the token would cross the network in clear text/);
    await expect(start).rejects.toThrow(/server\.tls\.cert_file .* server\.allow_plaintext: true/);
  });

  it("starts with allow_plaintext, or with TLS", async () => {
    const plain = await serve({
      ...base,
      name: "exposed",
      config: { ...base.config, host: "0.0.0.0", auth: { token: "t" }, allow_plaintext: true },
    });
    await plain.shutdown();
    const secure = await serve({
      ...base,
      name: "exposed",
      config: { ...base.config, host: "0.0.0.0", auth: { token: "t" }, tls: (await tlsFiles()).config },
    });
    await secure.shutdown();
  });
});
