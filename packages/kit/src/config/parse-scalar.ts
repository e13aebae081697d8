// Env vars, overrides and string flags arrive as text; they are read as YAML 1.2
// (core schema) so `1e-5`, `true` and `[a, b]` mean what they would in the file.
import YAML from "yaml";

const NULL_WORDS = /^(?:null|Null|NULL|~)$/;
const FLOW_COLLECTION = /^\s*[[{]/;

/**
 * Parses a YAML scalar or flow collection. Anything else (block mappings like
 * `a: b`, text that is not valid YAML, "" or a comment) stays the original string.
 * Quote a value (`'007'`) to force a string.
 */
export function parseScalar(raw: string): unknown {
  let value: unknown;
  try {
    // logLevel "error": throw on errors, but print no warnings (e.g. unknown tags) to the console.
    value = YAML.parse(raw, { logLevel: "error" });
  } catch {
    return raw;
  }
  if (value === null) return NULL_WORDS.test(raw.trim()) ? null : raw;
  if (typeof value === "object" && !FLOW_COLLECTION.test(raw)) return raw;
  return value;
}
