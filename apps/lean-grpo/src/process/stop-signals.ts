// How `lean-grpo` stops, however it was started. SIGTERM, SIGINT and SIGHUP run the command's
// stop (drain servers, stop the run) and exit; a second signal exits at once.
//
// Why the parent is watched too: `npx lean-grpo ...` and `npm exec` run the bin under
// `sh -c`, and on SIGTERM npm signals that shell, which dies without passing the signal on:
// this process was left behind, holding its ports. When the process that started us through
// npm goes away (we are re-parented), that is the same request to stop.
import { stopTracing } from "./process-tracing.js";

const SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP"];
const PARENT_POLL_MS = 200;

export type StopReason = NodeJS.Signals | "parent exited";

/** Started through npm (npx, npm exec, npm run): npm sets npm_command for what it runs. */
function startedByNpm(): boolean {
  return process.env.npm_command !== undefined;
}

let stopping = false;

/**
 * Calls `stop` once on the first stop request, then exits with `exitCode` (130 for SIGINT,
 * 143 for SIGTERM, 129 for SIGHUP when not given). Returns a function that removes the handlers.
 */
export function onStopRequest(stop: (reason: StopReason) => Promise<void>, exitCode?: number): () => void {
  const handle = (reason: StopReason) => {
    if (stopping) {
      process.exit(exitCode ?? 1);
    }
    stopping = true;
    void stop(reason)
      .catch((error: unknown) => process.stderr.write(`lean-grpo: while stopping: ${(error as Error).message}\n`))
      // The spans of the stop itself (and of a run it ended) leave before the process does.
      .finally(() => stopTracing().finally(() => process.exit(exitCode ?? codeFor(reason))));
  };
  const handlers = SIGNALS.map((signal) => {
    const handler = () => handle(signal);
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  const parent = process.ppid;
  const watch = startedByNpm()
    ? setInterval(() => {
        if (process.ppid !== parent) handle("parent exited");
      }, PARENT_POLL_MS).unref()
    : undefined;
  return () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
    if (watch) clearInterval(watch);
  };
}

function codeFor(reason: StopReason): number {
  if (reason === "SIGINT") return 130;
  if (reason === "SIGHUP") return 129;
  return 143;
}
