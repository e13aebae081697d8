// algorithm_config keys: their types, defaults, ranges and descriptions, and the validation
// that turns a caller's JSON object into values. One table drives validation, the
// ListAlgorithms answer and the `lean-grpo algorithms` CLI table.
import { AlgorithmConfigError } from "./algorithm-config-error.js";

export type ParameterValue = number | boolean | string | null;

export interface ParameterSpec {
  name: string;
  type: "number" | "integer" | "boolean" | "enum";
  default: ParameterValue;
  description: string;
  /** For "enum": accepted values (aliases included). */
  allowed?: readonly string[];
  /** Inclusive bounds for numbers. */
  min?: number;
  max?: number;
  /** Bound that must be exceeded (exclusive minimum). */
  above?: number;
  /** null is accepted (means "off" or "same as another key", as the description says). */
  nullable?: boolean;
  /** Seed names of this key (lzumot/lean_grpo), accepted as synonyms. */
  aliases?: readonly string[];
}

function describeAccepted(spec: ParameterSpec): string {
  const range = [
    spec.above !== undefined ? `> ${spec.above}` : "",
    spec.min !== undefined ? `>= ${spec.min}` : "",
    spec.max !== undefined ? `<= ${spec.max}` : "",
  ]
    .filter(Boolean)
    .join(" and ");
  const base =
    spec.type === "enum"
      ? `one of ${spec.allowed!.map((v) => JSON.stringify(v)).join(", ")}`
      : spec.type === "boolean"
        ? "true or false"
        : `${spec.type === "integer" ? "an integer" : "a finite number"}${range ? ` ${range}` : ""}`;
  return spec.nullable ? `${base}, or null` : base;
}

function checkValue(algorithm: string, spec: ParameterSpec, value: unknown): ParameterValue {
  const bad = () =>
    new AlgorithmConfigError(
      `algorithm_config.${spec.name} = ${JSON.stringify(value)} is not accepted by "${algorithm}"; accepted: ${describeAccepted(spec)}`,
    );
  if (value === null) {
    if (spec.nullable) return null;
    throw bad();
  }
  switch (spec.type) {
    case "boolean":
      if (typeof value !== "boolean") throw bad();
      return value;
    case "enum":
      if (typeof value !== "string" || !spec.allowed!.includes(value)) throw bad();
      return value;
    default: {
      if (typeof value !== "number" || !Number.isFinite(value)) throw bad();
      if (spec.type === "integer" && !Number.isInteger(value)) throw bad();
      if (spec.min !== undefined && value < spec.min) throw bad();
      if (spec.max !== undefined && value > spec.max) throw bad();
      if (spec.above !== undefined && !(value > spec.above)) throw bad();
      return value;
    }
  }
}

/** Each parameter's value: the caller's (checked) or the default. Unknown keys are refused, listing the valid ones. */
export function resolveParameters(
  algorithm: string,
  specs: readonly ParameterSpec[],
  config: Readonly<Record<string, unknown>>,
): Record<string, ParameterValue> {
  const byName = new Map<string, ParameterSpec>();
  for (const spec of specs) {
    byName.set(spec.name, spec);
    for (const alias of spec.aliases ?? []) byName.set(alias, spec);
  }
  const values: Record<string, ParameterValue> = {};
  for (const spec of specs) values[spec.name] = spec.default;
  const seen = new Map<string, string>();
  for (const [key, value] of Object.entries(config)) {
    const spec = byName.get(key);
    if (!spec) {
      throw new AlgorithmConfigError(
        `algorithm_config.${key} is not a key of "${algorithm}"; valid keys: ${specs.map((s) => s.name).join(", ")}`,
      );
    }
    const earlier = seen.get(spec.name);
    if (earlier !== undefined) {
      throw new AlgorithmConfigError(`algorithm_config sets "${spec.name}" twice (as "${earlier}" and "${key}"); give it once`);
    }
    seen.set(spec.name, key);
    values[spec.name] = checkValue(algorithm, spec, value);
  }
  return values;
}
