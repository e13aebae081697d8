// Config of the reward service: YAML file < LEANGRPO_REWARD_* env < flags < dotted overrides.
//
//   reward:
//     preset: shaped                      # binary | shaped | lenient | strict
//     scorers:
//       length: { weight: 0.5, max_tokens: 8192 }   # weight and parameters; see ListScorers
//   verifier:
//     url: http://127.0.0.1:50052         # or a list of URLs, or dns:///host:port (dns+https:/// over TLS)
import { z } from "zod";
import { ServerConfigSchema, ServiceTargetSchema } from "@lean-grpo/kit";
import { PRESET_NAMES } from "./reward/presets.js";
import { SCORERS } from "./reward/registry.js";
import { applyOverrides, presetReward, RewardSpecError, type ResolvedReward, type ScorerOverride } from "./reward/reward-spec.js";

const WeightSchema = z
  .number()
  .refine((w) => Number.isFinite(w) && w >= 0, { message: "expected a finite number >= 0 (0 reports the scorer but adds nothing)" });

/** reward.scorers.<name>: its weight and any of its parameters, flat. */
const ScorersSchema = z
  .object(
    Object.fromEntries(
      SCORERS.map((scorer) => [
        scorer.name,
        z
          .object({
            /** The scorer's weight in the reward's sum; 0 reports it but adds nothing. */
            weight: WeightSchema.optional(),
            ...Object.fromEntries(
              Object.entries(scorer.params).map(([key, param]) => [key, param.schema.optional().describe(param.description)]),
            ),
          })
          .strict()
          .optional(),
      ]),
    ),
  )
  .strict();

const RewardSectionSchema = z
  .object({
    /** The preset the scorers below modify. */
    preset: z.enum(PRESET_NAMES as [string, ...string[]]).default("binary"),
    scorers: ScorersSchema.prefault({}),
  })
  .strict()
  .superRefine((section, ctx) => {
    // Rules across parameters (and across the preset), once each value on its own is valid.
    if (!ScorersSchema.safeParse(section.scorers).success) return;
    try {
      configuredReward(section);
    } catch (error) {
      if (!(error instanceof RewardSpecError)) throw error;
      const path = error.field.split(".").slice(1);
      ctx.addIssue({
        code: "custom",
        path,
        message: error.detail,
        input: path.reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], section),
      });
    }
  });

const HttpUrlSchema = z.string().refine((url) => /^https?:\/\/\S+$/.test(url), { message: "expected an http(s):// URL" });

export const RewardConfigSchema = z
  .object({
    server: ServerConfigSchema.prefault({ port: 50053 }),
    verifier: z
      .object({
        /** LeanVerifierService replicas; unset: Lean completions must come with their verifications. */
        url: z.union([ServiceTargetSchema, z.array(HttpUrlSchema).min(1)]).optional(),
        /** Bearer token sent on every Verify call (the verifier's server.auth.token); default: LEANGRPO_AUTH_TOKEN. */
        token: z.string().min(1).optional(),
        /** VerifyRequest.timeout_ms, Lean's time limit per proof; 0 leaves it to the verifier. */
        lean_timeout_ms: z.number().int().min(0).default(0),
        /** Deadline for verifier calls when the caller set none, ms. */
        default_deadline_ms: z.number().int().positive().default(300_000),
        /** Verify calls in flight per request. */
        max_parallel: z.number().int().positive().default(64),
      })
      .strict()
      .prefault({}),
    reward: RewardSectionSchema.prefault({}),
    /** Completions per ScoreGroup call; more is RESOURCE_EXHAUSTED. */
    max_group_size: z.number().int().positive().default(1024),
  })
  .strict();

export type RewardConfig = z.infer<typeof RewardConfigSchema>;

type RewardSection = z.infer<typeof RewardSectionSchema>;

/** The reward the server computes when a request names none: the preset with config overrides. */
export function configuredReward(section: RewardSection): ResolvedReward {
  const base = presetReward(section.preset, "reward.preset");
  const overrides: ScorerOverride[] = Object.entries(section.scorers).flatMap(([name, entry]) => {
    if (!entry) return [];
    const { weight, ...params } = entry as { weight?: number } & Record<string, unknown>;
    const field = `reward.scorers.${name}`;
    return [{ name, params, field, paramsField: field, ...(weight === undefined ? {} : { weight }) }];
  });
  if (overrides.length === 0) return base;
  return {
    ...applyOverrides(base, overrides),
    name: `${base.name}+config`,
    description: `Preset ${base.name} with the reward.scorers settings of the server's config.`,
  };
}

export function verifierUrls(config: RewardConfig): string[] {
  const url = config.verifier.url;
  return url === undefined ? [] : Array.isArray(url) ? url : [url];
}
