// A vLLM fleet as the mesh runs it: one inference replica per vLLM server (the OpenAI-compatible
// stand-in, which keeps runtime-loaded LoRA adapters per server, as vLLM does). The orchestrator's
// clients (connectMesh) balance Generate over the replicas; an adapter loaded through them reaches
// every vLLM server, and a replica that comes back over a restarted vLLM, holding no adapter, is
// given it before anything is sampled there.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInferenceService, InferenceConfigSchema } from "@lean-grpo/inference";
import { loadConfig, serve, type RunningServer } from "@lean-grpo/kit";
import { connectMesh, OrchestratorConfigSchema, type MeshClients } from "@lean-grpo/orchestrator";
import { startVllmStandIn, type VllmStandIn } from "../fakes/vllm/vllm-stand-in.js";

interface Pair {
  vllm: VllmStandIn;
  inference: RunningServer;
}

/** A vLLM server and the inference replica in front of it, on `port` (0: any). */
async function startPair(port = 0): Promise<Pair> {
  const vllm = await startVllmStandIn();
  const config = loadConfig(InferenceConfigSchema, {
    overrides: [
      `vllm.url=${vllm.url}`,
      // Each pair its own adapters.dir (its vLLM reads there); the stand-in reads no file.
      `adapters.dir=${mkdtempSync(join(tmpdir(), "fleet-adapters-"))}`,
      `server.port=${port}`,
      "server.shutdown.drain_delay_ms=0",
      "server.shutdown.grace_period_ms=200",
    ],
  });
  const inference = await serve({ name: "inference", services: [createInferenceService(config)], config: config.server });
  return { vllm, inference };
}

const pairs: Pair[] = [];
let clients: MeshClients;
const adapter = [
  { path: "adapter_config.json", data: Buffer.from(JSON.stringify({ peft_type: "LORA", r: 2, lora_alpha: 4 })) },
  { path: "adapter_model.safetensors", data: Buffer.alloc(64, 1) },
];

beforeAll(async () => {
  pairs.push(await startPair(), await startPair());
  clients = connectMesh(
    OrchestratorConfigSchema.parse({
      services: {
        inference: pairs.map((p) => p.inference.url),
        // Not called here: only the inference side is under test.
        reward: "http://127.0.0.1:9",
        learner: "http://127.0.0.1:9",
      },
    }),
  );
});

afterAll(async () => {
  clients?.close();
  for (const { vllm, inference } of pairs) {
    await inference.shutdown();
    await vllm.close();
  }
});

const generate = () =>
  clients.inference.generate({
    prompt: { kind: { case: "tokenIds", value: { ids: [5, 6, 7] } } },
    n: 2,
    adapter: "policy-v1",
    sampling: { maxTokens: 4 },
  });

/** Paths of the requests a vLLM server received, with the model asked for where there is one. */
const traffic = (vllm: VllmStandIn) =>
  vllm.requests
    .filter((r) => r.path === "/v1/load_lora_adapter" || r.path === "/v1/completions")
    .map((r) => (r.path === "/v1/load_lora_adapter" ? `load ${r.body.lora_name}` : `sample ${r.body.model}`));

describe("a fleet of vLLM servers, one inference replica each", () => {
  it("loads an adapter into every vLLM server, and samples with it on each", async () => {
    const loaded = await clients.adapters.loadFiles("policy-v1", 1, adapter);
    expect(loaded).toHaveLength(2);
    for (const { vllm } of pairs) expect(vllm.adapters.has("policy-v1")).toBe(true);
    for (let i = 0; i < 6; i++) expect((await generate()).completions.every((c) => c.adapter === "policy-v1")).toBe(true);
    for (const { vllm } of pairs) {
      const seen = traffic(vllm);
      expect(seen[0]).toBe("load policy-v1");
      expect(seen.filter((s) => s === "sample policy-v1").length).toBeGreaterThan(0);
    }
  });

  it("gives a replica back over a restarted vLLM the adapter before it samples there", async () => {
    const gone = pairs.pop()!;
    const port = Number(new URL(gone.inference.url).port);
    await gone.inference.shutdown();
    await gone.vllm.close();
    const back = await startPair(port);
    pairs.push(back);
    for (let i = 0; i < 6; i++) await generate();
    // The new vLLM server was empty: it was asked to load policy-v1 before its first completion with it, once.
    const seen = traffic(back.vllm);
    expect(seen[0]).toBe("load policy-v1");
    expect(seen.filter((s) => s.startsWith("load"))).toEqual(["load policy-v1"]);
    expect(seen.filter((s) => s === "sample policy-v1").length).toBeGreaterThan(0);
  });

  it("never samples for an adapter nobody loaded: the replica's refusal names it", async () => {
    const error = await clients.inference
      .generate({ prompt: { kind: { case: "tokenIds", value: { ids: [5] } } }, adapter: "policy-v9", sampling: { maxTokens: 2 } })
      .catch((e: Error) => e);
    expect(String(error)).toContain('adapter "policy-v9" is not loaded');
    for (const { vllm } of pairs) expect(traffic(vllm)).not.toContain("sample policy-v9");
  });
});
