// The REPL stand-in (tests/fakes/lean-repl) as a REPL command for the verifier's
// tests: a rules file written to a temporary directory, and the log of every request
// the service sent.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkerStandInCommand } from "../../../../tests/fakes/lean-checker/command.js";
import type { RuleReply, RulesFile } from "../../../../tests/fakes/lean-repl/rules.js";

export type { Rule, RulesFile } from "../../../../tests/fakes/lean-repl/rules.js";

/** The REPL's answer with one Lean error, positioned in the command sent as Lean positions it (1-based line, 0-based columns). */
export function leanErrorReply(line: number, column: number, endColumn: number, data: string): RuleReply {
  return { json: { env: 0, messages: [{ severity: "error", pos: { line, column }, endPos: { line, column: endColumn }, data }] } };
}

/** The repository root: the stand-in runs there, so that `--import tsx` resolves. */
export const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
export const STAND_IN = join(REPO_ROOT, "tests/fakes/lean-repl/main.ts");
export const TRANSCRIPTS = join(REPO_ROOT, "tests/fakes/lean-repl/transcripts/");

export interface LoggedRequest {
  pid: number;
  request: { kind: "command"; cmd: string; env?: number } | { kind: "tactic"; tactic: string; proofState: number };
}

export interface CheckerRun {
  pid: number;
  config: { theorem_names: string[]; permitted_axioms: string[] };
  challenge: string;
  solution: string;
}

export interface StandIn {
  /** argv for repl.command. */
  command: string[];
  /** repl.replay_checker.command for the checker stand-in (comparator's interface), judging by the same rules. */
  checker: { command: string[] };
  /** Every replay the checker stand-in ran, in order. */
  replays(): CheckerRun[];
  /** Every request the stand-in processes received, in order. */
  requests(): LoggedRequest[];
  cleanup(): void;
}

export function standIn(script: RulesFile): StandIn {
  const dir = mkdtempSync(join(tmpdir(), "lean-repl-stand-in-"));
  const rules = join(dir, "rules.json");
  const log = join(dir, "requests.jsonl");
  const checkerLog = join(dir, "replays.jsonl");
  writeFileSync(rules, JSON.stringify(script));
  const readLines = <T>(file: string): T[] =>
    existsSync(file)
      ? readFileSync(file, "utf8")
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => JSON.parse(line) as T)
      : [];
  return {
    command: [process.execPath, "--import", "tsx", STAND_IN, "--rules", rules, "--log", log],
    checker: { command: checkerStandInCommand(rules, checkerLog) },
    replays: () => readLines<CheckerRun>(checkerLog),
    requests: () => readLines<LoggedRequest>(log),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
