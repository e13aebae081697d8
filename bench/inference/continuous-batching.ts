// bench/inference/continuous-batching: the embedded backend with batching across requests
// off (embedded.max_batch_rows 0: calls take turns, each batched over its own n) and on
// (the default), in one run, on the README's model (models/arith-tiny, wasm) over gRPC,
// with the README run's two workloads:
//   - a held-out evaluation: the 200 problems of examples/arith-heldout.jsonl, greedy,
//     max_tokens 32, sent concurrently (as the orchestrator sends them);
//   - one step's rollouts: 16 problems of examples/arith.jsonl × n 8, T 1, max_tokens 32,
//     seeded per group, the 16 calls concurrent (as the orchestrator sends them).
// Prints wall time, generated tokens/s, the on/off ratio, and whether every completion's
// tokens (and logprobs) are identical. The base model samples (no adapter).
// Each workload first runs once on each server, timed but apart from the rounds: its
// first batch of a size grows the wasm heap and runs kernels for the first time (the
// run's first evaluation pays that, its ten later ones do not), so the rounds compare
// warm servers and the cold figures are printed beside them.
// Usage: npx tsx bench/inference/continuous-batching.ts [rounds]
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { PromptSchema } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { type GenerateRequestSchema, type GenerateResponse, InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";

type Call = MessageInitShape<typeof GenerateRequestSchema>;
import { loadConfig, serve, type RunningServer } from "@lean-grpo/kit";
import { InferenceConfigSchema, createInferenceService } from "@lean-grpo/inference";

process.env.LOG_LEVEL ??= "warn";
const rounds = Number(process.argv[2] ?? 2);
const root = (file: string) => fileURLToPath(new URL(`../../${file}`, import.meta.url));
const problems = (file: string) =>
  readFileSync(root(file), "utf8")
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as { problem: string }).problem);
// The run's prompt: the model has a chat template, and arith.yaml's math_template is "{problem}".
const chat = (text: string) => create(PromptSchema, { kind: { case: "chat", value: { messages: [{ role: "user", content: text }] } } });

const evaluation: Call[] = problems("examples/arith-heldout.jsonl").map((problem) => ({
  prompt: chat(problem),
  n: 1,
  sampling: { maxTokens: 32, temperature: 0, seed: 0n, stop: [], stopTokenIds: [] },
}));
const rollouts: Call[] = problems("examples/arith.jsonl")
  .slice(0, 16)
  .map((problem, group) => ({
    prompt: chat(problem),
    n: 8,
    sampling: { maxTokens: 32, temperature: 1, seed: BigInt(1000 + group), stop: [], stopTokenIds: [] },
  }));

async function startEmbedded(
  maxBatchRows: number,
): Promise<{ server: RunningServer; client: ReturnType<typeof createClient<typeof InferenceService>> }> {
  const config = loadConfig(InferenceConfigSchema, {
    overrides: [
      `embedded.model_dir=${root("models/arith-tiny")}`,
      "embedded.tensor_backend=wasm",
      `embedded.max_batch_rows=${maxBatchRows}`,
      "server.port=0",
      "server.shutdown.drain_delay_ms=0",
    ],
  });
  const server = await serve({ name: "inference", services: [createInferenceService(config)], config: config.server });
  const client = createClient(InferenceService, createGrpcTransport({ baseUrl: server.url }));
  await client.generate(rollouts[0]!); // loads the model
  return { server, client };
}

/** All calls in flight at once; wall seconds and the responses. */
async function timed(client: ReturnType<typeof createClient<typeof InferenceService>>, calls: Call[]) {
  const t0 = performance.now();
  const responses = await Promise.all(calls.map((call) => client.generate(call)));
  return { seconds: (performance.now() - t0) / 1000, responses };
}

const tokensOf = (responses: GenerateResponse[]) =>
  responses.reduce((n, r) => n + r.completions.reduce((m, c) => m + c.tokenIds.length, 0), 0);
const fingerprint = (responses: GenerateResponse[]) =>
  JSON.stringify(responses.map((r) => r.completions.map((c) => [c.tokenIds, c.logprobs])));

const off = await startEmbedded(0);
const on = await startEmbedded(256);
const results: Record<string, unknown> = {};
for (const [name, calls] of [
  ["heldoutEvaluation", evaluation],
  ["stepRollouts", rollouts],
] as const) {
  // Cold: each server's first sight of this workload (same order as round 0).
  const [coldOff, coldOn] = [await timed(off.client, calls), await timed(on.client, calls)];
  let identical = fingerprint(coldOff.responses) === fingerprint(coldOn.responses);
  const cold = {
    off: { wallS: round3(coldOff.seconds) },
    on: { wallS: round3(coldOn.seconds) },
    speedup: round3(coldOff.seconds / coldOn.seconds),
  };
  const perRound = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so neither always runs on the warmer process.
    const order = round % 2 === 0 ? [off, on] : [on, off];
    const [a, b] = [await timed(order[0]!.client, calls), await timed(order[1]!.client, calls)];
    const [offRun, onRun] = order[0] === off ? [a, b] : [b, a];
    identical &&= fingerprint(offRun.responses) === fingerprint(onRun.responses);
    const tokens = tokensOf(onRun.responses);
    perRound.push({
      tokens,
      off: { wallS: round3(offRun.seconds), tokensPerS: Math.round(tokens / offRun.seconds) },
      on: { wallS: round3(onRun.seconds), tokensPerS: Math.round(tokens / onRun.seconds) },
      speedup: round3(offRun.seconds / onRun.seconds),
    });
  }
  results[name] = {
    calls: calls.length,
    completions: calls.reduce((n, c) => n + (c.n ?? 1), 0),
    cold,
    rounds: perRound,
    identicalTokensAndLogprobs: identical,
  };
}

console.log(
  JSON.stringify(
    {
      benchmark: "inference/continuous-batching",
      model: "models/arith-tiny (Qwen2, 4 layers, hidden 128), wasm backend, base weights, over gRPC on loopback",
      baseline: "embedded.max_batch_rows=0 (calls take turns, each batched over its n), same process, same calls",
      goals: "evaluation >= 5x, rollouts >= 2x, identical tokens",
      ...results,
    },
    null,
    2,
  ),
);
await Promise.all([off.server.shutdown(), on.server.shutdown()]);

function round3(x: number): number {
  return Number(x.toFixed(3));
}
