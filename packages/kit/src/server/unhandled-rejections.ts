// A promise rejection nobody handled is a bug in this process, but never a reason
// for one client's request to end every service in it: it is logged and counted,
// and the process serves on. Installed once per thread (worker threads have their
// own process events) by the service runner and the command line's serve and train.
import type { Logger } from "pino";

let count = 0;
let installedLogger: Logger | undefined;

/** Logs and counts unhandled rejections instead of exiting; idempotent. */
export function surviveUnhandledRejections(logger: Logger): void {
  if (installedLogger !== undefined) return;
  installedLogger = logger;
  process.on("unhandledRejection", (reason) => {
    count++;
    installedLogger?.error({ err: reason, unhandledRejections: count }, "unhandled promise rejection (the process keeps serving)");
  });
}

/** How many unhandled rejections this thread has survived. */
export function unhandledRejectionCount(): number {
  return count;
}
