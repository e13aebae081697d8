// `serve all --topology` with 3 verifier replicas (real processes, each with a Lean
// REPL stand-in): one client, as the orchestrator's, spreads its calls over them
// within ±10 %, and killing a replica mid-run loses no call.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { LeanVerifierService, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { createServiceClient, type ServiceClient } from "@lean-grpo/kit";
import { loadTopology, planTopology } from "../../src/mesh/topology.js";
import { runTopology, type RunningTopology } from "../../src/mesh/topology-runner.js";
import { repoRoot } from "../../../../tests/support/interop-verifier.js";

const THEOREM = { name: "two_eq", statement: "theorem two_eq : 1 + 1 = 2", imports: [] };

let topology: RunningTopology;
let verifiers: ServiceClient<typeof LeanVerifierService>;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "topology-"));
  // The stand-in proves the theorem with standard axioms only.
  const rules = join(dir, "rules.json");
  writeFileSync(rules, JSON.stringify({ rules: [{ when: { cmd: { includes: "theorem two_eq" } }, declares: { axioms: ["propext"] } }] }));
  const replCommand = [process.execPath, "--import", "tsx", `${repoRoot}tests/fakes/lean-repl/main.ts`, "--rules", rules];
  const file = join(dir, "topology.yaml");
  writeFileSync(
    file,
    [
      "base_port: 50300",
      "services:",
      "  verifier:",
      "    replicas: 3",
      "    overrides:",
      `      - 'repl.command=${JSON.stringify(replCommand)}'`,
      "      - repl.pool_size=1",
      "      - repl.sandbox.mode=none",
      // The topology, not the verdict, is under test here.
      "      - repl.replay=off",
      "      - server.shutdown.drain_delay_ms=0",
    ].join("\n"),
  );
  topology = await runTopology(planTopology(loadTopology(file)));
  verifiers = createServiceClient(LeanVerifierService, {
    endpoints: topology.replicas.map((r) => r.url),
    defaultTimeoutMs: 20_000,
  });
}, 90_000);

afterAll(async () => {
  verifiers?.transport.close();
  await topology?.stop();
});

/** Requests each replica served, from its own PoolStats. */
async function servedPerReplica(): Promise<number[]> {
  return Promise.all(
    topology.replicas.map(async (replica) => {
      const stats = await createClient(LeanVerifierService, createGrpcTransport({ baseUrl: replica.url })).poolStats({});
      return Object.values(stats.verdicts).reduce((a, b) => a + Number(b), 0);
    }),
  );
}

async function verifyMany(count: number, concurrency: number, onProgress?: (done: number) => void): Promise<Verdict[]> {
  const verdicts: Verdict[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        const res = await verifiers.client.verify({ theorem: THEOREM, proof: "by decide" });
        verdicts.push(res.verdict);
        onProgress?.(verdicts.length);
      }
    }),
  );
  return verdicts;
}

describe("a topology of 3 verifier replicas", () => {
  it("spreads one client's calls over the replicas within ±10 %", async () => {
    const before = await servedPerReplica();
    const verdicts = await verifyMany(150, 6);
    expect(verdicts.filter((v) => v === Verdict.PROVED)).toHaveLength(150);
    const after = await servedPerReplica();
    const served = after.map((n, i) => n - before[i]!);
    expect(served.reduce((a, b) => a + b, 0)).toBe(150);
    for (const n of served) {
      expect(n).toBeGreaterThanOrEqual(45);
      expect(n).toBeLessThanOrEqual(55);
    }
  }, 60_000);

  it("loses no call when a replica is killed mid-run", async () => {
    const victim = topology.replicas[1]!;
    let killed: Promise<void> | undefined;
    const verdicts = await verifyMany(120, 6, (done) => {
      if (done === 40) killed = victim.kill("SIGKILL");
    });
    await killed;
    expect(verdicts).toHaveLength(120);
    expect(verdicts.every((v) => v === Verdict.PROVED)).toBe(true);
    expect(victim.pid()).toBeDefined();
  }, 60_000);
});
