// The stand-in's script in rules mode: requests are matched against rules in order,
// and the first match says what to answer (a response of a real transcript, or a
// literal one) and whether to misbehave. Faults are keyed on request content, not
// on a count, so a fault hits the request that carries its marker every time, and
// the request after it (on the restarted worker) is served normally.

import type { Declaration } from "./repl-state.js";

export interface TextMatch {
  equals?: string;
  includes?: string;
  startsWith?: string;
  /** A JavaScript regular expression (unicode). */
  regex?: string;
}

export interface RuleWhen {
  /** Matches command requests (`{"cmd": ...}`) by their text. */
  cmd?: TextMatch;
  /** Matches tactic requests (`{"tactic": ..., "proofState": N}`) by their tactic. */
  tactic?: TextMatch;
  /** "none": only commands without `env` (headers); "given": only commands with one. */
  env?: "none" | "given";
}

export type RuleReply =
  /** Response #`response` (0-based) of a transcript, e.g. { transcript: "mathlib/H20231115_3", response: 1 }. */
  | { transcript: string; response: number }
  /** A literal response body. */
  | { json: Record<string, unknown> };

export type Fault =
  /** Answer after `ms` milliseconds. */
  | { kind: "slow"; ms: number }
  /** Never answer (Lean stuck in a runaway tactic). */
  | { kind: "hang" }
  /** Write the first half of the answer, then exit (Lean dying mid-response: stack overflow, OOM kill). */
  | { kind: "crash" }
  /** Write text that is not JSON, framed like an answer. */
  | { kind: "garbage"; text?: string }
  /** Allocate and keep `mb` MiB, then answer (the REPL never frees its snapshots). */
  | { kind: "grow"; mb: number }
  /** Write `text` to stderr, then answer (a Lean panic message). */
  | { kind: "stderr"; text: string };

/** What the kernel replay (tests/fakes/lean-checker) finds for a solution this rule matches. */
export interface ReplayFinding {
  /** The replay refuses, with this message (Lean's kernel error, e.g. "(kernel) declaration has free variables"). */
  refuses?: string;
  /** Where it fails: rebuilding the solution in a fresh process, or the kernel replay (default). */
  stage?: "solution-build" | "kernel";
  /** The checker never finishes (for time limits). */
  hang?: boolean;
  /**
   * What the theorem's statement elaborates to in the solution, where that differs from
   * its text (an auxiliary declaration of the solution changed what it means): the
   * checker compares elaborated types, as comparator does, so this one and the
   * challenge's differ. Absent: the statement means what its text says.
   */
  elaboratedStatement?: string;
}

export interface Rule {
  when: RuleWhen;
  /** What to answer; env and proof-state ids in it are renumbered as the REPL would. Default for commands: `{}` → `{"env": N}`. */
  reply?: RuleReply;
  /**
   * The command declares constants with these axioms, for later `#print axioms` on its
   * env. Every declaration in the command is recorded under its full name (inside the
   * namespaces open where it stands); an entry with `name` (as written) gives that one
   * its axioms, the entry without a name the first one. A named entry the text does
   * not show is declared at the root.
   */
  declares?: Declaration | Declaration[];
  /** Misbehaviour, applied in order (e.g. grow, then be slow). */
  fault?: Fault | Fault[];
  /** What the checker stand-in's kernel replay finds; absent: the replay agrees with this rule's axioms. */
  replay?: ReplayFinding;
}

export interface RulesFile {
  rules: Rule[];
  /**
   * The header environment's token table, as the REPL answers the verifier's query
   * (tokens and command tokens); `false`: the REPL answers with an error, as a Lean
   * without that API would. Default: DEFAULT_TOKEN_TABLE.
   */
  tokenTable?: { tokens: string[]; commands: string[] } | false;
  /** Added before every answer, ms (a REPL that takes a fixed time per request). */
  delayMs?: number;
}

export function textMatches(text: string, match: TextMatch): boolean {
  if (match.equals !== undefined && text !== match.equals) return false;
  if (match.includes !== undefined && !text.includes(match.includes)) return false;
  if (match.startsWith !== undefined && !text.startsWith(match.startsWith)) return false;
  if (match.regex !== undefined && !new RegExp(match.regex, "u").test(text)) return false;
  return true;
}

export type ParsedRequest =
  | { kind: "command"; cmd: string; env: number | undefined }
  | { kind: "tactic"; tactic: string; proofState: number };

export function findRule(rules: readonly Rule[], request: ParsedRequest): Rule | undefined {
  return rules.find(({ when }) => {
    if (request.kind === "command") {
      if (when.tactic || !when.cmd) return false;
      if (when.env === "none" && request.env !== undefined) return false;
      if (when.env === "given" && request.env === undefined) return false;
      return textMatches(request.cmd, when.cmd);
    }
    return when.tactic !== undefined && !when.cmd && textMatches(request.tactic, when.tactic);
  });
}
