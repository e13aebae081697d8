// StartRun's checks call every service before a run is accepted. A service that cannot be
// reached (down, or its packets dropped) must fail the StartRun within seconds, naming the
// service, and a caller that gives up must stop the checks: otherwise the one-run slot stays
// taken and every other StartRun is refused meanwhile. `boundClient` gives each call the
// StartRun's signal (the deadline is the client's defaultTimeoutMs) and names the service
// in what a call that could not get through throws.
import { Code, ConnectError, type CallOptions } from "@connectrpc/connect";

export interface StartCallBounds {
  /** Each check's deadline, ms (start_deadline_ms). */
  deadlineMs: number;
  /** Aborted when StartRun's caller cancels or its own deadline passes. */
  signal?: AbortSignal | undefined;
}

type AnyMethod = (request: unknown, options?: CallOptions) => unknown;

/** `client` with every call tied to `bounds.signal`, failures to get through naming `service` at `target`. */
export function boundClient<C extends object>(client: C, service: string, target: string, bounds: StartCallBounds): C {
  const explain = (error: unknown): unknown => {
    if (bounds.signal?.aborted)
      return new ConnectError(`StartRun was cancelled by its caller while checking the ${service} service`, Code.Canceled);
    const err = ConnectError.from(error);
    // UNAVAILABLE (refused, reset) is left to the run's bounded retries, which name the service too.
    if (err.code === Code.DeadlineExceeded)
      return new ConnectError(
        `StartRun could not reach the ${service} service at ${target} within start_deadline_ms (${bounds.deadlineMs} ms): ${err.rawMessage}`,
        Code.DeadlineExceeded,
      );
    return error;
  };
  const bound: Record<string, AnyMethod> = {};
  for (const [name, method] of Object.entries(client as Record<string, AnyMethod>)) {
    bound[name] = (request, options = {}) => {
      const signal = bounds.signal && options.signal ? AbortSignal.any([options.signal, bounds.signal]) : (options.signal ?? bounds.signal);
      const result = method(request, { ...options, signal });
      return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(explain(error))) : result;
    };
  }
  return bound as C;
}
