// Caps the calls a service runs at once. Beyond the cap a call fails fast with
// RESOURCE_EXHAUSTED instead of queueing, so callers (and their balancers) can
// back off or try another replica.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

export interface ConcurrencyLimitOptions {
  /** Calls in flight per service; 0 disables the limit. */
  maxConcurrentCalls: number;
  /** Services the limit does not apply to (health, reflection). */
  exemptServices?: ReadonlySet<string>;
}

export interface ConcurrencyLimit {
  interceptor: Interceptor;
  /** Calls currently in flight for a service. */
  inFlight(service: string): number;
}

export function createConcurrencyLimit(options: ConcurrencyLimitOptions): ConcurrencyLimit {
  const counts = new Map<string, number>();
  const interceptor: Interceptor = (next) => async (req) => {
    const service = req.service.typeName;
    if (options.maxConcurrentCalls <= 0 || options.exemptServices?.has(service)) return next(req);
    const current = counts.get(service) ?? 0;
    if (current >= options.maxConcurrentCalls) {
      throw new ConnectError(
        `${service} is running its maximum of ${options.maxConcurrentCalls} concurrent calls; retry later or on another replica`,
        Code.ResourceExhausted,
      );
    }
    counts.set(service, current + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      counts.set(service, (counts.get(service) ?? 1) - 1);
    };
    // The call's signal fires when it completes, fails, or hits its deadline, for
    // unary and streaming calls alike.
    req.signal.addEventListener("abort", release, { once: true });
    try {
      const res = await next(req);
      if (!res.stream) release();
      return res;
    } catch (error) {
      release();
      throw error;
    }
  };
  return { interceptor, inFlight: (service) => counts.get(service) ?? 0 };
}
