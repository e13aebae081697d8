// Starts a service's real server.ts as a child process (its documented command line, as
// in a deployment) on a port the OS picks, and waits for its "serving" log line, which
// carries the URL it bound. The one way tests and benches start a service process.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { repoRoot } from "./interop-verifier.js";

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

const SERVING_WITHIN_MS = 30_000;

export interface StartOptions {
  /**
   * "source" (default): `node --import tsx services/<service>/src/server.ts`, as in development;
   * "compiled": `node services/<service>/dist/server.mjs`, as its image starts it
   * (written by deploy/docker/bundle-service.mjs).
   */
  entry?: "source" | "compiled";
}

/**
 * Runs the service's server (`--port 0 ...args`: dotted overrides, flags); resolves once it
 * serves. A process that exits first rejects with its code and stderr.
 */
export async function startServiceProcess(
  service: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
  options: StartOptions = {},
): Promise<ServiceProcess> {
  const entry =
    options.entry === "compiled"
      ? [`${repoRoot}services/${service}/dist/server.mjs`]
      : ["--import", "tsx", `${repoRoot}services/${service}/src/server.ts`];
  const child = spawn(process.execPath, [...entry, "--port", "0", ...args], {
    cwd: repoRoot,
    // info: the "serving" line is an info record.
    env: { ...process.env, LOG_LEVEL: "info", VITEST: "", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    return code as number | null;
  };
  let stderr = "";
  const lines = createInterface({ input: child.stderr! });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${service} did not report serving within 30 s:\n${stderr}`)), SERVING_WITHIN_MS);
      child.once("exit", (code) => {
        clearTimeout(timer);
        // The last lines arrive after "exit" at times; give the stream a tick.
        setImmediate(() => reject(new Error(`${service} exited with ${code} before serving:\n${stderr}`)));
      });
      lines.on("line", (line) => {
        stderr += `${line}\n`;
        try {
          const record = JSON.parse(line);
          if (record.msg === "serving") {
            clearTimeout(timer);
            resolve(record.url);
          }
        } catch {
          /* not a log line */
        }
      });
    });
    return { url, child, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
