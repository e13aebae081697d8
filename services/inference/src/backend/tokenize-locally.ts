// Text and chat prompts to token ids with the model's own tokenizer and chat template.
import type { Prompt } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { ModelTokenizer } from "@lean-grpo/learner";
import type { TokenizedPrompt } from "./inference-backend.js";

export function tokenizeLocally(tokenizer: ModelTokenizer, prompt: Prompt): TokenizedPrompt {
  const kind = prompt.kind;
  switch (kind.case) {
    case "tokenIds":
      return { ids: kind.value.ids, text: "" };
    case "chat": {
      const messages = kind.value.messages.map((m) => ({ role: m.role, content: m.content }));
      return { ids: tokenizer.encodeChat(messages, { addGenerationPrompt: true }), text: tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true }) };
    }
    default:
      return { ids: tokenizer.encode(kind.value ?? "", { addSpecialTokens: true }), text: kind.value ?? "" };
  }
}
