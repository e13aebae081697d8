// The proof screen must not hold the event loop that `lean-grpo serve all` answers
// every service's RPCs on. A VerifyBatch of eight 54 KB Aesop proofs (`aesop (add)(add)…
// (add unsafe apply trivial)`, which the screen accepts and once read in quadratic time)
// is screened while Health/Check is asked on every port of the process, over and over:
// every answer must come within 250 ms, and the batch must still be judged. (On a host
// loaded past that, the bound is twice what ports on the process's other threads take
// at the same time: the test tells a held event loop from a busy machine.)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { LeanVerifierService, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { repoRoot } from "../support/interop-verifier.js";
import { MESH_SERVICES, startServeAll, type ServeAllProcess } from "../support/serve-all-process.js";

const STAND_IN = join(repoRoot, "tests/fakes/lean-repl/main.ts");
const LIMIT_MS = 250;

/** A proof the screen accepts: `kb` KiB of empty Aesop clauses, then one with the `unsafe` rule phase. */
const aesopProof = (kb: number) => `by aesop ${"(add)".repeat(Math.floor((kb * 1024) / 5))} (add unsafe apply trivial)`;

let dir: string;
let mesh: ServeAllProcess;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "screen-event-loop-"));
  const rules = join(dir, "rules.json");
  // Every command elaborates cleanly and declares its theorem with no axiom: a batch item is judged PROVED.
  writeFileSync(
    rules,
    JSON.stringify({ rules: [{ when: { cmd: { regex: "^(?!#print axioms)" }, env: "given" }, declares: { axioms: [] } }] }),
  );
  mesh = await startServeAll(
    [
      `verifier.repl.command=${process.execPath} --import tsx ${STAND_IN} --rules ${rules}`,
      `verifier.repl.cwd=${repoRoot}`,
      "verifier.repl.sandbox.mode=none",
      "verifier.repl.replay=off",
      "verifier.repl.memory_limit_mb=0",
      "verifier.repl.pool_size=1",
      `orchestrator.runs_dir=${join(dir, "runs")}`,
    ],
    { ...process.env, LOG_LEVEL: "error" },
  );
}, 120_000);

afterAll(async () => {
  await mesh?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("serve all screening a VerifyBatch of long proofs", () => {
  it(`answers Health/Check on every port within ${LIMIT_MS} ms throughout`, async () => {
    const health = new Map(
      MESH_SERVICES.map((service) => [service, createClient(Health, createGrpcTransport({ baseUrl: mesh.urls.get(service)! }))]),
    );
    const verifier = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: mesh.urls.get("verifier")! }));
    const theorem = { id: "t", name: "", header: "import Mathlib", statement: "theorem t : True", kind: TaskKind.LEAN_PROOF };
    // Warm: connections open, the header elaborated, the screen threads started.
    for (const client of health.values()) await client.check({ service: "" }, { timeoutMs: 10_000 });
    expect((await verifier.verify({ theorem, proof: "by trivial" })).verdict).toBe(Verdict.PROVED);

    /** Health/Check on every port, over and over until `until` settles: the slowest answer per port, and the statuses seen. */
    const probe = async (until: Promise<unknown>) => {
      const slowest = new Map<string, number>();
      const statuses = new Set<string>();
      let done = false;
      void until.finally(() => {
        done = true;
      });
      while (!done) {
        await Promise.all(
          [...health].map(async ([service, client]) => {
            const started = performance.now();
            const { status } = await client.check({ service: "" }, { timeoutMs: 10_000 });
            slowest.set(service, Math.max(slowest.get(service) ?? 0, performance.now() - started));
            statuses.add(HealthCheckResponse_ServingStatus[status]);
          }),
        );
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return { slowest, statuses, worst: Math.max(...slowest.values()) };
    };
    const report = (slowest: Map<string, number>) => [...slowest].map(([service, ms]) => `${service} ${ms.toFixed(0)} ms`).join(", ");

    // The same probes with nothing else to do: what this host's load alone costs a health check.
    const idle = await probe(new Promise((resolve) => setTimeout(resolve, 3_000)));
    const proof = aesopProof(54);
    const verdicts: Verdict[] = [];
    const started = performance.now();
    const batch = (async () => {
      for await (const item of verifier.verifyBatch(
        { items: Array.from({ length: 8 }, () => ({ theorem, proof })) },
        { timeoutMs: 300_000 },
      )) {
        verdicts.push(item.result!.verdict);
      }
    })();
    const during = await probe(batch);
    await batch;
    const batchMs = performance.now() - started;
    expect(verdicts, `batch of ${proof.length} characters × 8 took ${batchMs.toFixed(0)} ms`).toEqual(Array(8).fill(Verdict.PROVED));
    expect([...during.statuses]).toEqual(["SERVING"]);
    // 250 ms — or, on a host so loaded that even a port whose event loop the verifier does not share (the learner's
    // and the sampler's, each in a thread of its own) answers slower, twice what those took then or idle: a held
    // event loop shows as the verifier's, reward's and orchestrator's ports answering late while those do not.
    const otherThreads = Math.max(during.slowest.get("learner") ?? 0, during.slowest.get("inference") ?? 0);
    const limit = Math.max(LIMIT_MS, 2 * idle.worst, 2 * otherThreads);
    expect(
      during.worst,
      `slowest Health/Check per port during the batch: ${report(during.slowest)}; idle: ${report(idle.slowest)}; limit ${limit.toFixed(0)} ms`,
    ).toBeLessThan(limit);
  }, 300_000);
});
