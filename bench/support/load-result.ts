// What a closed-loop load process reports for one concurrency level (bench/rpc, bench/verifier):
// its calls, errors, throughput and latency percentiles, as one JSON line to the parent.
import { percentile } from "./percentile.js";

export interface LoadResult {
  concurrency: number;
  calls: number;
  errors: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** The summary of one measured phase; `latencies` must be sorted ascending. */
export function loadResult(concurrency: number, latencies: readonly number[], errors: number, elapsedMs: number): LoadResult {
  return {
    concurrency,
    calls: latencies.length,
    errors,
    callsPerSecond: latencies.length / (elapsedMs / 1000),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}
