// One run of the checker: `<command> comparator.json` in a check directory, in its
// own process group (killed whole at the deadline or on cancel), with the REPL
// workers' minimal environment. Output is kept up to a bound: the verdict needs only
// the stages comparator prints and its last error.
import { spawn } from "node:child_process";

const MAX_OUTPUT_CHARS = 256 * 1024;

export interface CheckerRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The process could not be started (e.g. the command does not exist). */
  spawnError?: string;
  ms: number;
}

export interface CheckerRunOptions {
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
}

export function runChecker(options: CheckerRunOptions): Promise<CheckerRun> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(options.argv[0]!, options.argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    const keep = (buffer: string, chunk: Buffer) => (buffer.length >= MAX_OUTPUT_CHARS ? buffer : buffer + chunk.toString("utf8"));
    child.stdout.on("data", (chunk: Buffer) => {
      stdout = keep(stdout, chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = keep(stderr, chunk);
    });
    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => killGroup();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const finish = (run: Omit<CheckerRun, "ms" | "stdout" | "stderr" | "timedOut">) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve({ ...run, stdout, stderr, timedOut, ms: performance.now() - started });
    };
    child.once("error", (error) => finish({ exitCode: null, spawnError: error.message }));
    child.once("close", (code) => finish({ exitCode: code }));
  });
}
