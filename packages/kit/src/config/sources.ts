// Turns each config source into entries (a key path, a value, where it came
// from). Problems are collected rather than thrown, so one run reports them all.
import { readFileSync } from "node:fs";
import YAML, { LineCounter } from "yaml";
import { ConfigError, type ConfigIssue } from "./errors.js";
import { isPlainObject } from "./merge.js";
import { parseScalar } from "./parse-scalar.js";
import { AUTH_TOKEN_ENV } from "../auth/mesh-token.js";

/**
 * Variables under the config prefix that are not config keys: LEANGRPO_AUTH_TOKEN is the mesh's
 * token everywhere (auth/mesh-token.ts), so `LEANGRPO_` (serve all's prefix) never reads it as
 * the key `auth_token`.
 */
const NOT_CONFIG_KEYS: ReadonlySet<string> = new Set([AUTH_TOKEN_ENV]);

/**
 * The layers of config, lowest first: a later layer wins. Flags and dotted overrides are one
 * layer, the command line (overrides are read after flags, so between the two an override wins).
 */
export const CONFIG_LAYERS = ["default", "group", "file", "env", "command line"] as const;
export type ConfigLayer = (typeof CONFIG_LAYERS)[number];

export interface SourceEntry {
  path: string[];
  value: unknown;
  source: string;
  /** Which layer the source is (CONFIG_LAYERS): what decides between two sources of one key. */
  layer: ConfigLayer;
  /** The text a value was parsed from (env, overrides, string flags). */
  raw?: string;
}

function textEntry(path: string[], raw: string, source: string, layer: ConfigLayer): SourceEntry {
  return { path, value: parseScalar(raw), source, layer, raw };
}

export function fileEntries(file: string, issues: ConfigIssue[]): SourceEntry[] {
  const source = `file ${file}`;
  const fail = (message: string): SourceEntry[] => {
    issues.push({ path: "", source, message });
    return [];
  };
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error: unknown) {
    const code = (error as NodeJS.ErrnoException).code;
    return fail(code === "ENOENT" ? `config file "${file}" not found` : `cannot read config file "${file}": ${(error as Error).message}`);
  }
  // JSON is YAML too, so one parser reads both.
  const lineCounter = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    for (const error of doc.errors) {
      const { line, col } = lineCounter.linePos(error.pos[0]);
      fail(`config file "${file}" is not valid YAML: line ${line}, column ${col}: ${error.message}`);
    }
    return [];
  }
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (error: unknown) {
    return fail(`config file "${file}" is not valid YAML: ${(error as Error).message}`);
  }
  if (value === null || value === undefined) return []; // empty file
  if (!isPlainObject(value)) return fail(`config file "${file}" must hold a mapping of config keys at the top level`);
  return [{ path: [], value, source, layer: "file" }];
}

/** `LEANGRPO_TRAINING__LEARNING_RATE=1e-5` -> training.learning_rate; `__` nests, `_` stays in the key. */
export function envEntries(env: Record<string, string | undefined>, prefix: string, issues: ConfigIssue[]): SourceEntry[] {
  const names = Object.keys(env)
    .filter((name) => name.startsWith(prefix) && env[name] !== undefined && !NOT_CONFIG_KEYS.has(name))
    // Sorted so that LEANGRPO_A__B (more specific) lands after LEANGRPO_A, whatever the environment's order.
    .sort();
  return names.flatMap((name) => {
    const path = name
      .slice(prefix.length)
      .split("__")
      .map((part) => part.toLowerCase());
    const source = `env ${name}`;
    if (path.some((part) => part === "")) {
      issues.push({
        path: path.join("."),
        source,
        message: `malformed env var name "${name}": expected ${prefix}KEY, with "__" between nesting levels (e.g. ${prefix}SERVER__PORT)`,
      });
      return [];
    }
    return [textEntry(path, env[name]!, source, "env")];
  });
}

/**
 * Flags as a CLI parser returns them: nested objects and/or dotted keys. String
 * values are read like env values, since parsers such as node's parseArgs give
 * only strings; other values are taken as they are; undefined means not given.
 */
export function flagEntries(flags: Record<string, unknown>, issues: ConfigIssue[], names: Record<string, string> = {}): SourceEntry[] {
  const walk = (node: Record<string, unknown>, prefix: string[]): SourceEntry[] =>
    Object.entries(node).flatMap(([key, value]) => {
      const path = [...prefix, ...key.split(".")];
      const source = `flag ${names[path.join(".")] ?? `--${path.join(".")}`}`;
      if (path.some((part) => part === "")) {
        issues.push({ path: path.join("."), source, message: `malformed flag "--${path.join(".")}": expected --key.path` });
        return [];
      }
      if (value === undefined) return [];
      if (isPlainObject(value)) return walk(value, path);
      return [
        typeof value === "string"
          ? textEntry(path, value, source, "command line")
          : { path, value, source, layer: "command line" as const },
      ];
    });
  return walk(flags, []);
}

const OVERRIDE_FORM = "expected key.path=value, e.g. training.learning_rate=1e-5";

/** Splits "a.b.c=value" at its first "="; an issue if it has no "=" or an empty key part. */
function splitOverride(text: string): { path: string[]; raw: string } | ConfigIssue {
  const equals = text.indexOf("=");
  const key = equals < 0 ? "" : text.slice(0, equals).trim();
  const path = key.split(".");
  if (equals < 0 || path.some((part) => part === "")) {
    return { path: key, source: `override ${text}`, message: `malformed override "${text}": ${OVERRIDE_FORM}` };
  }
  return { path, raw: text.slice(equals + 1) };
}

/** Parses one `key.path=value` override; the value is read as YAML (`1e-5` is a number, `[a, b]` a list). */
export function parseOverride(text: string): { path: string[]; value: unknown } {
  const split = splitOverride(text);
  if (!("raw" in split)) throw new ConfigError([split]);
  return { path: split.path, value: parseScalar(split.raw) };
}

export function overrideEntries(overrides: readonly string[], issues: ConfigIssue[]): SourceEntry[] {
  return overrides.flatMap((text) => {
    const split = splitOverride(text);
    if (!("raw" in split)) {
      issues.push(split);
      return [];
    }
    return [textEntry(split.path, split.raw, `override ${text}`, "command line")];
  });
}
