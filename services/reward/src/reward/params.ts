// A scorer declares each parameter once: the schema that validates it (in YAML
// config and in requests), its default, and the words ListScorers and error
// messages use to say what it accepts.
import { z } from "zod";

export interface Param<T> {
  readonly type: "number" | "integer" | "boolean" | "enum";
  readonly schema: z.ZodType<T>;
  readonly default: T;
  readonly description: string;
  /** What the parameter accepts, in words: "a number in [0, 1)". */
  readonly accepts: string;
  readonly allowedValues?: readonly string[];
}

export type ParamTable = Record<string, Param<unknown>>;

export type ParamValues<P extends ParamTable> = { [K in keyof P]: P[K] extends Param<infer T> ? T : never };

interface RangeOptions {
  min?: number;
  max?: number;
  /** The bound itself is not accepted. */
  minExclusive?: boolean;
  maxExclusive?: boolean;
}

function rangeText(kind: string, range: RangeOptions): string {
  const low = range.min === undefined ? "(-∞" : `${range.minExclusive ? "(" : "["}${range.min}`;
  const high = range.max === undefined ? "∞)" : `${range.max}${range.maxExclusive ? ")" : "]"}`;
  const article = /^[aeiou]/.test(kind) ? "an" : "a";
  return range.min === undefined && range.max === undefined ? `a finite ${kind}` : `${article} ${kind} in ${low}, ${high}`;
}

function inRange(value: number, range: RangeOptions): boolean {
  if (!Number.isFinite(value)) return false;
  if (range.min !== undefined && (range.minExclusive ? value <= range.min : value < range.min)) return false;
  if (range.max !== undefined && (range.maxExclusive ? value >= range.max : value > range.max)) return false;
  return true;
}

export function numberParam(options: RangeOptions & { default: number; description: string }): Param<number> {
  const accepts = rangeText("number", options);
  return {
    type: "number",
    schema: z.number().refine((value) => inRange(value, options), { message: `expected ${accepts}` }),
    default: options.default,
    description: options.description,
    accepts,
  };
}

export function integerParam(options: RangeOptions & { default: number; description: string }): Param<number> {
  const accepts = rangeText("integer", options);
  return {
    type: "integer",
    schema: z.number().refine((value) => Number.isInteger(value) && inRange(value, options), { message: `expected ${accepts}` }),
    default: options.default,
    description: options.description,
    accepts,
  };
}

export function booleanParam(options: { default: boolean; description: string }): Param<boolean> {
  return { type: "boolean", schema: z.boolean(), default: options.default, description: options.description, accepts: "true or false" };
}

export function enumParam<const V extends readonly [string, ...string[]]>(options: {
  values: V;
  default: V[number];
  description: string;
}): Param<V[number]> {
  return {
    type: "enum",
    schema: z.enum(options.values) as unknown as z.ZodType<V[number]>,
    default: options.default,
    description: options.description,
    accepts: `one of ${options.values.map((value) => JSON.stringify(value)).join(", ")}`,
    allowedValues: options.values,
  };
}

export function defaultValues<P extends ParamTable>(params: P): ParamValues<P> {
  return Object.fromEntries(Object.entries(params).map(([name, param]) => [name, param.default])) as ParamValues<P>;
}
