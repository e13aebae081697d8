// Where a training run's service logs go: runs/<id>/logs/<service>.log (the kit's loggers,
// in this process, its threads and its children), and also stderr as JSON with --verbose or
// when stderr is not a terminal (a collector reads it). The terminal keeps progress, the
// evaluations, the summary and one-line errors, which name this folder.
import { Code, ConnectError } from "@connectrpc/connect";
import { existsSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { configureLogDestination } from "@lean-grpo/kit";

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
  const runDir = path.join(runsDir, runId);
  const dir = path.join(runDir, "logs");
  const existed = existsSync(runDir);
  configureLogDestination({ dir, stderr: options.verbose || !process.stderr.isTTY });
  current = dir;
  return {
    dir,
    async whileStarting(start) {
      try {
        return await start();
      } catch (error) {
        const refused = error instanceof ConnectError && REFUSALS.has(error.code);
        if (refused && !existed && !existsSync(path.join(runDir, "run.json")) && onlyLogs(runDir)) {
          rmSync(runDir, { recursive: true, force: true });
          current = undefined;
        }
        throw error;
      }
    },
  };
}

function onlyLogs(runDir: string): boolean {
  return !existsSync(runDir) || readdirSync(runDir).every((name) => name === "logs");
}
