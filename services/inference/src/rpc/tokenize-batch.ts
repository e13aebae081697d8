// InferenceService.TokenizeBatch: many prompts in one call (a dataset's start-up check
// sends its thousands of prompts as one stream, not one Tokenize each). Each prompt's
// refusal is its own result; anything else (the backend down, the call cancelled) ends
// the stream with its error.
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { TokenizeBatchRequest, TokenizeBatchResponseSchema } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import type { InferenceBackend } from "../backend/inference-backend.js";

/** What Tokenize would refuse the prompt with: the prompt's own fault, not the service's. */
const PROMPT_REFUSALS: ReadonlySet<Code> = new Set([Code.InvalidArgument, Code.FailedPrecondition]);

type TokenizeBatchResult = MessageInitShape<typeof TokenizeBatchResponseSchema>;

export async function* tokenizeBatch(
  requests: AsyncIterable<TokenizeBatchRequest>,
  ctx: HandlerContext,
  backend: Pick<InferenceBackend, "tokenize">,
): AsyncGenerator<TokenizeBatchResult> {
  let index = 0;
  for await (const req of requests) {
    const result: TokenizeBatchResult = { index };
    if (!req.prompt || req.prompt.kind.case === undefined) {
      result.error = "prompt is required: set prompt.text, prompt.chat or prompt.token_ids";
    } else {
      try {
        result.tokenIds = (await backend.tokenize(req.prompt, ctx.signal)).ids;
      } catch (error) {
        const e = ConnectError.from(error);
        if (!PROMPT_REFUSALS.has(e.code) || ctx.signal.aborted) throw error;
        result.error = e.rawMessage;
      }
    }
    yield result;
    index++;
  }
}
