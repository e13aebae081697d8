// Turns a preset plus overrides (from YAML config or from a request's
// RewardSpec) into the list of scorers, weights and full parameter values that
// score completions. Every mistake is reported with the field that holds it and
// what that field accepts.
import { defaultValues } from "./params.js";
import { PRESETS, PRESET_NAMES } from "./presets.js";
import { SCORERS, SCORER_NAMES, scorerNamed } from "./registry.js";
import type { Scorer } from "./scorer.js";

export interface ResolvedScorer {
  scorer: Scorer;
  weight: number;
  params: Record<string, unknown>;
  /** The parameters a preset, the server config or a request set; the others are the scorer's defaults. */
  chosen: ReadonlySet<string>;
}

export interface ResolvedReward {
  name: string;
  description: string;
  /** In registry order. */
  scorers: ResolvedScorer[];
}

export interface ScorerOverride {
  name: string;
  /** Undefined keeps the preset's weight (1 for a scorer the preset lacks). */
  weight?: number;
  params: Record<string, unknown>;
  /** How errors name this entry and its parameters: "spec.scorers[2]" and "spec.scorers[2].params". */
  field: string;
  paramsField: string;
}

/** A bad reward spec; `message` starts with the field at fault. */
export class RewardSpecError extends Error {
  override readonly name = "RewardSpecError";
  constructor(
    readonly field: string,
    readonly detail: string,
  ) {
    super(`${field}: ${detail}`);
  }
}

export function presetReward(name: string, field: string): ResolvedReward {
  const preset = PRESETS.find((p) => p.name === name);
  if (!preset) throw new RewardSpecError(field, `unknown preset ${JSON.stringify(name)}; accepted: ${PRESET_NAMES.join(", ")}`);
  const base: ResolvedReward = { name: preset.name, description: preset.description, scorers: [] };
  return applyOverrides(
    base,
    preset.scorers.map((s) => ({
      name: s.name,
      weight: s.weight,
      params: s.params ?? {},
      field: `preset ${preset.name}: ${s.name}`,
      paramsField: `preset ${preset.name}: ${s.name}`,
    })),
  );
}

/** Scorers named in `overrides` replace the base's weight and merge over its parameters; others join. */
export function applyOverrides(base: ResolvedReward, overrides: readonly ScorerOverride[]): ResolvedReward {
  const scorers = new Map(base.scorers.map((s) => [s.scorer.name, s]));
  const seen = new Set<string>();
  for (const override of overrides) {
    const scorer = scorerNamed(override.name);
    if (!scorer) {
      throw new RewardSpecError(
        `${override.field}.name`,
        `unknown scorer ${JSON.stringify(override.name)}; accepted: ${SCORER_NAMES.join(", ")}`,
      );
    }
    if (seen.has(scorer.name)) throw new RewardSpecError(`${override.field}.name`, `scorer ${JSON.stringify(scorer.name)} is named twice`);
    seen.add(scorer.name);
    const existing = scorers.get(scorer.name);
    const weight = override.weight ?? existing?.weight ?? 1;
    if (!Number.isFinite(weight) || weight < 0) {
      throw new RewardSpecError(
        `${override.field}.weight`,
        `${weight} is not accepted; expected a finite number >= 0 (0 reports the scorer but adds nothing)`,
      );
    }
    const merged = { ...(existing?.params ?? defaultValues(scorer.params)), ...validParams(scorer, override.params, override.paramsField) };
    const chosen = new Set([...(existing?.chosen ?? []), ...Object.keys(override.params)]);
    const params = scorer.derive ? scorer.derive(merged, chosen, undefined) : merged;
    const problem = typeof params === "string" ? params : scorer.check?.(params);
    if (problem) throw new RewardSpecError(override.paramsField, `scorer ${scorer.name}: ${problem}`);
    scorers.set(scorer.name, { scorer, weight, params: params as Record<string, unknown>, chosen });
  }
  return {
    ...base,
    scorers: SCORERS.flatMap((scorer) => {
      const resolved = scorers.get(scorer.name);
      return resolved ? [resolved] : [];
    }),
  };
}

function validParams(scorer: Scorer, params: Record<string, unknown>, field: string): Record<string, unknown> {
  for (const [key, value] of Object.entries(params)) {
    const param = scorer.params[key];
    if (!param) {
      const accepted = Object.keys(scorer.params).join(", ");
      throw new RewardSpecError(field, `unknown parameter ${JSON.stringify(key)} for scorer ${scorer.name}; accepted: ${accepted}`);
    }
    if (!param.schema.safeParse(value).success) {
      throw new RewardSpecError(`${field}.${key}`, `${JSON.stringify(value)} is not accepted; expected ${param.accepts}`);
    }
  }
  return params;
}
