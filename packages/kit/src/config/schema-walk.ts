// Reads a zod v4 schema's structure (via `_zod.def`, so classic and mini schemas
// both work): which keys an object accepts, what sits at a path, nested defaults.
import type { z } from "zod";
import { deepMerge, isPlainObject, type PlainObject } from "./merge.js";

type Schema = z.core.$ZodType;

function defOf(schema: Schema): z.core.$ZodTypes["_zod"]["def"] {
  return (schema as z.core.$ZodTypes)._zod.def;
}

/** Strips wrappers that leave the shape of the accepted input unchanged. */
function unwrap(schema: Schema): Schema {
  const def = defOf(schema);
  switch (def.type) {
    case "default":
    case "prefault":
    case "optional":
    case "nullable":
    case "nonoptional":
    case "readonly":
    case "catch":
      return unwrap(def.innerType);
    case "pipe":
      // z.string().transform(f) accepts what its `in` accepts; z.preprocess(f, s) is best described by `out`.
      return unwrap(defOf(def.in).type === "transform" ? def.out : def.in);
    default:
      return schema;
  }
}

/** An object's extra keys are allowed only when the schema asks for them (looseObject, catchall). */
function extraKeySchema(def: z.core.$ZodObjectDef): Schema | undefined {
  return def.catchall && defOf(def.catchall).type !== "never" ? def.catchall : undefined;
}

/** The schema of the value at `path`, through objects and records; undefined where it cannot be told (unions...). */
export function schemaAt(schema: Schema, path: readonly string[]): Schema | undefined {
  let current: Schema | undefined = schema;
  for (const key of path) {
    if (!current) return undefined;
    const def = defOf(unwrap(current));
    if (def.type === "object") current = Object.hasOwn(def.shape, key) ? def.shape[key] : extraKeySchema(def);
    else if (def.type === "record") current = def.valueType;
    else return undefined;
  }
  return current;
}

export interface UnknownKey {
  path: string[];
  /** The keys the enclosing object accepts, sorted. */
  accepted: string[];
}

/**
 * Keys of `value` that the schema has no place for. zod strips these silently
 * from a plain z.object(); a config typo must not vanish, so this checks every
 * object whether or not it is .strict().
 */
export function findUnknownKeys(schema: Schema, value: unknown, path: string[] = []): UnknownKey[] {
  const def = defOf(unwrap(schema));
  if (def.type === "object" && isPlainObject(value)) {
    const extra = extraKeySchema(def);
    return Object.entries(value).flatMap(([key, child]) => {
      const childSchema = Object.hasOwn(def.shape, key) ? def.shape[key] : extra;
      if (childSchema) return findUnknownKeys(childSchema, child, [...path, key]);
      return [{ path: [...path, key], accepted: Object.keys(def.shape).sort() }];
    });
  }
  if (def.type === "record" && isPlainObject(value)) {
    return Object.entries(value).flatMap(([key, child]) => findUnknownKeys(def.valueType, child, [...path, key]));
  }
  if (def.type === "array" && Array.isArray(value)) {
    return value.flatMap((item, index) => findUnknownKeys(def.element, item, [...path, String(index)]));
  }
  return [];
}

/**
 * Defaults of nested objects, as an input layer under every source. zod v4's
 * `.default({})` returns `{}` as-is without applying the inner keys' defaults;
 * merging this layer in first makes them apply, and lets a source that sets one
 * key of a defaulted object keep the defaults of its siblings. Leaf defaults are
 * left to zod (they are outputs, which a transforming schema could not re-parse).
 */
export function nestedDefaults(schema: Schema): PlainObject | undefined {
  const def = defOf(schema);
  switch (def.type) {
    case "readonly":
      return nestedDefaults(def.innerType);
    case "default":
    case "prefault": {
      const own: unknown = def.defaultValue;
      if (!isPlainObject(own) || defOf(unwrap(def.innerType)).type !== "object") return undefined;
      const inner = nestedDefaults(def.innerType);
      return inner ? deepMerge(inner, own) : own;
    }
    case "object": {
      const entries = Object.entries(def.shape).flatMap(([key, child]) => {
        const value = nestedDefaults(child);
        return value === undefined ? [] : [[key, value] as const];
      });
      return entries.length > 0 ? Object.fromEntries(entries) : undefined;
    }
    default:
      return undefined;
  }
}

/** Every dotted leaf key the schema accepts, in declaration order (for help text). */
export function describeConfigKeys(schema: Schema): string[] {
  const walk = (node: Schema, prefix: string): string[] => {
    const def = defOf(unwrap(node));
    if (def.type !== "object") return prefix ? [prefix] : [];
    return Object.entries(def.shape).flatMap(([key, child]) => walk(child, prefix ? `${prefix}.${key}` : key));
  };
  return walk(schema, "");
}
