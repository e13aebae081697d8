import { promises as dns } from "node:dns";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import type { BalancedTransport } from "./balanced-transport.js";
import { createServiceClient, type ServiceClient } from "./create-service-client.js";
import { endpointUrl, parseDnsTarget } from "./dns-resolver.js";
import { startReplica, type InferenceImpl, type Replica } from "../../test/support/replicas.js";
import { issueTestCertificate } from "../../../../tests/support/test-certificate.js";

let replicas: Replica[] = [];
let clients: ServiceClient<typeof InferenceService>[] = [];

afterEach(async () => {
  for (const { transport } of clients) transport.close();
  await Promise.all(replicas.map((r) => r.kill()));
  replicas = [];
  clients = [];
});

/** One replica per loopback address `localhost` has, all on the same port. */
async function startOnEveryLocalhostAddress(addresses: string[]): Promise<Replica[]> {
  for (let tries = 0; tries < 5; tries++) {
    const first = await startReplica(addresses[0]!, undefined, addresses[0]);
    const started = [first];
    try {
      for (const address of addresses.slice(1)) started.push(await startReplica(address, undefined, address, first.port));
      return started;
    } catch {
      // The port was free on the first address only: try another one.
      await Promise.all(started.map((r) => r.kill()));
    }
  }
  throw new Error(`no common free port on ${addresses.join(", ")}`);
}

describe("parseDnsTarget", () => {
  it("reads host and port, with or without an authority or IPv6 brackets", () => {
    expect(parseDnsTarget("dns:///inference:50051")).toEqual({ host: "inference", port: 50051, tls: false });
    expect(parseDnsTarget("dns://8.8.8.8/inference.svc:443")).toEqual({ host: "inference.svc", port: 443, tls: false });
    expect(parseDnsTarget("dns:///[::1]:7")).toEqual({ host: "::1", port: 7, tls: false });
    expect(parseDnsTarget("dns+https:///verifier:50052")).toEqual({ host: "verifier", port: 50052, tls: true });
  });

  it("rejects targets it cannot read", () => {
    for (const target of [
      "inference:50051",
      "dns:///inference",
      "dns:///inference:0",
      "dns:///inference:70000",
      "dns+http:///a:1",
      "https+dns:///a:1",
    ]) {
      expect(() => parseDnsTarget(target), target).toThrow(/dns:\/\/\/host:port/);
    }
  });

  it("brackets IPv6 addresses in endpoint URLs", () => {
    expect(endpointUrl("::1", 50051)).toBe("http://[::1]:50051");
    expect(endpointUrl("127.0.0.1", 50051)).toBe("http://127.0.0.1:50051");
    expect(endpointUrl("::1", 50051, true)).toBe("https://[::1]:50051");
  });
});

describe("dns:/// targets", () => {
  it("spreads calls over every address localhost resolves to", async () => {
    const addresses = [...new Set((await dns.lookup("localhost", { all: true })).map((a) => a.address))];
    replicas = await startOnEveryLocalhostAddress(addresses);
    const made = createServiceClient(InferenceService, { target: `dns:///localhost:${replicas[0]!.port}` });
    clients.push(made);

    const served = await Promise.all(Array.from({ length: 10 }, () => made.client.tokenize({})));

    expect(made.transport.endpoints().sort()).toEqual(replicas.map((r) => r.url).sort());
    expect(new Set(served.map((r) => r.templatedText))).toEqual(new Set(addresses));
  });

  it("re-resolves right after an UNAVAILABLE", async () => {
    let failNext = true;
    const restarting: InferenceImpl = {
      tokenize() {
        if (failNext) {
          failNext = false;
          throw new ConnectError("restarting", Code.Unavailable);
        }
        return { templatedText: "ok" };
      },
    };
    replicas = [await startReplica("r0", restarting)];
    const lookup = vi.fn(async () => ["127.0.0.1"]);
    const made = createServiceClient(InferenceService, {
      target: `dns:///replicas.test:${replicas[0]!.port}`,
      lookup,
      dnsRefreshMs: 60_000,
      retry: { initialBackoffMs: 5 },
    });
    clients.push(made);

    expect((await made.client.tokenize({})).templatedText).toBe("ok");
    expect(lookup.mock.calls).toEqual([["replicas.test"], ["replicas.test"]]); // at start, then after the failure
  });

  it("re-resolves on its timer, keeping the last list when a lookup fails", async () => {
    const answers: (string[] | Error)[] = [["127.0.0.1"], new Error("SERVFAIL"), ["127.0.0.1", "::1"]];
    const listsSeenByLookup: string[][] = [];
    let transport: BalancedTransport | undefined;
    let calls = 0;
    const lookup = async () => {
      listsSeenByLookup.push(transport?.endpoints() ?? []);
      const answer = answers[Math.min(calls++, answers.length - 1)]!;
      if (answer instanceof Error) throw answer;
      return answer;
    };
    const made = createServiceClient(InferenceService, { target: "dns:///replicas.test:50051", lookup, dnsRefreshMs: 20 });
    clients.push(made);
    transport = made.transport;

    await vi.waitFor(() => expect(transport!.endpoints()).toEqual(["http://127.0.0.1:50051", "http://[::1]:50051"]));
    // The third lookup ran after the failed second one, which kept the first list.
    expect(listsSeenByLookup[2]).toEqual(["http://127.0.0.1:50051"]);
  });

  it("fails with UNAVAILABLE when the name never resolves", async () => {
    const lookup = vi.fn(async () => {
      throw new Error("getaddrinfo ENOTFOUND nowhere.test");
    });
    const made = createServiceClient(InferenceService, {
      target: "dns:///nowhere.test:50051",
      lookup,
      retry: { maxAttempts: 3, initialBackoffMs: 1 },
    });
    clients.push(made);

    await expect(made.client.tokenize({})).rejects.toMatchObject({ code: Code.Unavailable, message: /ENOTFOUND/ });
    expect(lookup.mock.calls.length).toBeGreaterThanOrEqual(3);
  });
});

describe("dns+https:/// targets", () => {
  // A headless Service's name resolves to pod addresses; each pod's certificate names the Service.
  const named = issueTestCertificate(["replicas.test"]);

  it("dials every address over TLS and checks each certificate for the name, not the address", async () => {
    const first = await startReplica("r0", undefined, "127.0.0.1", 0, named);
    replicas = [first, await startReplica("r1", undefined, "127.0.0.2", first.port, named)];
    const made = createServiceClient(InferenceService, {
      target: `dns+https:///replicas.test:${first.port}`,
      lookup: async () => ["127.0.0.1", "127.0.0.2"],
      ca: named.ca,
    });
    clients.push(made);

    const served = await Promise.all(Array.from({ length: 6 }, () => made.client.tokenize({})));

    expect(made.transport.endpoints()).toEqual([`https://127.0.0.1:${first.port}`, `https://127.0.0.2:${first.port}`]);
    expect(new Set(served.map((r) => r.templatedText))).toEqual(new Set(["r0", "r1"]));
  });

  it("refuses a replica whose certificate names another host, and one signed by a CA it does not trust", async () => {
    const other = issueTestCertificate(["elsewhere.test"]);
    replicas = [await startReplica("impostor", undefined, "127.0.0.1", 0, other)];
    const wrongName = createServiceClient(InferenceService, {
      target: `dns+https:///replicas.test:${replicas[0]!.port}`,
      lookup: async () => ["127.0.0.1"],
      ca: other.ca,
      retry: { maxAttempts: 1 },
    });
    const untrusted = createServiceClient(InferenceService, {
      target: `dns+https:///elsewhere.test:${replicas[0]!.port}`,
      lookup: async () => ["127.0.0.1"],
      ca: named.ca,
      retry: { maxAttempts: 1 },
    });
    clients.push(wrongName, untrusted);

    // connect-node reports a failed TLS handshake as INTERNAL, with Node's reason.
    await expect(wrongName.client.tokenize({})).rejects.toThrow(/Hostname\/IP does not match certificate's altnames: Host: replicas\.test/);
    await expect(untrusted.client.tokenize({})).rejects.toThrow(
      /unable to verify the first certificate|self-signed|unable to get local issuer/,
    );
  });
});
