// Pinned calls over real replicas: every call of an affinity reaches the replica that
// answered its opening call, and a pinned call whose replica is gone fails at once as
// unreachable (isReplicaUnreachable) instead of landing on a replica that does not hold its state.
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { createServiceClient, type ServiceClient } from "./create-service-client.js";
import { isReplicaUnreachable, ReplicaAffinity } from "./replica-affinity.js";
import { startReplica, within, type Replica } from "../../test/support/replicas.js";

const prompt = { kind: { case: "text" as const, value: "theorem foo : 1 + 1 = 2" } };

let replicas: Replica[] = [];
let clients: ServiceClient<typeof InferenceService>[] = [];

afterEach(async () => {
  for (const { transport } of clients) transport.close();
  await Promise.all(replicas.map((r) => r.kill()));
  replicas = [];
  clients = [];
});

async function threeReplicas() {
  replicas = await Promise.all(["r0", "r1", "r2"].map((name) => startReplica(name)));
  const made = createServiceClient(InferenceService, { endpoints: replicas.map((r) => r.url), retry: { initialBackoffMs: 5 } });
  clients.push(made);
  return made;
}

const servedBy = async (call: Promise<{ templatedText: string }>) => (await call).templatedText;

describe("ReplicaAffinity", () => {
  it("sends every pinned call to the replica that answered the opening call", async () => {
    const { client } = await threeReplicas();
    const sessions = Array.from({ length: 4 }, () => new ReplicaAffinity());
    const openedOn: string[] = [];
    for (const affinity of sessions) openedOn.push(await servedBy(client.tokenize({ prompt }, affinity.open())));
    // Round-robin spread the openings; without pins, 3 follow-ups each would too.
    expect(new Set(openedOn).size).toBe(3);
    for (const [i, affinity] of sessions.entries()) {
      expect(affinity.replica).toBe(replicas.find((r) => r.name === openedOn[i])!.url);
      const followUps = await Promise.all(Array.from({ length: 3 }, () => servedBy(client.tokenize({ prompt }, affinity.pinned()))));
      expect(followUps).toEqual([openedOn[i], openedOn[i], openedOn[i]]);
    }
  });

  it("fails a pinned call whose replica died as unreachable, without trying another replica", async () => {
    const { client, transport } = await threeReplicas();
    const affinity = new ReplicaAffinity();
    const name = await servedBy(client.tokenize({ prompt }, affinity.open()));
    const doomed = replicas.find((r) => r.name === name)!;
    await doomed.kill();
    const before = transport.stats();
    const error = await within(
      client.tokenize({ prompt }, affinity.pinned()).then(
        () => undefined,
        (e: unknown) => e,
      ),
      5_000,
    );
    expect(isReplicaUnreachable(error)).toBe(true);
    expect(ConnectError.from(error).code).toBe(Code.Unavailable);
    expect(ConnectError.from(error).rawMessage).toContain(doomed.url);
    // One attempt, on the dead replica only.
    const after = transport.stats();
    for (const replica of replicas) {
      const calls = (after[replica.url]?.calls ?? 0) - (before[replica.url]?.calls ?? 0);
      expect(calls).toBe(replica === doomed ? 1 : 0);
    }
    // A fresh opening call is balanced over the survivors.
    const again = new ReplicaAffinity();
    expect(await servedBy(client.tokenize({ prompt }, again.open()))).not.toBe(name);
  });

  it("fails a pinned call whose replica left the endpoint list, naming the replicas left", async () => {
    replicas = [await startReplica("r0")];
    let addresses = ["127.0.0.1"];
    const made = createServiceClient(InferenceService, {
      target: `dns:///replicas.test:${replicas[0]!.port}`,
      lookup: async () => addresses,
      dnsRefreshMs: 20,
    });
    clients.push(made);
    const affinity = new ReplicaAffinity();
    await made.client.tokenize({ prompt }, affinity.open());
    expect(affinity.replica).toBe(replicas[0]!.url);
    // The name now resolves elsewhere (the pod was replaced): the session's replica is gone.
    addresses = ["127.0.0.9"];
    await within(
      (async () => {
        while (made.transport.endpoints().includes(replicas[0]!.url)) await new Promise((r) => setTimeout(r, 10));
      })(),
      5_000,
    );
    const error = await made.client.tokenize({ prompt }, affinity.pinned()).catch((e: unknown) => e);
    expect(isReplicaUnreachable(error)).toBe(true);
    expect(ConnectError.from(error).rawMessage).toMatch(/no longer among the endpoints: http:\/\/127\.0\.0\.9:/);
  });

  it("leaves calls without an affinity, and pinned calls before any opening, balanced", async () => {
    const { client } = await threeReplicas();
    const unbound = new ReplicaAffinity();
    const served = await Promise.all(Array.from({ length: 6 }, () => servedBy(client.tokenize({ prompt }, unbound.pinned()))));
    expect(new Set(served).size).toBe(3);
    expect(unbound.replica).toBeUndefined();
  });
});
