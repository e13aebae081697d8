// PoolStats and the Prometheus endpoint report the same pool; headers are cached
// per worker (LRU) and requests go to a worker that holds theirs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { standIn, type Rule, type StandIn } from "./support/stand-in.js";
import { startVerifier, type Harness } from "./support/verifier-harness.js";

const rules: Rule[] = [
  { when: { cmd: { includes: "by trivial" } }, declares: { axioms: [] } },
  { when: { cmd: { includes: "by wrong" } }, reply: { transcript: "dup_msg", response: 2 } },
];
const withHeader = (header: string) => ({ theorem: { name: "t", statement: "theorem t : True", header }, proof: "by trivial" });

describe("PoolStats and /metrics", () => {
  let repl: StandIn;
  let harness: Harness;
  beforeAll(async () => {
    repl = standIn({ rules });
    harness = await startVerifier({
      repl: { command: repl.command, pool_size: 2, queue_capacity: 7, memory_sample_ms: 50 },
      metrics: { port: 0 },
    });
  });
  afterAll(async () => {
    await harness.close();
    repl.cleanup();
  });

  it("reports workers, headers, verdicts, latency and each worker", async () => {
    for (const header of ["import A", "import B", "import A", "import B"]) {
      expect((await harness.client.verify(withHeader(header))).verdict).toBe(Verdict.PROVED);
    }
    expect((await harness.client.verify({ ...withHeader("import A"), proof: "by wrong" })).verdict).toBe(Verdict.ERROR);
    await new Promise((resolve) => setTimeout(resolve, 120)); // a memory sample
    const stats = await harness.client.poolStats({});
    expect(stats).toMatchObject({ workers: 2, busy: 0, queueDepth: 0, queueCapacity: 7, headersCached: 2 });
    expect(stats.verdicts).toEqual({ PROVED: 4n, ERROR: 1n });
    expect(stats.latencyP50Ms).toBeGreaterThan(0);
    expect(stats.latencyP99Ms).toBeGreaterThanOrEqual(stats.latencyP50Ms);
    expect(stats.workerStats).toHaveLength(2);
    for (const worker of stats.workerStats) {
      expect(worker.pid).toBeGreaterThan(0);
      expect(worker.state).toBe("idle");
      expect(worker.rssBytes).toBeGreaterThan(10_000_000n);
    }
    expect(stats.workerStats.reduce((sum, worker) => sum + worker.requests, 0n)).toBe(5n);
  });

  it("elaborates each header once, on the worker that then serves it", () => {
    const logged = repl.requests();
    const headers = logged.filter((l) => l.request.kind === "command" && l.request.env === undefined);
    expect(headers.map((l) => (l.request.kind === "command" ? l.request.cmd : "")).sort()).toEqual(["import A", "import B"]);
    const pidOf = new Map(headers.map((l) => [l.request.kind === "command" ? l.request.cmd : "", l.pid]));
    // The verifier's own questions (#print axioms, the token-table #eval) are not proofs.
    const proofs = logged.filter((l) => l.request.kind === "command" && l.request.env !== undefined && !l.request.cmd.startsWith("#"));
    // Proofs 0 and 2 had header A, 1 and 3 header B.
    expect(proofs.slice(0, 4).map((l) => l.pid)).toEqual([
      pidOf.get("import A"),
      pidOf.get("import B"),
      pidOf.get("import A"),
      pidOf.get("import B"),
    ]);
  });

  it("serves the same numbers as Prometheus text on GET /metrics", async () => {
    const url = await harness.service.metricsUrl();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const response = await fetch(url!);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain");
    const text = await response.text();
    for (const line of [
      "leangrpo_verifier_workers 2",
      "leangrpo_verifier_workers_busy 0",
      "leangrpo_verifier_queue_depth 0",
      "leangrpo_verifier_queue_capacity 7",
      "leangrpo_verifier_headers_cached 2",
      "leangrpo_verifier_tactic_sessions 0",
      'leangrpo_verifier_verdicts_total{verdict="PROVED"} 4',
      'leangrpo_verifier_verdicts_total{verdict="ERROR"} 1',
      "leangrpo_verifier_verify_duration_seconds_count 5",
    ]) {
      expect(text.split("\n"), line).toContain(line);
    }
    expect(text).toMatch(/^leangrpo_verifier_verify_duration_seconds\{quantile="0\.5"\} [\d.e-]+$/m);
    expect(text).toMatch(/^leangrpo_verifier_worker_resident_bytes\{worker="0"\} \d+$/m);
    expect((await fetch(url!.replace("/metrics", "/other"))).status).toBe(404);
  });
});

describe("header cache", () => {
  it("keeps at most repl.header_cache_size headers per worker, least recently used out", async () => {
    const repl = standIn({ rules });
    const harness = await startVerifier({ repl: { command: repl.command, header_cache_size: 2 } });
    try {
      for (const header of ["import A", "import B", "import A", "import C", "import B"]) {
        await harness.client.verify(withHeader(header));
      }
      const headers = repl
        .requests()
        .filter((l) => l.request.kind === "command" && l.request.env === undefined)
        .map((l) => (l.request.kind === "command" ? l.request.cmd : ""));
      // A, B; A is cached; C evicts B (A was used more recently); B again.
      expect(headers).toEqual(["import A", "import B", "import C", "import B"]);
      expect((await harness.client.poolStats({})).workerStats[0]!.headers).toEqual(["import C", "import B"]);
    } finally {
      await harness.close();
      repl.cleanup();
    }
  });
});
