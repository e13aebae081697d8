// Services started as their own processes with their documented command lines
// (services/<name>/src/server.ts), as in a deployment: the real verifier, its Lean
// REPL workers being the REPL stand-in of tests/fakes/lean-repl answering by rules,
// reached over gRPC; nothing of the verifier is imported.
import { checkerStandInCommand } from "../fakes/lean-checker/command.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startServiceProcess, type ServiceProcess } from "./service-process.js";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const STAND_IN = join(REPO_ROOT, "tests/fakes/lean-repl/main.ts");

/** A verifier process: its URL, and stop() (SIGTERM; resolves with the exit code once its files are removed). */
export type VerifierProcess = Pick<ServiceProcess, "url" | "stop">;

/** The verifier with REPL stand-in workers; `rules` is the stand-in's rules file (tests/fakes/lean-repl/rules.ts). */
export async function startVerifierProcess(rules: object, overrides: string[] = []): Promise<VerifierProcess> {
  const dir = mkdtempSync(join(tmpdir(), "reward-verifier-"));
  const rulesFile = join(dir, "rules.json");
  writeFileSync(rulesFile, JSON.stringify(rules));
  const repl = [process.execPath, "--import", "tsx", STAND_IN, "--rules", rulesFile];
  try {
    const verifier = await startServiceProcess("verifier", [
      "server.shutdown.drain_delay_ms=0",
      `repl.command=${JSON.stringify(repl)}`,
      `repl.replay_checker.command=${JSON.stringify(checkerStandInCommand(rulesFile))}`,
      `repl.cwd=${REPO_ROOT}`,
      "repl.memory_limit_mb=0",
      // The stand-in reads its rules where the sandbox would not let it (tests/security runs it sandboxed).
      "repl.sandbox.mode=none",
      "server.shutdown.grace_period_ms=1000",
      ...overrides,
    ]);
    return {
      url: verifier.url,
      async stop() {
        const code = await verifier.stop();
        rmSync(dir, { recursive: true, force: true });
        return code;
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
