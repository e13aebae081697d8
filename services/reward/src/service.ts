// RewardService: the handler, mountable in-process (embedded mode, tests) or served by src/server.ts.
import { create, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { envAuthToken, type ServiceRegistration } from "@lean-grpo/kit";
import { screenTheorem } from "@lean-grpo/lean";
import { ParameterInfoSchema } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import {
  type ListScorersResponseSchema,
  RewardPresetSchema,
  RewardService,
  ScorerInfoSchema,
  ScorerSpecSchema,
  type RewardPreset,
  type RewardSpec,
} from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { configuredReward, verifierUrls, type RewardConfig } from "./config.js";
import { gatherEvidence, type CompletionInput, type EvidenceContext } from "./reward/evidence.js";
import { groupStats } from "./reward/group-stats.js";
import { PRESETS } from "./reward/presets.js";
import { SCORERS } from "./reward/registry.js";
import { describeBounds } from "./reward/reward-bounds.js";
import { composeReward } from "./reward/reward-composer.js";
import { applyOverrides, presetReward, RewardSpecError, type ResolvedReward } from "./reward/reward-spec.js";
import { fitToBudget } from "./reward/generation-budget.js";
import { mathAnswerScorer, mathJudgeOptions } from "./scorers/math-answer.js";
import { connectVerifier, type Verifier } from "./verification/verifier.js";

export interface RewardServiceRegistration extends ServiceRegistration<typeof RewardService> {
  /** Closes the verifier client; serve() calls it once the drain is over. */
  close(): void;
}

export function createRewardService(config: RewardConfig): RewardServiceRegistration {
  const configured = configuredReward(config.reward);
  const urls = verifierUrls(config);
  const verifier: Verifier | undefined = urls.length > 0 ? connectVerifier(urls, config.verifier.token ?? envAuthToken()) : undefined;
  const listing = scorerListing(configured);

  function evidenceContext(reward: ResolvedReward, ctx: HandlerContext, requestId: string): EvidenceContext {
    return {
      verifier,
      signal: ctx.signal,
      deadline: Date.now() + (ctx.timeoutMs() ?? config.verifier.default_deadline_ms),
      leanTimeoutMs: config.verifier.lean_timeout_ms,
      maxParallelVerifications: config.verifier.max_parallel,
      math: mathJudgeOptions(reward.scorers.find((s) => s.scorer === mathAnswerScorer)?.params),
      requestId,
    };
  }

  return {
    service: RewardService,
    impl: {
      async score(req, ctx) {
        const theorem = screened(required(req.theorem, "theorem"));
        const completion = required(req.completion, "completion");
        const reward = rewardFor(req.spec, configured);
        const inputs: CompletionInput[] = [
          {
            completion,
            field: "completion",
            verificationField: "verification",
            ...(req.verification ? { verification: req.verification } : {}),
          },
        ];
        const [evidence] = await gatherEvidence(theorem, inputs, evidenceContext(reward, ctx, theorem.id || theorem.name));
        return { result: composeReward(reward, evidence!, undefined) };
      },

      async scoreGroup(req, ctx) {
        const theorem = screened(required(req.theorem, "theorem"));
        const n = req.completions.length;
        if (n === 0) throw new ConnectError("completions is empty: send the group's completions", Code.InvalidArgument);
        if (n > config.max_group_size) {
          throw new ConnectError(
            `completions has ${n} entries; at most ${config.max_group_size} per group (config key max_group_size)`,
            Code.ResourceExhausted,
          );
        }
        if (req.verifications.length !== 0 && req.verifications.length !== n) {
          throw new ConnectError(
            `verifications has ${req.verifications.length} entries for ${n} completions: send none, or one per completion in the same order`,
            Code.InvalidArgument,
          );
        }
        const reward = rewardFor(req.spec, configured);
        const inputs: CompletionInput[] = req.completions.map((completion, i) => ({
          completion,
          field: `completions[${i}]`,
          verificationField: `verifications[${i}]`,
          ...(req.verifications[i] ? { verification: req.verifications[i] } : {}),
        }));
        const evidence = await gatherEvidence(theorem, inputs, evidenceContext(reward, ctx, req.groupId || theorem.id || theorem.name));
        const group = { size: n, solved: evidence.filter((e) => e.solved).length };
        const results = evidence.map((e) => composeReward(reward, e, group));
        const stats = groupStats(
          results.map((r) => r.reward),
          results.map((r) => r.solved),
        );
        return { results, rewardMean: stats.mean, rewardStd: stats.std, passRate: stats.passRate };
      },

      listScorers: () => listing,
    },
    close: () => verifier?.close(),
  };
}

/** The theorem, once it passed the verifier's theorem screen (refused here before any verification is asked for). */
function screened<T extends { header: string; imports: readonly string[]; context: string; statement: string }>(theorem: T): T {
  const screen = screenTheorem(theorem);
  if (!screen.ok) throw new ConnectError(`theorem.${screen.field}: ${screen.reason}`, Code.InvalidArgument);
  return theorem;
}

/** ListScorers' answer: it changes only with the config, so it is built once. */
function scorerListing(configured: ResolvedReward): MessageInitShape<typeof ListScorersResponseSchema> {
  return {
    scorers: SCORERS.map((scorer) =>
      create(ScorerInfoSchema, {
        name: scorer.name,
        description: scorer.description,
        groupLevel: scorer.groupLevel,
        params: Object.entries(scorer.params).map(([name, param]) =>
          create(ParameterInfoSchema, {
            name,
            type: param.type,
            defaultValue: JSON.stringify(param.default),
            description: `${param.description} Accepts ${param.accepts}.`,
            allowedValues: [...(param.allowedValues ?? [])],
          }),
        ),
      }),
    ),
    presets: PRESETS.map((preset) => presetMessage(presetReward(preset.name, "preset"))),
    active: presetMessage(configured),
  };
}

function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw new ConnectError(`${field} is required`, Code.InvalidArgument);
  return value;
}

/** The request's reward: the server's when the spec is empty, else its preset (or the server's) with its scorers; fitted to its generation budget. */
function rewardFor(spec: RewardSpec | undefined, configured: ResolvedReward): ResolvedReward {
  if (!spec) return configured;
  try {
    return fitToBudget(specReward(spec, configured), spec.maxCompletionTokens);
  } catch (error) {
    if (error instanceof RewardSpecError) throw new ConnectError(error.message, Code.InvalidArgument);
    throw error;
  }
}

/** The spec's preset (or the server's reward) with its scorers. */
function specReward(spec: RewardSpec, configured: ResolvedReward): ResolvedReward {
  if (spec.preset === "" && spec.scorers.length === 0) return configured;
  const base = spec.preset === "" ? configured : presetReward(spec.preset, "spec.preset");
  const resolved = applyOverrides(
    base,
    spec.scorers.map((s, i) => ({
      name: s.name,
      weight: s.weight,
      params: s.params ?? {},
      field: `spec.scorers[${i}]`,
      paramsField: `spec.scorers[${i}].params`,
    })),
  );
  return spec.scorers.length === 0
    ? resolved
    : { ...resolved, name: `${base.name}+request`, description: `${base.name} with the request's scorers` };
}

function presetMessage(reward: ResolvedReward): RewardPreset {
  return create(RewardPresetSchema, {
    name: reward.name,
    description: `${reward.description} Rewards: ${describeBounds(reward)}.`,
    scorers: reward.scorers.map((s) => create(ScorerSpecSchema, { name: s.scorer.name, weight: s.weight, params: s.params as JsonObject })),
  });
}
