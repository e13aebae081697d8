// The text a prompt became in the sampler: a text prompt as it is (prompt.system's paragraph
// first), a chat prompt as the model's chat template rendered it (system turn and generation
// prompt included), which only the inference service knows (Tokenize's templated_text). What a
// run records for people to read is this text, so that what is read is what was sampled.
import type { Prompt } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { MeshClients } from "../mesh-clients.js";

export async function sampledPromptText(
  clients: Pick<MeshClients, "inference" | "withRetry">,
  prompt: Prompt,
  signal?: AbortSignal,
): Promise<string> {
  if (prompt.kind.case === "text") return prompt.kind.value;
  const { templatedText } = await clients.withRetry("inference", () => clients.inference.tokenize({ prompt }, { signal }), signal);
  return templatedText;
}
