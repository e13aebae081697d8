// One group in whole-proof mode: Generate `num_generations` completions for a theorem
// with the current adapter, then ScoreGroup them. Times are kept apart for the step's
// breakdown. (Tactic mode's groups are tactic-rollout.ts; both give a RolloutGroup.)
import type { Completion, Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { reasoningMaskOf } from "../config/reasoning-mask.js";
import type { MeshClients } from "../mesh-clients.js";
import { buildPrompt, leanProofFormat, promptText } from "./prompts.js";
import type { RunConfig } from "../config/run-config.js";
import { scoreGroup } from "./score-group.js";
import type { ReadableGroup } from "../training/step-samples.js";
import { inSpan, recordedSpan, runAttributes } from "../outputs/tracing.js";
import { countReplayRefusals } from "../outputs/replay-refusals.js";
import { countTheoremErrors, theoremErrorWarning, type TheoremErrors } from "../outputs/theorem-errors.js";
import { createLogger } from "@lean-grpo/kit";

const log = createLogger("orchestrator");

/** One TrainingSample: the exact prompt ids the sampler saw and the completion it produced after them. */
export interface RolloutSample {
  sampleId: string;
  promptTokenIds: number[];
  completion: Completion;
  reward: number;
  /** Which completion tokens are the model's (true) and which the environment's (repair mode's feedback); absent: all the model's. */
  completionMask?: boolean[];
}

export interface RolloutGroup {
  groupId: string;
  theorem: Theorem;
  /** What the learner trains on: one sample per completion (whole mode) or per tactic turn (tactic mode). */
  samples: RolloutSample[];
  /** One reward per completion (whole mode) or trajectory (tactic mode); their spread is the group's signal. */
  rewards: number[];
  solved: boolean[];
  rewardStd: number;
  /** Tactic mode: tactics each trajectory sent to ApplyTactic. */
  proofSteps?: number[];
  /** Tactic mode: trajectories whose StartProof the verifier refused (the statement does not elaborate). */
  unstarted?: number;
  /** Tactic mode: trajectories started again because their session's verifier replica was lost. */
  sessionRestarts?: number;
  /** Repair mode: attempts per trajectory, and whether its first attempt was solved (repair-metrics.ts). */
  repair?: { turns: number[]; solvedFirst: boolean[] };
  /** Lean tasks: proofs the REPL accepted and the verifier's kernel replay refused (replay-refusals.ts). */
  replayRefusals?: number;
  /** Lean tasks: proofs checked against a theorem that does not elaborate under its header (theorem-errors.ts). */
  theoremErrors?: TheoremErrors;
  generateS: number;
  /** Verification: inside ScoreGroup the longest verification of the group (they run concurrently); tactic mode adds its Lean calls. */
  verifyS: number;
  /** ScoreGroup's wall time less verification. */
  scoreS: number;
  /** The prompt and each completion with its score, for the step's readable samples (step-samples.ts). */
  readable?: ReadableGroup;
}

export interface RolloutContext {
  clients: MeshClients;
  config: RunConfig;
  runId: string;
  step: number;
  adapter: string;
  chatPrompts: boolean;
  signal?: AbortSignal;
}

export function rolloutGroup(ctx: RolloutContext, theorem: Theorem, groupId: string, seed: number): Promise<RolloutGroup> {
  const attributes = runAttributes(ctx.runId, ctx.step, theorem.id);
  return inSpan("rollout.group", { ...attributes, "leangrpo.group_id": groupId }, async (span) => {
    const training = ctx.config.training;
    const prompt = buildPrompt(theorem, ctx.config.prompt, ctx.chatPrompts);
    const started = performance.now();
    const startedAt = Date.now();
    const generated = await inSpan("rollout.generate", attributes, () =>
      ctx.clients.withRetry(
        "inference",
        () =>
          ctx.clients.inference.generate(
            {
              prompt,
              n: training.num_generations,
              adapter: ctx.adapter,
              requestId: `${ctx.runId}/${groupId}`,
              sampling: {
                maxTokens: training.max_tokens,
                temperature: training.temperature,
                topP: training.top_p,
                topK: training.top_k,
                reasoningMask: reasoningMaskOf(ctx.config),
                seed: BigInt(seed),
              },
            },
            { signal: ctx.signal },
          ),
        ctx.signal,
      ),
    );
    const scoring = performance.now();
    const {
      scored,
      seconds: scoreGroupS,
      verifyS,
    } = await scoreGroup(ctx, { theorem, completions: generated.completions, groupId }, attributes);
    const rewards = scored.results.map((r) => r.reward);
    const theoremErrors = countTheoremErrors(scored.results);
    const warning = theoremErrorWarning(theorem, theoremErrors);
    if (warning) log.warn({ run: ctx.runId, step: ctx.step, theorem: theorem.id }, warning);
    const solved = scored.results.map((r) => r.solved);
    generated.completions.forEach((completion, i) => {
      recordedSpan(
        "rollout.completion",
        {
          ...attributes,
          "leangrpo.completion_index": i,
          "leangrpo.reward": rewards[i] ?? 0,
          "leangrpo.solved": solved[i] ?? false,
          "leangrpo.completion_tokens": completion.tokenIds.length,
        },
        startedAt,
        Date.now(),
      );
    });
    span.setAttributes({ "leangrpo.reward_mean": scored.rewardMean, "leangrpo.pass_rate": scored.passRate });
    return {
      groupId,
      theorem,
      samples: generated.completions.map((completion, i) => ({
        sampleId: `${groupId}/${completion.index}`,
        promptTokenIds: generated.promptTokenIds,
        completion,
        reward: rewards[i] ?? 0,
      })),
      rewards,
      solved,
      rewardStd: scored.rewardStd,
      replayRefusals: countReplayRefusals(scored.results),
      theoremErrors,
      readable: {
        groupId,
        theoremId: theorem.id,
        prompt: promptText(theorem, ctx.config.prompt),
        ...leanProofFormat(theorem),
        sampled: prompt,
        completions: generated.completions,
        results: scored.results,
      },
      generateS: (scoring - started) / 1000,
      verifyS,
      scoreS: scoreGroupS - verifyS,
    };
  });
}
