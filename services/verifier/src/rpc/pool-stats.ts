// PoolStats: the pool's state, restarts by cause, verdict counts and recent latency.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { PoolStatsResponseSchema } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { VerifierMetrics } from "../metrics/verifier-metrics.js";
import type { ReplPool } from "../pool/repl-pool.js";
import type { ReplayChecker } from "../replay/replay-checker.js";
import type { ProofSessions } from "../tactic/proof-sessions.js";

export async function poolStats(
  pool: ReplPool | undefined,
  sessions: ProofSessions,
  metrics: VerifierMetrics,
  replay?: ReplayChecker,
): Promise<MessageInitShape<typeof PoolStatsResponseSchema>> {
  const snapshot = pool?.snapshot();
  const latency = await metrics.latencyPercentiles();
  return {
    workers: snapshot?.workers ?? 0,
    busy: snapshot?.busy ?? 0,
    queueDepth: snapshot?.queueDepth ?? 0,
    queueCapacity: snapshot?.queueCapacity ?? 0,
    headersCached: snapshot?.headersCached ?? 0,
    restarts: countsOf(snapshot?.restarts ?? new Map()),
    verdicts: countsOf(metrics.verdictCounts()),
    latencyP50Ms: latency.p50Ms,
    latencyP90Ms: latency.p90Ms,
    latencyP99Ms: latency.p99Ms,
    replays: BigInt(replay?.counts.replays ?? 0),
    replayRefusals: BigInt(replay?.counts.refusals ?? 0),
    tokenTables: pool?.tokenTables.sources() ?? {},
    workerStats: (snapshot?.workerStats ?? []).map((worker) => ({
      id: worker.id,
      pid: worker.pid,
      state: worker.state,
      requests: BigInt(worker.requests),
      rssBytes: BigInt(worker.rssBytes),
      headers: worker.headers,
      sessions: sessions.countOn(worker.id),
    })),
  };
}

function countsOf(counts: ReadonlyMap<string, number>): Record<string, bigint> {
  return Object.fromEntries([...counts].map(([key, count]) => [key, BigInt(count)]));
}
