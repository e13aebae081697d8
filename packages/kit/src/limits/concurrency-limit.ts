// Caps the calls a service runs at once. Beyond the cap a call fails fast with
// RESOURCE_EXHAUSTED instead of queueing, so callers (and their balancers) can
// back off or try another replica. Counted per HTTP/2 stream, from its first
// header to its close: a call whose body is still arriving, a stream that is only
// watching (Health.Watch, WatchRun) and a reflection session all hold a slot.
import { Code, ConnectError } from "@connectrpc/connect";

export interface ConcurrencyLimitOptions {
  /** Calls in flight per service; 0 disables the limit. */
  maxConcurrentCalls: number;
}

export interface ConcurrencyLimit {
  /** Takes a slot for one call to `service`: its release (idempotent), or the error to answer. */
  acquire(service: string): { release: () => void } | { error: ConnectError };
  /** Calls currently in flight for a service. */
  inFlight(service: string): number;
}

export function createConcurrencyLimit(options: ConcurrencyLimitOptions): ConcurrencyLimit {
  const counts = new Map<string, number>();
  const acquire: ConcurrencyLimit["acquire"] = (service) => {
    const current = counts.get(service) ?? 0;
    if (options.maxConcurrentCalls > 0 && current >= options.maxConcurrentCalls) {
      return {
        error: new ConnectError(
          `${service} is running its maximum of ${options.maxConcurrentCalls} concurrent calls (server.limits.max_concurrent_calls); retry later or on another replica`,
          Code.ResourceExhausted,
        ),
      };
    }
    counts.set(service, current + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        counts.set(service, (counts.get(service) ?? 1) - 1);
      },
    };
  };
  return { acquire, inFlight: (service) => counts.get(service) ?? 0 };
}
