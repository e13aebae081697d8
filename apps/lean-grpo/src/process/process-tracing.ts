// Tracing of one `lean-grpo` command, set up the same way for train, eval, sft and serve:
// the kit's setupTracing reads OTEL_* (endpoint, headers, service name, OTEL_SDK_DISABLED),
// and the spans still in the batch processor are flushed before the process exits, so a
// command that ends in two seconds still delivers its trace. Service threads and the
// PyTorch learner process trace themselves (service-thread-main.ts; the learner's
// leangrpo_learner/rpc/tracing.py, which inherits these OTEL_* variables).
import { trace } from "@opentelemetry/api";
import { inActiveSpan, setupTracing, type TracingSetup } from "@lean-grpo/kit";

/** How long an exit waits for the collector before giving up on the last spans. */
const FLUSH_TIMEOUT_MS = 5_000;

let current: TracingSetup | undefined;

/** Sets up this process's tracing (once; `service.name` unless OTEL_SERVICE_NAME is set). */
export function startTracing(serviceName: string): TracingSetup {
  current = setupTracing({ serviceName });
  return current;
}

/**
 * Flushes and shuts down this process's tracing, bounded so that an unreachable collector
 * cannot hold the exit. Called when a command ends and before a stop signal exits; a second
 * caller waits for the flush the first started (a stop signal can race a command's end).
 */
export function stopTracing(): Promise<void> {
  const tracing = current;
  current = undefined;
  if (tracing) stopping = flushBounded(tracing);
  return stopping;
}

let stopping: Promise<void> = Promise.resolve();

async function flushBounded(tracing: TracingSetup): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      process.stderr.write(`lean-grpo: traces not delivered within ${FLUSH_TIMEOUT_MS} ms; exiting without them\n`);
      resolve();
    }, FLUSH_TIMEOUT_MS);
  });
  await Promise.race([tracing.shutdown().catch(() => {}), timeout]);
  clearTimeout(timer);
}

/**
 * A commander action run inside a root span `name` (the command's RPCs form one trace),
 * with tracing set up before it and flushed after it, however it ends.
 */
export function tracedAction<A extends unknown[]>(name: string, action: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args) => {
    startTracing("lean-grpo");
    try {
      await inActiveSpan(trace.getTracer("lean-grpo"), name, {}, () => action(...args));
    } finally {
      await stopTracing();
    }
  };
}
