// The learner as its own `lean-grpo serve learner` process on a fixed loopback port, so a
// test can SIGKILL it mid-run and start a fresh one where the run expects it.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { createServiceClient } from "@lean-grpo/kit";

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bin/lean-grpo.mjs");

export interface LearnerProcess {
  url: string;
  child: ChildProcess;
  kill(): Promise<void>;
}

/** A port the OS says is free now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, "close");
  return port;
}

export async function startLearnerProcess(port: number, overrides: string[]): Promise<LearnerProcess> {
  const child = spawn(process.execPath, [BIN, "serve", "learner", "--port", String(port), ...overrides], {
    env: { ...process.env, LOG_LEVEL: "warn", VITEST: "" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const { client, transport } = createServiceClient(LearnerService, { endpoints: [url] });
  try {
    // Ready when GetStatus answers; the process loads tsx and tfjs first.
    for (const deadline = Date.now() + 30_000; ; ) {
      if (child.exitCode !== null) throw new Error(`learner process exited with ${child.exitCode} before serving`);
      try {
        await client.getStatus({}, { timeoutMs: 1000 });
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  } finally {
    transport.close();
  }
  return {
    url,
    child,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await once(child, "exit");
    },
  };
}
