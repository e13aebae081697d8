// The inference service (embedded tfjs sampler, in-process on a loopback port) with a
// learner's adapter loaded into it the way a run syncs one: ExportAdapter's stream relayed
// as LoadAdapter's (manifest → source with the file list, chunks unchanged).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { create } from "@bufbuild/protobuf";
import { InferenceService, LoadAdapterRequestSchema, type LoadAdapterRequest } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { createInferenceService, InferenceConfigSchema } from "@lean-grpo/inference";
import { loadConfig, serve } from "@lean-grpo/kit";
import type { LearnerClient } from "./learner-calls.js";

export interface InferenceWithAdapter {
  /** Name of the adapter LoadAdapter loaded. */
  loaded: string;
  /** Four completions of up to 8 tokens at temperature 1 (seeded), with their sampler logprobs. */
  sample(prompt: number[], adapter: string): Promise<{ tokenIds: number[]; logprobs: number[] }[]>;
  stop(): Promise<void>;
}

async function* relay(client: LearnerClient): AsyncIterable<LoadAdapterRequest> {
  for await (const message of client.exportAdapter({ version: 0n, chunkSize: 4096 })) {
    if (message.part.case === "manifest") {
      const { name, version, files } = message.part.value;
      yield create(LoadAdapterRequestSchema, { part: { case: "source", value: { name, version, files } } });
    } else if (message.part.case === "chunk") {
      yield create(LoadAdapterRequestSchema, { part: { case: "chunk", value: message.part.value } });
    }
  }
}

export async function startInferenceWithAdapter(modelDir: string, learner: LearnerClient): Promise<InferenceWithAdapter> {
  const adapters = await mkdtemp(path.join(tmpdir(), "conformance-adapters-"));
  const config = loadConfig(InferenceConfigSchema, {
    flags: {
      embedded: { model_dir: modelDir, tensor_backend: "cpu" },
      adapters: { dir: adapters },
      server: { port: 0, shutdown: { drain_delay_ms: 0 } },
    },
  });
  const server = await serve({ name: "inference", services: [createInferenceService(config)], config: config.server });
  try {
    const client = createClient(InferenceService, createGrpcTransport({ baseUrl: server.url }));
    const loaded = await client.loadAdapter(relay(learner));
    return {
      loaded: loaded.adapter?.name ?? "",
      async sample(prompt, adapter) {
        const response = await client.generate({
          prompt: { kind: { case: "tokenIds", value: { ids: prompt } } },
          n: 4,
          adapter,
          sampling: { maxTokens: 8, temperature: 1, seed: 5n, stop: [], stopTokenIds: [] },
        });
        return response.completions.map((c) => ({ tokenIds: c.tokenIds, logprobs: c.logprobs }));
      },
      async stop() {
        await server.shutdown();
        await rm(adapters, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await server.shutdown();
    throw error;
  }
}
