// The REPL stand-in (tests/fakes/lean-repl, the real REPL's JSON protocol, answers chosen
// by rules) as the verifier's Lean REPL in a mesh: its rules file in a temporary
// directory, and the verifier config section that runs it.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkerStandInCommand } from "../../../../tests/fakes/lean-checker/command.js";
import type { RulesFile } from "../../../../tests/fakes/lean-repl/rules.js";

export type { Rule } from "../../../../tests/fakes/lean-repl/rules.js";

/** The repository root: the stand-in runs there, so that `--import tsx` resolves. */
const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const STAND_IN = join(REPO_ROOT, "tests/fakes/lean-repl/main.ts");

export type LoggedRequest = { kind: "command"; cmd: string; env?: number } | { kind: "tactic"; tactic: string; proofState: number };

export interface ReplStandIn {
  /** The mesh's `verifier` section: this stand-in as repl.command, and the checker stand-in as the replay checker. */
  verifierSection: Record<string, unknown>;
  /** Every request the stand-in processes received, in order. */
  requests(): LoggedRequest[];
  cleanup(): void;
}

export function replStandIn(script: RulesFile, poolSize = 2): ReplStandIn {
  const dir = mkdtempSync(join(tmpdir(), "orchestrator-repl-"));
  const rules = join(dir, "rules.json");
  const log = join(dir, "requests.jsonl");
  writeFileSync(rules, JSON.stringify(script));
  return {
    verifierSection: {
      repl: {
        command: [process.execPath, "--import", "tsx", STAND_IN, "--rules", rules, "--log", log],
        cwd: REPO_ROOT,
        pool_size: poolSize,
        timeout_ms: 10_000,
        header_timeout_ms: 20_000,
        memory_limit_mb: 0,
        // The stand-in reads its rules and writes its log where the sandbox would not let it (tests/security runs it sandboxed).
        sandbox: { mode: "none" },
        // The verifier's default: PROVED only after the kernel replay (the checker stand-in, judging by the same rules).
        replay: "proved",
        replay_checker: { command: checkerStandInCommand(rules) },
      },
    },
    requests: () =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .split("\n")
            .filter((line) => line !== "")
            .map((line) => (JSON.parse(line) as { request: LoggedRequest }).request)
        : [],
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
