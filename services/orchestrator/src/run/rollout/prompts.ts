// The prompt a theorem is sampled from: the configured template, sent as a chat turn
// when the model has a chat template (or the config says so), else as plain text.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ProofFormat, PromptSchema, TaskKind, type Prompt, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { proofFormatName, type ProofFormatName } from "@lean-grpo/kit";
import type { MeshClients } from "../mesh-clients.js";
import type { RunConfig } from "../config/run-config.js";

export function promptText(theorem: Theorem, config: RunConfig["prompt"]): string {
  if (theorem.kind === TaskKind.MATH_ANSWER || (!theorem.statement && theorem.answer)) {
    return config.math_template.replaceAll("{problem}", theorem.informalStatement);
  }
  const header = theorem.header || theorem.imports.map((m) => `import ${m}`).join("\n");
  // A whole-file theorem asks for a complete Lean file (auxiliaries, then the theorem).
  const template = theorem.proofFormat === ProofFormat.WHOLE_FILE ? config.whole_file_template : config.lean_template;
  return template
    .replaceAll("{header}", header)
    .replaceAll("{context}", theorem.context)
    .replaceAll("{statement}", theorem.statement)
    .replaceAll("{informal}", theorem.informalStatement);
}

/** A Lean task's proof format, as samples.jsonl records it; nothing for a math task. */
export function leanProofFormat(theorem: Theorem): { proofFormat?: ProofFormatName } {
  if (theorem.kind === TaskKind.MATH_ANSWER || !theorem.statement) return {};
  return { proofFormat: proofFormatName(theorem.proofFormat) };
}

export function buildPrompt(theorem: Theorem, config: RunConfig["prompt"], chat: boolean): Prompt {
  return userPrompt(promptText(theorem, config), config, chat);
}

/** One user turn as a prompt: after prompt.system's turn in a chat, after its paragraph in plain text. */
export function userPrompt(text: string, config: Pick<RunConfig["prompt"], "system">, chat: boolean): Prompt {
  const system = config.system;
  if (!chat) return create(PromptSchema, { kind: { case: "text", value: system ? `${system}\n\n${text}` : text } });
  const messages = [...(system ? [{ role: "system", content: system }] : []), { role: "user", content: text }];
  return create(PromptSchema, { kind: { case: "chat", value: { messages } } });
}

/** "auto": chat when the model's tokenizer has a chat template (Tokenize of a chat prompt succeeds). */
export async function usesChatPrompts(
  format: RunConfig["prompt"]["format"],
  clients: Pick<MeshClients, "inference" | "withRetry">,
): Promise<boolean> {
  if (format !== "auto") return format === "chat";
  try {
    await clients.withRetry("inference", () =>
      clients.inference.tokenize({ prompt: { kind: { case: "chat", value: { messages: [{ role: "user", content: "1+1" }] } } } }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConnectError && error.code !== Code.Unavailable) return false;
    throw error;
  }
}
