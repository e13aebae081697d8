// After each adapter sync: did the inference service really load the learner's adapter?
// A LoRA sync can fail silently (verl #3516, #5211; TRL #5312): nothing errors, the sampler
// keeps the old weights, and the run trains on the wrong policy. The step's own
// sampling_logp_difference_mean cannot tell that from the one-step lag of an async run, so
// the check compares the two services at the SAME version: one fixed probe completion
// (the run's first prompt, the run's sampling distribution, seed 0) is sampled by the
// inference service under the adapter just loaded, and scored by the learner, which holds
// that version (nothing trains between the sync and the check). Their mean |Δ logprob| is
// engine noise when the adapter took, and at least a training step's worth when it did not.
// Above the threshold the run stops, naming the adapter version and both numbers. With several
// inference replicas each one is probed: every replica loaded the adapter on its own.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { InferenceReplica } from "../adapter-fleet.js";
import { reasoningMaskOf } from "../config/reasoning-mask.js";
import type { MeshClients } from "../mesh-clients.js";
import { buildPrompt } from "../rollout/prompts.js";
import type { RunConfig } from "../config/run-config.js";
import { learnerLogprobsOf } from "./learner-scoring.js";

/**
 * Default threshold by inference backend (training.adapter_check.max_logp_difference overrides).
 * embedded: the tfjs sampler and learner compute in float32 from the same weights. Measured on
 * the README's async run (100 steps): the probe differs by ≤ 1.14e-6 (median 8.2e-7) when the
 * adapter took, while one step of policy change (sampling_logp_difference_mean, lag 1) was 1.5e-4
 * to 1.2e-2 (median 1.4e-3); on the test model a policy-v2 that was really version 1 differed by
 * 5.3e-3 (apps/lean-grpo/test/adapter-check.spec.ts). 2e-5 sits 17× above the noise and 7× below
 * the smallest one-step move, so even a late, slow step's stale adapter trips it. vllm:
 * bf16 kernels against a float32 learner differ by ~1e-2 per token before any lag, so 5e-2;
 * not measured here (no GPU): set it from the adapter_check_logp_difference of a run's first steps.
 */
export const ADAPTER_CHECK_THRESHOLDS: Readonly<Record<string, number>> = { embedded: 2e-5, vllm: 5e-2 };
const PROBE_TOKENS = 16;

export class AdapterNotTakenError extends Error {}

export interface AdapterCheck {
  /** Mean |inference − learner| logprob over the probe's tokens. */
  meanDifference: number;
  maxDifference: number;
  threshold: number;
}

/** The threshold for this run: the config's, else the backend's default; null when the check is off. */
export async function adapterCheckThreshold(clients: MeshClients, config: RunConfig, signal?: AbortSignal): Promise<number | null> {
  const chosen = config.training.adapter_check.max_logp_difference;
  if (chosen !== undefined) return chosen;
  const { backend } = await clients.withRetry("inference", () => clients.inference.listModels({}, { signal }), signal);
  return ADAPTER_CHECK_THRESHOLDS[backend] ?? ADAPTER_CHECK_THRESHOLDS.vllm!;
}

/** The check on every inference replica at once; the largest difference, null when no replica gave a verdict. */
export async function checkAdapterTookEverywhere(
  clients: MeshClients,
  config: RunConfig,
  probe: { theorem: Theorem; chatPrompts: boolean },
  adapter: { name: string; version: number },
  threshold: number,
  signal?: AbortSignal,
): Promise<AdapterCheck | null> {
  const checks = await Promise.all(
    clients.adapters.replicas().map((replica) => checkAdapterTook(clients, config, probe, adapter, threshold, signal, replica)),
  );
  return checks.reduce<AdapterCheck | null>((worst, c) => (c && (!worst || c.meanDifference > worst.meanDifference) ? c : worst), null);
}

/** The check on one replica (`replica`), or on whichever the balanced client picks. */
export async function checkAdapterTook(
  clients: MeshClients,
  config: RunConfig,
  probe: { theorem: Theorem; chatPrompts: boolean },
  adapter: { name: string; version: number },
  threshold: number,
  signal?: AbortSignal,
  replica?: InferenceReplica,
): Promise<AdapterCheck | null> {
  const { temperature, top_k: topK, top_p: topP } = config.training;
  const where = replica ? ` replica ${replica.url}` : "";
  const sample = (request: Parameters<MeshClients["inference"]["generate"]>[0]) =>
    replica
      ? clients.adapters.onReplica(replica, (client) => client.generate(request, { signal }), signal)
      : clients.withRetry("inference", () => clients.inference.generate(request, { signal }), signal);
  let generated: Awaited<ReturnType<MeshClients["inference"]["generate"]>>;
  try {
    generated = await sample({
      prompt: buildPrompt(probe.theorem, config.prompt, probe.chatPrompts),
      n: 1,
      sampling: { maxTokens: PROBE_TOKENS, temperature, topK, topP, seed: 0n, reasoningMask: reasoningMaskOf(config) },
      adapter: adapter.name,
      requestId: `adapter-check-v${adapter.version}`,
    });
  } catch (error) {
    // A replica down serves nobody now; it is loaded at its first Generate, and checked at the next sync.
    if (replica && error instanceof ConnectError && error.code === Code.Unavailable) return null;
    throw error;
  }
  const completion = generated.completions[0];
  // A probe that ended at once (EOS first) has no token to compare: no verdict this sync, rather than a 0.
  if (!completion || completion.tokenIds.length === 0) return null;
  const scored = await learnerLogprobsOf(clients, config, generated.promptTokenIds, completion.tokenIds, signal);
  const learnerVersion = Number(scored.adapterVersion);
  if (learnerVersion !== adapter.version) {
    throw new AdapterNotTakenError(
      `adapter check: the learner holds adapter version ${learnerVersion}, not the version ${adapter.version} just synced to the inference service (${adapter.name}); another client trained it meanwhile`,
    );
  }
  const learner = scored.sequences[0]!.logprobs;
  const differences = completion.logprobs.map((s, t) => Math.abs(s - learner[t]!));
  const check = {
    meanDifference: differences.reduce((a, b) => a + b, 0) / differences.length,
    maxDifference: Math.max(...differences),
    threshold,
  };
  if (!(check.meanDifference <= threshold)) {
    throw new AdapterNotTakenError(
      `adapter ${adapter.name} (version ${adapter.version}) did not take in the inference service${where}: on a probe completion of ${differences.length} tokens ` +
        `its logprobs differ from the learner's at the same version by mean |Δ| = ${check.meanDifference.toExponential(3)} ` +
        `(max ${check.maxDifference.toExponential(3)}), above training.adapter_check.max_logp_difference = ${threshold}; ` +
        "the sampler is not running the policy being trained",
    );
  }
  return check;
}
