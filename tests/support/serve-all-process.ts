// Starts `lean-grpo serve all` as a child process, every service on a port the OS picks
// and with no drain delay, and waits for the URL of each of the five services on its
// stdout. The one way the mesh-level attack tests start the mesh they attack.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { repoRoot } from "./interop-verifier.js";

export const MESH_SERVICES = ["inference", "verifier", "reward", "learner", "orchestrator"] as const;
export type MeshService = (typeof MESH_SERVICES)[number];

export interface ServeAllProcess {
  child: ChildProcess;
  urls: ReadonlyMap<MeshService, string>;
  /** The last 20,000 characters serve all wrote to stderr, for a failure's message. */
  log(): string;
  /** SIGTERM to serve all (its services stop with it); resolves once it has exited. */
  stop(): Promise<void>;
}

/** `overrides`: dotted keys beside the ports and drain delays set here; `env`: the whole environment. */
export async function startServeAll(overrides: string[], env: NodeJS.ProcessEnv): Promise<ServeAllProcess> {
  const child = spawn(
    process.execPath,
    [
      `${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`,
      "serve",
      "all",
      ...MESH_SERVICES.flatMap((name) => [`${name}.server.port=0`, `${name}.server.shutdown.drain_delay_ms=0`]),
      ...overrides,
    ],
    { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  child.stderr!.on("data", (chunk) => {
    log = (log + chunk).slice(-20_000);
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    await once(child, "exit");
  };
  const urls = new Map<MeshService, string>();
  for await (const line of createInterface({ input: child.stdout! })) {
    const [name, url] = line.split(/\s+/);
    if ((MESH_SERVICES as readonly string[]).includes(name!) && url?.startsWith("http")) urls.set(name as MeshService, url);
    if (urls.size === MESH_SERVICES.length) break;
  }
  if (urls.size !== MESH_SERVICES.length) {
    await stop();
    throw new Error(`serve all did not start:\n${log}`);
  }
  return { child, urls, log: () => log, stop };
}
