// Text and chat prompts to token ids with the model's own tokenizer and chat template.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Prompt } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { TokenizerError, type ModelTokenizer } from "@lean-grpo/lm/tokenizer";
import type { TokenizedPrompt } from "./inference-backend.js";

export function tokenizeLocally(tokenizer: ModelTokenizer, prompt: Prompt): TokenizedPrompt {
  const kind = prompt.kind;
  switch (kind.case) {
    case "tokenIds":
      return { ids: kind.value.ids, text: "" };
    case "chat": {
      // The model lacks what the request needs: not the caller's input, but its choice of prompt kind.
      if (!tokenizer.hasChatTemplate) {
        throw new ConnectError("the model's tokenizer has no chat template: send prompt.text or prompt.token_ids", Code.FailedPrecondition);
      }
      const messages = kind.value.messages.map((m) => ({ role: m.role, content: m.content }));
      return refusingInput("prompt.chat", () => {
        const text = tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true });
        return { ids: tokenizer.encode(text, { addSpecialTokens: false }), text };
      });
    }
    default:
      return refusingInput("prompt.text", () => ({
        ids: tokenizer.encode(kind.value ?? "", { addSpecialTokens: true }),
        text: kind.value ?? "",
      }));
  }
}

/**
 * A prompt the tokenizer refuses (a character its vocabulary cannot encode, a conversation the
 * template raises on) is the caller's to fix: INVALID_ARGUMENT, with the tokenizer's message.
 */
function refusingInput<T>(field: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof TokenizerError) throw new ConnectError(`${field} cannot be tokenized: ${error.message}`, Code.InvalidArgument);
    throw error;
  }
}
