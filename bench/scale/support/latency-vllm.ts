// Inference replicas over latency-bound vLLM stand-ins, one vLLM server per replica (the fleet
// model of docs/guide/vllm-gpu.md): each stand-in (tests/fakes/vllm, vLLM's wire protocol)
// produces a fixed number of tokens per second, one request after another as a saturated GPU
// does, so a fleet's throughput is its servers' and not this machine's two cores'.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInferenceService, InferenceConfigSchema } from "@lean-grpo/inference";
import { loadConfig, serve, type RunningServer } from "@lean-grpo/kit";
import { startVllmStandIn, type VllmStandIn } from "../../../tests/fakes/vllm/vllm-stand-in.js";

export interface LatencyBoundFleet {
  /** The inference replicas' URLs, one per vLLM server. */
  urls: string[];
  /** Requests each vLLM server answered at /v1/completions. */
  completionsServed(): number[];
  close(): Promise<void>;
}

export async function startLatencyBoundFleet(replicas: number, tokensPerSecond: number): Promise<LatencyBoundFleet> {
  const pairs: { vllm: VllmStandIn; inference: RunningServer }[] = [];
  for (let i = 0; i < replicas; i++) {
    const vllm = await startVllmStandIn({ tokensPerSecond });
    const config = loadConfig(InferenceConfigSchema, {
      overrides: [
        `vllm.url=${vllm.url}`,
        `adapters.dir=${mkdtempSync(join(tmpdir(), "bench-scale-adapters-"))}`,
        "server.port=0",
        "server.shutdown.drain_delay_ms=0",
      ],
    });
    pairs.push({ vllm, inference: await serve({ name: "inference", services: [createInferenceService(config)], config: config.server }) });
  }
  return {
    urls: pairs.map((p) => p.inference.url),
    completionsServed: () => pairs.map((p) => p.vllm.requests.filter((r) => r.path === "/v1/completions").length),
    async close() {
      for (const { vllm, inference } of pairs) {
        await inference.shutdown();
        await vllm.close();
      }
    },
  };
}
