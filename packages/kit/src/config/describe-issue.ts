// Turns zod's validation issues into one-line messages that name the key, the
// source that set it and what the key accepts.
import type { z } from "zod";
import type { ConfigIssue } from "./errors.js";

const MAX_SHOWN = 60;

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  switch (typeof value) {
    case "string": {
      const shown = value.length > MAX_SHOWN ? `${value.slice(0, MAX_SHOWN)}...` : value;
      return `string ${JSON.stringify(shown)}`;
    }
    case "number":
    case "boolean":
    case "bigint":
      return `${typeof value} ${String(value)}`;
    default:
      return typeof value;
  }
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

export function unknownKeyIssue(path: readonly string[], accepted: readonly string[] | undefined, source: string): ConfigIssue {
  const key = path.join(".");
  const parent = path.slice(0, -1).join(".");
  const where = parent ? `under "${parent}"` : "at the top level";
  const hint = accepted ? `; accepted keys ${where}: ${accepted.length > 0 ? accepted.join(", ") : "(none)"}` : "";
  return { path: key, source, message: `unknown config key "${key}" (from ${source})${hint}` };
}

/** `sourceOf` names the source of the value at a path; undefined when no source set it. */
export function describeZodIssue(issue: z.core.$ZodIssue, sourceOf: (path: readonly PropertyKey[]) => string | undefined): ConfigIssue[] {
  const path = issue.path.map(String);
  const key = path.join(".");
  const label = key ? `config key "${key}"` : "config";
  const source = sourceOf(issue.path) ?? "default";
  const from = `(from ${source})`;
  switch (issue.code) {
    case "unrecognized_keys":
      // Only reached inside unions and the like, where the accepted keys depend on the variant.
      return issue.keys.map((extra) => unknownKeyIssue([...path, extra], undefined, sourceOf([...issue.path, extra]) ?? source));
    case "invalid_type":
      if (issue.input === undefined) {
        return [{ path: key, source, message: `${label} is required (expected ${issue.expected}) but no source sets it` }];
      }
      return [{ path: key, source, message: `${label}: expected ${issue.expected}, received ${describeValue(issue.input)} ${from}` }];
    case "invalid_value": {
      const allowed = issue.values.map((value) => JSON.stringify(value)).join(" | ");
      const expected = issue.values.length === 1 ? allowed : `one of ${allowed}`;
      return [{ path: key, source, message: `${label}: expected ${expected}, received ${describeValue(issue.input)} ${from}` }];
    }
    case "invalid_union": {
      // Its input is the whole object when the discriminator is what failed, so it is not shown.
      const options = "options" in issue ? (issue.options ?? []) : [];
      const expected =
        options.length > 0 ? `expected one of ${options.map((value) => JSON.stringify(value)).join(" | ")}` : lowerFirst(issue.message);
      return [{ path: key, source, message: `${label}: ${expected} ${from}` }];
    }
    default:
      return [{ path: key, source, message: `${label}: ${lowerFirst(issue.message)}, received ${describeValue(issue.input)} ${from}` }];
  }
}
