// The verifier's Prometheus metrics (prom-client), in a registry of its own so that
// several services (or tests) in one process do not collide. Pool gauges and
// restart counts are read from the pool when scraped; verdicts and latencies are
// recorded as requests finish. PoolStats reads the same numbers.
import { Counter, Gauge, Registry, Summary } from "prom-client";
import type { PoolSnapshot } from "../pool/repl-pool.js";
import type { ReplayCounts } from "../replay/replay-checker.js";

export interface MetricsSources {
  /** The pool's state; undefined when no REPL is configured. */
  pool(): PoolSnapshot | undefined;
  /** Live tactic-mode sessions. */
  sessions(): number;
  /** The replay tier's counts; undefined when it is off. */
  replay?(): ReplayCounts | undefined;
}

export interface LatencyPercentiles {
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
}

const PREFIX = "leangrpo_verifier_";

export class VerifierMetrics {
  readonly registry = new Registry();
  private readonly verdicts = new Map<string, number>();
  private readonly latency: Summary;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    const poolGauge = (name: string, help: string, read: (pool: PoolSnapshot) => number) =>
      new Gauge({
        name: PREFIX + name,
        help,
        registers,
        collect() {
          this.set(read(sources.pool() ?? EMPTY_POOL));
        },
      });
    poolGauge("workers", "REPL worker processes configured", (pool) => pool.workers);
    poolGauge("workers_busy", "REPL workers checking a request", (pool) => pool.busy);
    poolGauge("queue_depth", "Requests waiting for a REPL worker", (pool) => pool.queueDepth);
    poolGauge("queue_capacity", "Requests that may wait before RESOURCE_EXHAUSTED", (pool) => pool.queueCapacity);
    poolGauge("headers_cached", "Distinct headers elaborated over all workers", (pool) => pool.headersCached);
    new Gauge({
      name: `${PREFIX}tactic_sessions`,
      help: "Live tactic-mode sessions",
      registers,
      collect() {
        this.set(sources.sessions());
      },
    });
    new Gauge({
      name: `${PREFIX}worker_resident_bytes`,
      help: "Resident memory of each REPL worker's process group at the last sample",
      labelNames: ["worker"],
      registers,
      collect() {
        this.reset();
        for (const worker of sources.pool()?.workerStats ?? []) this.set({ worker: String(worker.id) }, worker.rssBytes);
      },
    });
    new Counter({
      name: `${PREFIX}worker_restarts_total`,
      help: "REPL worker restarts by cause: timeout, crash, memory, recycle, cancel",
      labelNames: ["cause"],
      registers,
      collect() {
        // The pool's counts are the source; each scrape re-reads them.
        this.reset();
        for (const [cause, count] of sources.pool()?.restarts ?? []) this.inc({ cause }, count);
      },
    });
    const verdicts = this.verdicts;
    new Counter({
      name: `${PREFIX}verdicts_total`,
      help: "Verify results by verdict",
      labelNames: ["verdict"],
      registers,
      collect() {
        this.reset();
        for (const [verdict, count] of verdicts) this.inc({ verdict }, count);
      },
    });
    new Counter({
      name: `${PREFIX}replays_total`,
      help: "Kernel replays run in a fresh process (repl.replay)",
      registers,
      collect() {
        this.reset();
        this.inc(sources.replay?.()?.replays ?? 0);
      },
    });
    new Counter({
      name: `${PREFIX}replay_refusals_total`,
      help: "Proofs the REPL called PROVED that the kernel replay refused: exploits caught (alert on any increase)",
      registers,
      collect() {
        this.reset();
        this.inc(sources.replay?.()?.refusals ?? 0);
      },
    });
    this.latency = new Summary({
      name: `${PREFIX}verify_duration_seconds`,
      help: "Verify latency as the service saw it (queue, header, Lean), over the last 10 minutes",
      percentiles: [0.5, 0.9, 0.99],
      maxAgeSeconds: 600,
      ageBuckets: 5,
      registers,
    });
  }

  /** Records one finished check. */
  recordVerify(verdict: string, totalMs: number): void {
    this.verdicts.set(verdict, (this.verdicts.get(verdict) ?? 0) + 1);
    this.latency.observe(totalMs / 1000);
  }

  verdictCounts(): ReadonlyMap<string, number> {
    return this.verdicts;
  }

  async latencyPercentiles(): Promise<LatencyPercentiles> {
    const { values } = await this.latency.get();
    const at = (quantile: number) => {
      const value = values.find((v) => v.labels.quantile === quantile)?.value ?? 0;
      // prom-client reports NaN for an empty window.
      return Number.isFinite(value) ? value * 1000 : 0;
    };
    return { p50Ms: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99) };
  }
}

const EMPTY_POOL: PoolSnapshot = {
  workers: 0,
  busy: 0,
  queueDepth: 0,
  queueCapacity: 0,
  headersCached: 0,
  restarts: new Map(),
  workerStats: [],
};
