// Services started as their own processes with their documented command lines
// (services/<name>/src/server.ts), as in a deployment: the real verifier, its Lean
// REPL workers being the REPL stand-in of tests/fakes/lean-repl answering by rules,
// reached over gRPC; nothing of the verifier is imported.
import { spawn, type ChildProcess } from "node:child_process";
import { checkerStandInCommand } from "../fakes/lean-checker/command.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { createServiceClient } from "@lean-grpo/kit";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const STAND_IN = join(REPO_ROOT, "tests/fakes/lean-repl/main.ts");
const VERIFIER = join(REPO_ROOT, "services/verifier/src/server.ts");

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export interface ServiceProcess {
  url: string;
  stop(): Promise<void>;
}

/** Runs a service's server.ts (`--port` and dotted overrides) in its own process; resolves once it serves. */
export async function startServiceProcess(serverScript: string, overrides: string[]): Promise<ServiceProcess> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", serverScript, "--port", String(port), "server.shutdown.drain_delay_ms=0", ...overrides],
    {
      cwd: REPO_ROOT,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, LOG_LEVEL: "warn" },
    },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
  };
  try {
    await waitUntilServing(url, child, () => stderr);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}

/** The verifier with REPL stand-in workers; `rules` is the stand-in's rules file (tests/fakes/lean-repl/rules.ts). */
export async function startVerifierProcess(rules: object, overrides: string[] = []): Promise<ServiceProcess> {
  const dir = mkdtempSync(join(tmpdir(), "reward-verifier-"));
  const rulesFile = join(dir, "rules.json");
  writeFileSync(rulesFile, JSON.stringify(rules));
  const repl = [process.execPath, "--import", "tsx", STAND_IN, "--rules", rulesFile];
  try {
    const verifier = await startServiceProcess(VERIFIER, [
      `repl.command=${JSON.stringify(repl)}`,
      `repl.replay_checker.command=${JSON.stringify(checkerStandInCommand(rulesFile))}`,
      `repl.cwd=${REPO_ROOT}`,
      "repl.memory_limit_mb=0",
      "server.shutdown.grace_period_ms=1000",
      ...overrides,
    ]);
    return {
      url: verifier.url,
      async stop() {
        await verifier.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

async function waitUntilServing(url: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const { client, transport } = createServiceClient(Health, { endpoints: [url], retry: { maxAttempts: 1 } });
  try {
    for (const started = Date.now(); Date.now() - started < 30_000; await new Promise((r) => setTimeout(r, 200))) {
      if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}:\n${stderr()}`);
      const status = await client.check({ service: "" }, { timeoutMs: 1_000 }).then(
        (r) => r.status,
        () => undefined,
      );
      if (status === HealthCheckResponse_ServingStatus.SERVING) return;
    }
    throw new Error(`the service did not serve within 30 s:\n${stderr()}`);
  } finally {
    transport.close();
  }
}
