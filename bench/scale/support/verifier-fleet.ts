// N verifier replicas for bench/scale/verifier.ts: each services/verifier/src/server.ts in its
// own process on a free loopback port, with `poolSize` REPL stand-ins that take a fixed time per
// answer (sleeping, as a worker waits on Lean), so the cores are not what limits a replica.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { LeanVerifierService } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { createServiceClient } from "@lean-grpo/kit";

export interface VerifierFleet {
  urls: string[];
  stop(): Promise<void>;
}

export async function startVerifierFleet(options: {
  replicas: number;
  poolSize: number;
  repoRoot: string;
  /** The stand-in's command line (tests/fakes/lean-repl/main.ts with its rules). */
  standIn: string[];
}): Promise<VerifierFleet> {
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill("SIGTERM");
        await once(child, "exit");
      }),
    );
  };
  try {
    const urls = await Promise.all(
      Array.from({ length: options.replicas }, async () => {
        const child = spawn(
          process.execPath,
          [
            "--import",
            "tsx",
            join(options.repoRoot, "services/verifier/src/server.ts"),
            "--port",
            "0",
            `repl.command=${JSON.stringify(options.standIn)}`,
            `repl.cwd=${JSON.stringify(options.repoRoot)}`,
            `repl.pool_size=${options.poolSize}`,
            "repl.queue_capacity=4096",
            "repl.memory_limit_mb=0",
            "repl.sandbox.mode=none",
            "repl.max_requests_per_worker=0",
            // The REPL pool's throughput is measured; the replay tier has its own bench.
            "repl.replay=off",
            "server.limits.max_concurrent_calls=0",
            "server.shutdown.drain_delay_ms=0",
          ],
          {
            cwd: options.repoRoot,
            stdio: ["ignore", "ignore", "pipe"],
            env: { ...process.env, LOG_LEVEL: "info", OTEL_EXPORTER_OTLP_ENDPOINT: "" },
          },
        );
        children.push(child);
        return waitReady(child);
      }),
    );
    return { urls, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The replica's URL once it serves and every REPL worker is up and idle. */
async function waitReady(child: ChildProcess): Promise<string> {
  let url: string | undefined;
  for await (const line of createInterface({ input: child.stderr! })) {
    const record = JSON.parse(line) as { msg?: string; url?: string };
    if (record.msg === "serving") {
      url = record.url;
      break;
    }
  }
  if (!url) throw new Error("a verifier replica exited before serving");
  child.stderr!.resume();
  const { client, transport } = createServiceClient(LeanVerifierService, { endpoints: [url] });
  try {
    for (;;) {
      const stats = await client.poolStats({});
      if (stats.workerStats.every((worker) => worker.pid !== 0 && worker.state === "idle")) return url;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    transport.close();
  }
}
