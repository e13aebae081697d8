// Every key a config schema accepts, as a person reads it: its dotted path, what it takes
// (type, bounds, choices), its default and whether null or absence are allowed. Read from
// the zod v4 schema itself (`_zod.def`), so the reference cannot drift from what loading
// accepts; the meaning of each key is not in the schema and is joined in by the caller.
import { z } from "zod";

type Schema = z.core.$ZodType;
type Def = z.core.$ZodTypes["_zod"]["def"];

export interface SchemaKey {
  /** Dotted path from the schema's root, e.g. "training.async". */
  path: string;
  /** What the key takes, e.g. "integer >= 1", "one of: whole, tactic, repair", "map of string to number". */
  type: string;
  /** The default as JSON text, or undefined when the key has none (it is required or stays unset). */
  default?: string;
  /** Accepted values when the key is a choice (enum, literals), in declaration order. */
  choices?: string[];
  nullable: boolean;
  /** May be left out (it has a default or is optional). */
  optional: boolean;
  /** The object literal's other keys, which tell two objects with a key of the same name apart. */
  siblings: string[];
  /** The schema's own description (`.describe()` / `.meta({ description })`), where it has one. */
  description?: string;
}

function defOf(schema: Schema): Def {
  return (schema as z.core.$ZodTypes)._zod.def;
}

interface Wrapped {
  inner: Schema;
  default?: unknown;
  hasDefault: boolean;
  nullable: boolean;
  optional: boolean;
}

/** Peels default/optional/nullable/pipe wrappers, remembering what they said. */
function peel(schema: Schema): Wrapped {
  const out: Wrapped = { inner: schema, hasDefault: false, nullable: false, optional: false };
  for (;;) {
    const def = defOf(out.inner);
    switch (def.type) {
      case "default":
      case "prefault":
        if (!out.hasDefault) {
          out.default = def.defaultValue;
          out.hasDefault = true;
        }
        out.optional = true;
        out.inner = def.innerType;
        continue;
      case "optional":
        out.optional = true;
        out.inner = def.innerType;
        continue;
      case "nullable":
        out.nullable = true;
        out.inner = def.innerType;
        continue;
      case "nonoptional":
      case "readonly":
      case "catch":
        out.inner = def.innerType;
        continue;
      case "pipe":
        out.inner = defOf(def.in).type === "transform" ? def.out : def.in;
        continue;
      default:
        return out;
    }
  }
}

/** Bounds and formats a number's or string's checks set, as text ("integer >= 1 and <= 16"). */
function checksText(def: Def): { integer: boolean; bounds: string[] } {
  const bounds: string[] = [];
  let integer = false;
  for (const check of (def as { checks?: Schema[] }).checks ?? []) {
    const c = (check as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
    switch (c.check) {
      case "number_format":
        if (String(c.format).includes("int")) integer = true;
        break;
      case "greater_than":
        bounds.push(`${c.inclusive ? ">=" : ">"} ${String(c.value)}`);
        break;
      case "less_than":
        bounds.push(`${c.inclusive ? "<=" : "<"} ${String(c.value)}`);
        break;
      case "min_length":
        bounds.push(`at least ${String(c.minimum)} long`);
        break;
      case "max_length":
        bounds.push(`at most ${String(c.maximum)} long`);
        break;
      case "string_format":
        if (c.format === "regex") bounds.push(`matching ${String(c.pattern)}`);
        else bounds.push(`a ${String(c.format)}`);
        break;
    }
  }
  return { integer, bounds };
}

function literalText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A leaf's (or a container's) type as text, and its choices when it is one of a fixed set. */
export function typeText(schema: Schema): { type: string; choices?: string[] } {
  const { inner, nullable } = peel(schema);
  const def = defOf(inner);
  const base = ((): { type: string; choices?: string[] } => {
    switch (def.type) {
      case "string":
      case "number": {
        const { integer, bounds } = checksText(def);
        const name = def.type === "string" ? "string" : integer ? "integer" : "number";
        return { type: [name, bounds.join(" and ")].filter(Boolean).join(" ") };
      }
      case "boolean":
        return { type: "boolean" };
      case "enum": {
        const choices = Object.values((def as { entries: Record<string, string | number> }).entries).map(literalText);
        return { type: `one of: ${choices.join(", ")}`, choices };
      }
      case "literal": {
        const choices = (def as { values: unknown[] }).values.map(literalText);
        return { type: choices.length === 1 ? `the value ${choices[0]}` : `one of: ${choices.join(", ")}`, choices };
      }
      case "union": {
        const options = (def as { options: readonly Schema[] }).options.map((option) => typeText(option));
        const choices = options.every((o) => o.choices) ? options.flatMap((o) => o.choices!) : undefined;
        return { type: options.map((o) => o.type).join(" | "), ...(choices ? { choices } : {}) };
      }
      case "array": {
        const element = typeText((def as { element: Schema }).element).type;
        const { bounds } = checksText(def);
        return { type: [`list of (${element})`, bounds.join(" and ")].filter(Boolean).join(" ") };
      }
      case "tuple":
        return { type: `[${(def as { items: readonly Schema[] }).items.map((item) => typeText(item).type).join(", ")}]` };
      case "record":
        return {
          type: `map of ${typeText((def as { keyType: Schema }).keyType).type} to ${typeText((def as { valueType: Schema }).valueType).type}`,
        };
      case "object":
        return { type: "object" };
      case "unknown":
      case "any":
        return { type: "any value" };
      default:
        return { type: def.type };
    }
  })();
  return nullable ? { ...base, type: `${base.type} | null` } : base;
}

function defaultText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return JSON.stringify(value);
}

/**
 * Every key of an object schema, leaves and sections alike, depth first in declaration order.
 * A section (a nested object) is listed before its keys; records and arrays of objects are
 * leaves (their entries are free-form or described by their own type).
 */
export function schemaKeys(schema: Schema, prefix = "", inherited?: unknown): SchemaKey[] {
  const { inner } = peel(schema);
  const def = defOf(inner);
  if (def.type !== "object") return [];
  const shape = (def as z.core.$ZodObjectDef).shape;
  const siblings = Object.keys(shape);
  const given = isRecord(inherited) ? inherited : {};
  return Object.entries(shape).flatMap(([key, child]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    const wrapped = peel(child);
    const isSection = defOf(wrapped.inner).type === "object";
    const { type, choices } = typeText(child);
    // An enclosing section's default (e.g. a service's `server: {port: 50053}`) wins over the key's own.
    const value = Object.hasOwn(given, key) ? given[key] : wrapped.default;
    // A section's default is its keys' defaults, listed with them; `{}` would say nothing.
    const own = isSection ? undefined : defaultText(value);
    const description = describedBy(child) ?? describedBy(wrapped.inner);
    const entry: SchemaKey = {
      path,
      type: isSection ? "section" : type,
      ...(own !== undefined ? { default: own } : {}),
      ...(choices ? { choices } : {}),
      nullable: wrapped.nullable,
      optional: wrapped.optional || Object.hasOwn(given, key),
      siblings,
      ...(description ? { description } : {}),
    };
    return [entry, ...(isSection ? schemaKeys(child, path, value) : [])];
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describedBy(schema: Schema): string | undefined {
  return z.globalRegistry.get(schema)?.description;
}
