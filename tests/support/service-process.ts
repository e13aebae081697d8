// Starts a service's real server.ts as a child process and waits for its "serving"
// log line, which carries the URL it bound.
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

export async function startServiceProcess(service: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", `${repoRoot}services/${service}/src/server.ts`, "--port", "0", ...args], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: "info", VITEST: "", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const lines = createInterface({ input: child.stderr! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${service} did not report serving within 30 s`)), 30_000);
    child.once("exit", (code) => reject(new Error(`${service} exited with ${code} before serving`)));
    lines.on("line", (line) => {
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
  return {
    url,
    child,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const [code] = await once(child, "exit");
      return code as number | null;
    },
  };
}
