// The prompt of one tactic-mode turn: prompt.tactic_template with the theorem, the
// tactics applied so far and the goals they left, sent as a chat turn or plain text
// like whole-proof prompts.
import type { Prompt, Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { RunConfig } from "../config/run-config.js";
import { userPrompt } from "./prompts.js";

const PLACEHOLDER = /\{(header|context|statement|informal|proof|goals)\}/g;

/** The tactics as the body of the `by` block: one per line, indented. */
export function proofBlock(tactics: readonly string[]): string {
  return tactics.map((tactic) => `  ${tactic}\n`).join("");
}

export function tacticPromptText(theorem: Theorem, template: string, tactics: readonly string[], goals: readonly string[]): string {
  const values: Record<string, string> = {
    header: theorem.header || theorem.imports.map((m) => `import ${m}`).join("\n"),
    context: theorem.context,
    statement: theorem.statement,
    informal: theorem.informalStatement,
    proof: proofBlock(tactics),
    goals: goals.join("\n\n"),
  };
  // One pass: text put in (a goal, a tactic) is never read as a placeholder itself.
  return template.replace(PLACEHOLDER, (_, key: string) => values[key]!);
}

export function buildTacticPrompt(
  theorem: Theorem,
  config: RunConfig["prompt"],
  chat: boolean,
  tactics: readonly string[],
  goals: readonly string[],
): Prompt {
  return userPrompt(tacticPromptText(theorem, config.tactic_template, tactics, goals), config, chat);
}

/** The tactic of a completion: its first line, trimmed ("" ends the trajectory). */
export function tacticOf(text: string): string {
  return (text.split("\n", 1)[0] ?? "").trim();
}
