// The verifier's own question to Lean, asked on a header's environment right after
// the header elaborates and before any model text reaches that worker: which tokens
// does this environment's parser know (Lean.Parser.getTokenTable), and which of them
// begin a command (the `command` category's leading table). The screen then lexes
// bodies as Lean will (packages/lean/src/token-table.ts). It is trusted text, never
// screened, and its answer is read only from an info message that starts with
// ANSWER_MARKER. Written against Lean's API as read in its source; not yet run against
// a real Lean here (README, "What was verified where").
import { makeTokenTable, type TokenTable } from "@lean-grpo/lean";
import type { ReplResponse } from "./protocol.js";

export const ANSWER_MARKER = "lean-grpo-token-table ";

export const TOKEN_TABLE_QUERY = `#eval show Lean.Elab.Command.CommandElabM Unit from do
  let env ← Lean.getEnv
  let tokens : Array String := (Lean.Parser.getTokenTable env).findPrefix ""
  let commands : List String :=
    match (Lean.Parser.parserExtension.getState env).categories.find? \`command with
    | some category => category.tables.leadingTable.toList.map fun entry => entry.1.toString (escape := false)
    | none => []
  let answer := Lean.Json.mkObj [("tokens", Lean.toJson tokens), ("commands", Lean.toJson commands)]
  Lean.logInfo m!"${ANSWER_MARKER}{answer.compress}"`;

/** Fewer tokens than core Lean alone declares means the answer is not a token table. */
const MIN_TOKENS = 100;

export type TokenTableAnswer = { ok: true; table: TokenTable } | { ok: false; reason: string };

export function readTokenTableAnswer(response: ReplResponse): TokenTableAnswer {
  if (response.kind !== "command") {
    return { ok: false, reason: response.kind === "error" ? response.response.message : "the REPL answered with a proof state" };
  }
  const messages = response.response.messages ?? [];
  const answer = messages.find((message) => message.severity === "info" && message.data.startsWith(ANSWER_MARKER));
  if (!answer) {
    const error = messages.find((message) => message.severity === "error");
    return { ok: false, reason: error ? `Lean reported: ${error.data.split("\n", 1)[0]}` : "no answer in the REPL's messages" };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.data.slice(ANSWER_MARKER.length));
  } catch {
    return { ok: false, reason: "the answer is not JSON" };
  }
  const { tokens, commands } = (parsed ?? {}) as { tokens?: unknown; commands?: unknown };
  const strings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === "string");
  if (!strings(tokens) || !strings(commands)) return { ok: false, reason: "the answer lacks the tokens or commands list" };
  if (tokens.length < MIN_TOKENS || !tokens.includes(":=")) {
    return { ok: false, reason: `the answer lists ${tokens.length} tokens, not a whole table` };
  }
  return { ok: true, table: makeTokenTable(tokens, commands, "environment") };
}
