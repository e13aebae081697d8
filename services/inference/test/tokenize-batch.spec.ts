// TokenizeBatch over real gRPC on the shipped model's embedded backend: one result per
// prompt, in order, with Tokenize's ids; a prompt the tokenizer refuses (∀ is outside the
// shipped model's vocabulary) or a missing prompt is that result's error, and the stream goes on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { TokenizeBatchRequestSchema } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { loadConfig, serve, type RunningServer } from "@lean-grpo/kit";
import { InferenceConfigSchema } from "../src/config.js";
import { createInferenceService } from "../src/service.js";

const modelDir = fileURLToPath(new URL("../../../models/arith-tiny", import.meta.url));
let server: RunningServer;
let client: ReturnType<typeof createClient<typeof InferenceService>>;

beforeAll(async () => {
  const config = loadConfig(InferenceConfigSchema, {
    overrides: [`embedded.model_dir=${modelDir}`, "embedded.tensor_backend=cpu", "server.port=0", "server.shutdown.drain_delay_ms=0"],
  });
  server = await serve({ name: "inference", services: [createInferenceService(config)], config: config.server });
  client = createClient(InferenceService, createGrpcTransport({ baseUrl: server.url }));
});
afterAll(() => server?.shutdown());

const text = (value: string) => ({ prompt: { kind: { case: "text" as const, value } } });

async function* stream(
  requests: MessageInitShape<typeof TokenizeBatchRequestSchema>[],
): AsyncIterable<MessageInitShape<typeof TokenizeBatchRequestSchema>> {
  yield* requests;
}

describe("InferenceService.TokenizeBatch", () => {
  it("answers every prompt in order, a refusal as that prompt's error", async () => {
    const results = [];
    for await (const r of client.tokenizeBatch(stream([text("1+1"), text("∀ n, n = n"), {}, text("2*3")]))) results.push(r);
    expect(results.map((r) => r.index)).toEqual([0, 1, 2, 3]);
    expect(results[0]!.tokenIds).toEqual((await client.tokenize(text("1+1"))).tokenIds);
    expect(results[3]!.tokenIds).toEqual((await client.tokenize(text("2*3"))).tokenIds);
    expect(results[0]!.error).toBe("");
    // The same refusal Tokenize answers with INVALID_ARGUMENT.
    const refusal = await client.tokenize(text("∀ n, n = n")).then(
      () => "",
      (e: Error) => e.message,
    );
    expect(refusal).not.toBe("");
    expect(results[1]!.tokenIds).toEqual([]);
    expect(refusal).toContain(results[1]!.error);
    expect(results[2]!.error).toBe("prompt is required: set prompt.text, prompt.chat or prompt.token_ids");
  });

  it("answers an empty stream with no results", async () => {
    const results: unknown[] = [];
    for await (const r of client.tokenizeBatch(stream([]))) results.push(r);
    expect(results).toEqual([]);
  });
});
