// bench/startup: the prompt check StartRun makes before step 1, on the shipped model's
// embedded inference service over loopback gRPC, for a dataset and the same dataset ×10:
// (a) the orchestrator's check as it is (one TokenizeBatch stream per set) and (b) the
// baseline it replaced, one Tokenize per prompt, 16 in flight. Calls are counted by the
// server. Prints JSON. Usage: npx tsx bench/startup/main.ts [DATASET] [ROUNDS]
import { loadConfig, PathRoot, serve, type ServiceRegistration } from "@lean-grpo/kit";
import { InferenceConfigSchema, createInferenceService } from "@lean-grpo/inference";
import {
  OrchestratorConfigSchema,
  RunConfigSchema,
  buildPrompt,
  checkPromptsEncode,
  connectMesh,
  loadDataset,
  usesChatPrompts,
} from "@lean-grpo/orchestrator";
import type { Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";

process.env.LOG_LEVEL ??= "warn";
const datasetPath = process.argv[2] ?? "examples/arith.jsonl";
const rounds = Number(process.argv[3] ?? 2);

const calls: Record<string, number> = {};
/** The registration with each method counting its calls. */
function countingCalls(registration: ServiceRegistration): ServiceRegistration {
  const impl: Record<string, unknown> = {};
  for (const method of registration.service.methods) {
    const own = (registration.impl as Record<string, ((...args: unknown[]) => unknown) | undefined>)[method.localName];
    if (own === undefined) continue;
    impl[method.localName] = (...args: unknown[]) => {
      calls[method.name] = (calls[method.name] ?? 0) + 1;
      return own.apply(registration.impl, args);
    };
  }
  return { ...registration, impl: impl as ServiceRegistration["impl"] };
}
const config = loadConfig(InferenceConfigSchema, {
  overrides: ["embedded.model_dir=models/arith-tiny", "server.port=0", "server.shutdown.drain_delay_ms=0"],
});
const server = await serve({
  name: "inference",
  services: [countingCalls(createInferenceService(config))],
  config: config.server,
});
const clients = connectMesh(
  OrchestratorConfigSchema.parse({
    // Only the inference service is called; the others are never dialled.
    services: { inference: server.url, reward: "http://127.0.0.1:1", learner: "http://127.0.0.1:1" },
  }),
);
const prompt = RunConfigSchema.parse({}).prompt;
const chat = await usesChatPrompts(prompt.format, clients);

/** The check before TokenizeBatch: one Tokenize per prompt, 16 in flight. */
async function perPromptCheck(theorems: readonly Theorem[]) {
  let next = 0;
  const worker = async () => {
    while (next < theorems.length) await clients.inference.tokenize({ prompt: buildPrompt(theorems[next++]!, prompt, chat) });
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

async function measure(check: () => Promise<void>) {
  for (const key of Object.keys(calls)) delete calls[key];
  const t0 = performance.now();
  await check();
  return { seconds: (performance.now() - t0) / 1000, calls: { ...calls } };
}

// The bench reads its own file: the working directory is its root, as in `lean-grpo train`.
const base = await loadDataset(
  { root: new PathRoot({ dir: ".", key: "the working directory" }), maxBytes: 1 << 30 },
  datasetPath,
  "dataset",
);
const results = [];
for (const scale of [1, 10]) {
  const theorems = Array.from({ length: scale }, () => base).flat();
  const sets = [{ label: "dataset", theorems }];
  await measure(() => checkPromptsEncode(clients, sets, prompt, chat)); // warm-up
  for (let round = 0; round < rounds; round++) {
    // Alternating order per round, so neither gets the quieter half of a shared machine.
    const order = round % 2 === 0 ? ["batched", "per_prompt"] : ["per_prompt", "batched"];
    const row: Record<string, unknown> = { prompts: theorems.length, round };
    for (const name of order) {
      row[name] = await measure(() => (name === "batched" ? checkPromptsEncode(clients, sets, prompt, chat) : perPromptCheck(theorems)));
    }
    const batched = row.batched as { seconds: number };
    const perPrompt = row.per_prompt as { seconds: number };
    row.time_ratio_batched_over_per_prompt = Number((batched.seconds / perPrompt.seconds).toFixed(3));
    results.push(row);
  }
}
clients.close();
await server.shutdown();
process.stdout.write(`${JSON.stringify({ dataset: datasetPath, results }, null, 1)}\n`);
