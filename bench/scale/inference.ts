// bench/scale/inference: rollout throughput of one training step at 1, 2 and 4 inference
// replicas, in one run. Each replica fronts its own latency-bound vLLM stand-in
// (support/latency-vllm.ts: a fixed tokens/s per server). Through the orchestrator's own clients
// (connectMesh: the kit's balanced client and the adapter fleet), the step's adapter is loaded
// into every replica, then the step's Generate calls (GROUPS prompts × n, max_tokens, seeded per
// group, all at once, as the orchestrator sends a step's groups) run against the fleet.
// Prints JSON: wall time, generated tokens/s and the ratio to one replica per fleet size, against
// the goal of 0.9 × N; and the time to load one adapter into every replica.
// Usage: npx tsx bench/scale/inference.ts [tokens_per_second_per_server] [rounds]
import { connectMesh, OrchestratorConfigSchema } from "@lean-grpo/orchestrator";
import { startLatencyBoundFleet } from "./support/latency-vllm.js";

process.env.LOG_LEVEL ??= "warn";
const tokensPerSecond = Number(process.argv[2] ?? 250);
const rounds = Number(process.argv[3] ?? 2);
const FLEETS = [1, 2, 4];
const GROUPS = 16;
const N = 8;
const MAX_TOKENS = 32;
// A small PEFT-shaped adapter: the stand-in records the load; what is timed is the fan-out.
const ADAPTER = [
  { path: "adapter_config.json", data: Buffer.from(JSON.stringify({ peft_type: "LORA", r: 8, lora_alpha: 16 })) },
  { path: "adapter_model.safetensors", data: Buffer.alloc(4 << 20, 1) },
];

async function measure(replicas: number) {
  const fleet = await startLatencyBoundFleet(replicas, tokensPerSecond);
  const clients = connectMesh(
    OrchestratorConfigSchema.parse({
      // Only the inference side is measured; reward and learner are never called.
      services: { inference: fleet.urls, reward: "http://127.0.0.1:9", learner: "http://127.0.0.1:9" },
      rpc_deadline_ms: 600_000,
    }),
  );
  try {
    const loadStart = performance.now();
    await clients.adapters.loadFiles("policy-v1", 1, ADAPTER);
    const adapterLoadS = (performance.now() - loadStart) / 1000;
    const steps: number[] = [];
    let tokens = 0;
    for (let round = 0; round < rounds; round++) {
      const start = performance.now();
      const responses = await Promise.all(
        Array.from({ length: GROUPS }, (_, g) =>
          clients.inference.generate({
            prompt: { kind: { case: "tokenIds", value: { ids: [5, 6, 7, 8 + (g % 50)] } } },
            n: N,
            adapter: "policy-v1",
            sampling: { maxTokens: MAX_TOKENS, temperature: 1, seed: BigInt(round * GROUPS + g) },
            requestId: `bench-${round}-${g}`,
          }),
        ),
      );
      steps.push((performance.now() - start) / 1000);
      tokens = responses.reduce((sum, r) => sum + Number(r.usage?.completionTokens ?? 0), 0);
    }
    const stepS = [...steps].sort((a, b) => a - b)[Math.floor(steps.length / 2)]!;
    return {
      replicas,
      step_s: round3(stepS),
      tokens_per_step: tokens,
      tokens_per_s: Math.round(tokens / stepS),
      adapter_load_s: round3(adapterLoadS),
      calls_per_server: fleet.completionsServed(),
    };
  } finally {
    clients.close();
    await fleet.close();
  }
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

const results = [];
for (const replicas of FLEETS) results.push(await measure(replicas));
const one = results[0]!.tokens_per_s;
console.log(
  JSON.stringify(
    {
      bench: "scale/inference",
      server_tokens_per_s: tokensPerSecond,
      step: { groups: GROUPS, n: N, max_tokens: MAX_TOKENS, rounds, statistic: "median step" },
      results: results.map((r) => ({
        ...r,
        ratio_to_one: round3(r.tokens_per_s / one),
        goal: round3(0.9 * r.replicas),
        met: r.tokens_per_s / one >= 0.9 * r.replicas,
      })),
    },
    null,
    2,
  ),
);
