// Runs a planned topology as child processes of `lean-grpo serve <service>`,
// waits until each answers health, restarts replicas that ask for it, and stops
// them all (SIGTERM, so each drains) when told to.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { createLogger } from "@lean-grpo/kit";
import type { PlannedReplica } from "./topology.js";

const BIN = fileURLToPath(new URL("../../bin/lean-grpo.mjs", import.meta.url));
const logger = createLogger("topology");

export interface RunningReplica extends PlannedReplica {
  pid(): number | undefined;
  /** Ends this replica for good (no restart): SIGKILL, for failover tests and chaos. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface RunningTopology {
  replicas: RunningReplica[];
  stop(): Promise<void>;
}

export async function runTopology(plan: PlannedReplica[], readyTimeoutMs = 60_000): Promise<RunningTopology> {
  let stopping = false;
  const replicas = plan.map((planned) => {
    let child: ChildProcess | undefined;
    let retired = false;
    const start = () => {
      child = spawn(process.execPath, [BIN, ...planned.args], { stdio: ["ignore", "ignore", "inherit"] });
      child.once("exit", (code, signal) => {
        if (stopping || retired) return;
        logger.warn({ service: planned.service, replica: planned.index, code, signal }, "replica exited");
        if (planned.restart) start();
      });
    };
    start();
    const replica: RunningReplica = {
      ...planned,
      pid: () => child?.pid,
      async kill(signal = "SIGKILL") {
        retired = true;
        if (child && child.exitCode === null && child.signalCode === null) {
          child.kill(signal);
          await once(child, "exit");
        }
      },
    };
    return { replica, child: () => child };
  });

  const stop = async () => {
    stopping = true;
    await Promise.all(
      replicas.map(async ({ child }) => {
        const c = child();
        if (c && c.exitCode === null && c.signalCode === null) {
          c.kill("SIGTERM");
          await once(c, "exit");
        }
      }),
    );
  };

  try {
    await Promise.all(plan.map((p) => waitServing(p.url, readyTimeoutMs)));
  } catch (error) {
    await stop();
    throw error;
  }
  return { replicas: replicas.map((r) => r.replica), stop };
}

async function waitServing(url: string, timeoutMs: number): Promise<void> {
  const health = createClient(Health, createGrpcTransport({ baseUrl: url }));
  const end = Date.now() + timeoutMs;
  let last = "no answer";
  for (;;) {
    try {
      const res = await health.check({ service: "" }, { timeoutMs: 1_000 });
      if (res.status === HealthCheckResponse_ServingStatus.SERVING) return;
      last = HealthCheckResponse_ServingStatus[res.status] ?? String(res.status);
    } catch (error) {
      // Not listening yet, or (said at the end) a certificate this process does not trust.
      last = (error as Error).message;
    }
    if (Date.now() > end) throw new Error(`${url} did not answer health within ${timeoutMs} ms (last: ${last})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
