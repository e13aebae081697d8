// ScoreGroup latency for a group of 8 through gRPC, the deployment's way: the
// reward service and the verifier each in their own process, the verifier's REPL
// workers being the REPL stand-in (tests/fakes/lean-repl) answering after
// `leanMs`. Baselines in the same run: the same 8 checks sent straight to the
// verifier one after another and all at once, and ScoreGroup with the
// verifications passed in (the reward service's own cost).
import { create } from "@bufbuild/protobuf";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { LeanVerifierService, ProofProgressSchema, Verdict, VerifyResponseSchema } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { CompletionSchema, TaskKind, TheoremSchema } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { createServiceClient } from "@lean-grpo/kit";
import { startServiceProcess } from "../../tests/support/service-process.js";
import { startVerifierProcess } from "../../tests/support/verifier-process.js";

export interface LatencyOptions {
  calls: number;
  leanMs: number;
  workers: number;
}

interface Latency {
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  meanMs: number;
}

function summarise(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => +sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2);
  return { p50Ms: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), meanMs: +(samples.reduce((a, b) => a + b, 0) / samples.length).toFixed(2) };
}

/**
 * Runs the scenarios round-robin, one call each per round, so that warm-up and
 * drift on a shared machine weigh on all of them alike; the first rounds are discarded.
 */
async function timeInterleaved<K extends string>(calls: number, scenarios: Record<K, () => Promise<unknown>>): Promise<Record<K, Latency>> {
  const names = Object.keys(scenarios) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  const warmup = 30;
  for (let round = 0; round < warmup + calls; round++) {
    for (const name of names) {
      const start = performance.now();
      await scenarios[name]();
      if (round >= warmup) samples[name].push(performance.now() - start);
    }
  }
  return Object.fromEntries(names.map((name) => [name, summarise(samples[name])])) as Record<K, Latency>;
}

export async function measureGroupLatency(options: LatencyOptions) {
  const verifier = await startVerifierProcess(
    { rules: [{ when: { cmd: { includes: ":= by" } }, declares: { axioms: ["propext"] } }], delayMs: options.leanMs },
    // No recycling of workers mid-run: a respawn would show as the reward service's latency.
    [`repl.pool_size=${options.workers}`, "repl.max_requests_per_worker=0"],
  );
  const reward = await startServiceProcess("reward", [
    "server.shutdown.drain_delay_ms=0",
    `verifier.url=${verifier.url}`,
    "reward.preset=shaped",
  ]);
  const rewardClient = createServiceClient(RewardService, { endpoints: [reward.url] });
  const verifierClient = createServiceClient(LeanVerifierService, { endpoints: [verifier.url] });
  try {
    const theorem = create(TheoremSchema, {
      id: "bench",
      name: "add_zero'",
      statement: "theorem add_zero' (n : Nat) : n + 0 = n",
      imports: ["Mathlib"],
      kind: TaskKind.LEAN_PROOF,
    });
    const proofs = [
      "simp",
      "omega",
      "rfl",
      "simp only [Nat.add_zero]",
      "exact Nat.add_zero n",
      "induction n <;> simp",
      "norm_num",
      "decide",
    ].map((t) => `by ${t}`);
    const completion = (text: string) => create(CompletionSchema, { text, tokenIds: Array.from(text, (c) => c.codePointAt(0)!) });
    const leanGroup = proofs.map((proof) => completion(`<think>Try ${proof}.</think>\n\`\`\`lean\n${proof}\n\`\`\``));
    const verifications = proofs.map(() =>
      create(VerifyResponseSchema, {
        verdict: Verdict.PROVED,
        progress: create(ProofProgressSchema, { tacticsTotal: 1, tacticsValidBeforeFirstError: 1 }),
      }),
    );
    const math = create(TheoremSchema, { id: "bench-math", answer: "\\frac{\\sqrt{2}}{2}", kind: TaskKind.MATH_ANSWER });
    const mathGroup = [
      "\\frac{1}{\\sqrt2}",
      "0.7071",
      "\\frac{\\sqrt{2}}{2}",
      "\\sqrt{0.5}",
      "1",
      "\\frac{2}{\\sqrt{8}}",
      "",
      "\\sqrt2",
    ].map((a) => completion(`<think>Rationalise.</think> The answer is \\boxed{${a}}.`));
    const opts = { timeoutMs: 60_000 };
    const results = await timeInterleaved(options.calls, {
      scoreGroupVerifying: () => rewardClient.client.scoreGroup({ theorem, completions: leanGroup }, opts),
      verifyDirectSequential: async () => {
        for (const proof of proofs) await verifierClient.client.verify({ theorem, proof }, opts);
      },
      verifyDirectParallel: () => Promise.all(proofs.map((proof) => verifierClient.client.verify({ theorem, proof }, opts))),
      scoreGroupVerificationsPassedIn: () => rewardClient.client.scoreGroup({ theorem, completions: leanGroup, verifications }, opts),
      scoreGroupMath: () => rewardClient.client.scoreGroup({ theorem: math, completions: mathGroup }, opts),
    });
    // Sanity: the service's group really was verified and proved.
    const check = await rewardClient.client.scoreGroup({ theorem, completions: leanGroup }, opts);
    if (check.passRate !== 1) throw new Error(`expected every proof proved, got pass rate ${check.passRate}`);
    return results;
  } finally {
    rewardClient.transport.close();
    verifierClient.transport.close();
    await reward.stop();
    await verifier.stop();
  }
}
