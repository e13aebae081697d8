// Where a training run's service logs go: runs/<id>/logs/<service>.log (the kit's loggers,
// in this process, its threads and its children), and also stderr as JSON with --verbose or
// when stderr is not a terminal (a collector reads it). The terminal keeps progress, the
// evaluations, the summary and one-line errors, which name this folder. The folder is made
// under runs_dir without following a symlink (kit/paths), and removed the same way.
import { Code, ConnectError } from "@connectrpc/connect";
import { existsSync } from "node:fs";
import { configureLogDestination, PathError, PathRoot } from "@lean-grpo/kit";

export interface RunLogs {
  dir: string;
  /**
   * Runs StartRun. If the orchestrator refuses the request (bad config or dataset: the message
   * says all there is) before the run exists, the folder made only for its logs goes.
   */
  whileStarting<T>(start: () => Promise<T>): Promise<T>;
}

/** Codes of a refused request: the caller's input, not the mesh, was wrong. */
const REFUSALS = new Set([Code.InvalidArgument, Code.NotFound, Code.FailedPrecondition, Code.AlreadyExists, Code.OutOfRange]);

let current: string | undefined;

/** The log folder of the run this process is training, for error messages; undefined before one. */
export function currentLogDir(): string | undefined {
  return current !== undefined && existsSync(current) ? current : undefined;
}

export function startRunLogs(runsDir: string, runId: string, options: { verbose: boolean }): RunLogs {
  const runs = new PathRoot({ dir: runsDir, key: "runs_dir" });
  const existed = existsSync(runs.resolve(runId, "run id"));
  // A run folder or logs/ that is a symlink is refused here, before any line is written.
  const dir = runs.directoryForWriteSync(`${runId}/logs`, "run id");
  // Every process that logs there walks to it from runs_dir again, refusing a symlink swapped in since.
  configureLogDestination({ dir, root: runsDir, stderr: options.verbose || !process.stderr.isTTY });
  current = dir;
  return {
    dir,
    async whileStarting(start) {
      try {
        return await start();
      } catch (error) {
        const refused = error instanceof ConnectError && REFUSALS.has(error.code);
        if (refused && !existed && (await onlyLogs(runs, runId))) {
          await runs.withDirectory(".", "run id", {}, (all) => all.remove(runId));
          current = undefined;
        }
        throw error;
      }
    },
  };
}

/** Whether the run's folder holds nothing but logs/ (no run.json: the run never started). */
async function onlyLogs(runs: PathRoot, runId: string): Promise<boolean> {
  const entries = await runs.list(runId, "run id").catch((error: unknown) => {
    if (error instanceof PathError && error.code === "missing") return [];
    throw error;
  });
  return entries.every((entry) => entry.name === "logs");
}
