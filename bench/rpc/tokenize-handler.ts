// The handler both benchmark servers run: a cheap Tokenize (character codes), so
// the figures measure the RPC stack, not the work.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { TokenizeRequest, TokenizeResponseSchema } from "@lean-grpo/gen/leangrpo/v1/inference_pb";

export function tokenize(req: TokenizeRequest): MessageInitShape<typeof TokenizeResponseSchema> {
  const text = req.prompt?.kind.case === "text" ? req.prompt.kind.value : "";
  return { tokenIds: Array.from(text, (c) => c.charCodeAt(0)), templatedText: text };
}
