// LoadAdapter uploads an attacker controls: files that arrived whole (digests right)
// but that the backend refuses, and a call dropped in the middle, leave nothing on
// disk; an upload over adapters.max_bytes is refused before a byte is written.
import { afterEach, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { InferenceService, LoadAdapterRequestSchema, type LoadAdapterRequest } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { loadConfig, serve } from "@lean-grpo/kit";
import { InferenceConfigSchema } from "../src/config.js";
import { createInferenceService } from "../src/service.js";
import { startVllmStandIn } from "../../../tests/fakes/vllm/vllm-stand-in.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

async function start(overrides: string[] = []) {
  const vllm = await startVllmStandIn();
  cleanup.push(() => vllm.close());
  const adapterDir = mkdtempSync(join(tmpdir(), "adapter-upload-"));
  const config = loadConfig(InferenceConfigSchema, {
    overrides: [
      `vllm.url=${vllm.url}`,
      `adapters.dir=${adapterDir}`,
      "server.port=0",
      "server.shutdown.drain_delay_ms=0",
      "server.shutdown.grace_period_ms=200",
      ...overrides,
    ],
  });
  const server = await serve({ name: "inference", services: [createInferenceService(config)], config: config.server });
  cleanup.push(() => server.shutdown());
  const client = createClient(InferenceService, createGrpcTransport({ baseUrl: server.url }));
  return { vllm, client, adapterDir, server };
}

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** A well-formed upload of `name`: the header, then each file in one chunk. */
function upload(name: string, weights = Buffer.alloc(200_000, 7)): LoadAdapterRequest[] {
  const config = Buffer.from(JSON.stringify({ r: 8, lora_alpha: 16, peft_type: "LORA" }));
  return [
    create(LoadAdapterRequestSchema, {
      part: {
        case: "source",
        value: {
          name,
          version: 1n,
          files: [
            { path: "adapter_config.json", size: BigInt(config.length), sha256: sha(config) },
            { path: "adapter_model.safetensors", size: BigInt(weights.length), sha256: sha(weights) },
          ],
        },
      },
    }),
    create(LoadAdapterRequestSchema, {
      part: { case: "chunk", value: { path: "adapter_config.json", offset: 0n, data: config, eof: true } },
    }),
    create(LoadAdapterRequestSchema, {
      part: { case: "chunk", value: { path: "adapter_model.safetensors", offset: 0n, data: weights, eof: true } },
    }),
  ];
}

async function* messagesOf<T>(messages: T[], hold?: Promise<void>): AsyncIterable<T> {
  yield* messages;
  if (hold) await hold;
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );

describe("LoadAdapter uploads", () => {
  it("removes the files of an upload the backend refuses", async () => {
    const { client, vllm, adapterDir } = await start();
    // vLLM already holds this name (loaded behind the service's back), so it refuses the load.
    vllm.adapters.set("taken", "/elsewhere");
    const error = await failure(client.loadAdapter(messagesOf(upload("taken"))));
    expect(error?.rawMessage).toContain("vLLM: 400");
    expect(readdirSync(adapterDir)).toEqual([]);
    // The same upload under a free name loads and stays.
    await client.loadAdapter(messagesOf(upload("free")));
    expect(readdirSync(adapterDir)).toEqual(["free"]);
  });

  it("removes the files of an upload whose call is cancelled before the stream ends", async () => {
    const { client, adapterDir } = await start();
    const controller = new AbortController();
    const messages = upload("dropped");
    // Header and the first file, then the client gives up.
    const call = failure(client.loadAdapter(messagesOf(messages.slice(0, 2), new Promise(() => {})), { signal: controller.signal }));
    await waitFor(() => readdirSync(adapterDir).includes("dropped"));
    controller.abort();
    expect((await call)?.code).toBe(Code.Canceled);
    await waitFor(() => readdirSync(adapterDir).length === 0);
  });

  it("refuses an upload over adapters.max_bytes, naming the key, before writing anything", async () => {
    const { client, adapterDir } = await start(["adapters.max_bytes=300000", "server.limits.max_concurrent_calls=1"]);
    const error = await failure(client.loadAdapter(messagesOf(upload("big", Buffer.alloc(400_000, 7)))));
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.rawMessage).toMatch(/source\.files announce 4000\d\d bytes; .* at most 300000 bytes \(adapters\.max_bytes\)/);
    expect(readdirSync(adapterDir)).toEqual([]);
    // Answered, the refused call holds no slot (of the one there is), though the client never
    // closed its side of the stream: the next upload goes through.
    await client.loadAdapter(messagesOf(upload("small")));
    expect(readdirSync(adapterDir)).toEqual(["small"]);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000) {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
