// Exponential backoff with full jitter between retries
// (https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/):
// spreading retries at random keeps N clients that failed together from
// hammering the surviving replicas in lockstep.
import { Code, ConnectError } from "@connectrpc/connect";

export interface RetryOptions {
  /** Attempts in all, the first one included. Default 4. */
  maxAttempts?: number;
  /** Ceiling of the first wait. Default 50 ms. */
  initialBackoffMs?: number;
  /** Cap of the ceiling. Default 2000 ms. */
  maxBackoffMs?: number;
  /** Growth of the ceiling per attempt. Default 2. */
  multiplier?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export function retryPolicy(options: RetryOptions = {}): RetryPolicy {
  const policy = {
    maxAttempts: options.maxAttempts ?? 4,
    initialBackoffMs: options.initialBackoffMs ?? 50,
    maxBackoffMs: options.maxBackoffMs ?? 2000,
    multiplier: options.multiplier ?? 2,
  };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) {
    throw new Error(`retry.maxAttempts must be an integer >= 1, got ${policy.maxAttempts}`);
  }
  if (!(policy.initialBackoffMs >= 0 && policy.maxBackoffMs >= policy.initialBackoffMs && policy.multiplier >= 1)) {
    throw new Error(`retry needs 0 <= initialBackoffMs <= maxBackoffMs and multiplier >= 1, got ${JSON.stringify(policy)}`);
  }
  return policy;
}

/** Upper bound of the wait after failed attempt number `attempt` (1-based). */
export function backoffCeilingMs(attempt: number, policy: RetryPolicy): number {
  return Math.min(policy.maxBackoffMs, policy.initialBackoffMs * policy.multiplier ** (attempt - 1));
}

/** A wait drawn uniformly from [0, ceiling). */
export function fullJitter(ceilingMs: number, random: () => number = Math.random): number {
  return Math.floor(random() * ceilingMs);
}

/** Waits `ms`, rejecting with CANCELED as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(ConnectError.from(signal.reason, Code.Canceled));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(ConnectError.from(signal!.reason, Code.Canceled));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
