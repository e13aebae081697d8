// The config loader every service of the mesh uses: one zod schema per service, filled
// from its layers (sources.ts CONFIG_LAYERS), later wins: schema defaults < config groups <
// YAML file < env < the command line (flags, then dotted overrides). Groups sit under the
// file as in Hydra, where the primary config overrides the groups it composes.
import { z } from "zod";
import { ConfigError, type ConfigIssue } from "./errors.js";
import { describeZodIssue, unknownKeyIssue } from "./describe-issue.js";
import { MergedConfig } from "./merge.js";
import { findUnknownKeys, nestedDefaults, schemaAt } from "./schema-walk.js";
import { envEntries, fileEntries, flagEntries, overrideEntries, type SourceEntry } from "./sources.js";
import { groupEntries, type ConfigGroups } from "./config-groups.js";

export interface ConfigSources {
  /** Path to a YAML (or JSON) file. */
  file?: string;
  /** Config group options chosen by name (config-groups.ts): over the defaults, under the file. */
  groups?: ConfigGroups;
  /** Environment to read; process.env when omitted. Read only when envPrefix is given. */
  env?: Record<string, string | undefined>;
  /** e.g. "LEANGRPO_": LEANGRPO_TRAINING__LEARNING_RATE sets training.learning_rate. */
  envPrefix?: string;
  /** Already-parsed CLI flags, nested objects or dotted keys; string values are read as YAML, like env. */
  flags?: Record<string, unknown>;
  /**
   * How each flag was typed, by its dotted key (`{ "training.steps": "-n" }`), so that an
   * error names what the user wrote rather than the key it sets.
   */
  flagNames?: Record<string, string>;
  /** "training.learning_rate=1e-5"; values are read as YAML. */
  overrides?: readonly string[];
  /**
   * Rewrites the entries of every source, in order, before they merge: e.g. other programs'
   * names for the same keys (the seeds' aliases of `lean-grpo train`). May throw ConfigError.
   */
  translate?: (entries: SourceEntry[]) => SourceEntry[];
}

/**
 * Loads and validates config. Later sources win; objects merge key by key,
 * arrays and scalars replace. Throws ConfigError listing every problem: an
 * unknown key (in any object, strict or not), a bad value, a malformed source.
 */
export function loadConfig<S extends z.ZodType>(schema: S, sources: ConfigSources = {}): z.output<S> {
  const sourceIssues: ConfigIssue[] = [];
  const read = [
    ...(sources.groups === undefined ? [] : groupEntries(sources.groups, sourceIssues)),
    ...(sources.file === undefined ? [] : fileEntries(sources.file, sourceIssues)),
    ...(sources.envPrefix === undefined ? [] : envEntries(sources.env ?? process.env, sources.envPrefix, sourceIssues)),
    ...flagEntries(sources.flags ?? {}, sourceIssues, sources.flagNames),
    ...overrideEntries(sources.overrides ?? [], sourceIssues),
  ];
  // A source that could not be read would only add noise (missing keys) to the rest.
  if (sourceIssues.length > 0) throw new ConfigError(sourceIssues);
  const entries = sources.translate ? sources.translate(read) : read;

  const merged = new MergedConfig();
  const defaults = nestedDefaults(schema);
  if (defaults) merged.set([], defaults, { source: "default" });
  for (const entry of entries) merged.set(entry.path, entry.value, { source: entry.source, raw: entry.raw });
  keepStringsWhereWanted(schema, merged);

  const sourceOf = (path: readonly PropertyKey[]) => merged.sourceOf(path.map(String));
  const unknown = findUnknownKeys(schema, merged.value).map(({ path, accepted }) =>
    unknownKeyIssue(path, accepted, sourceOf(path) ?? "default"),
  );
  const result = z.safeParse(schema, merged.value, { reportInput: true });
  if (unknown.length === 0 && result.success) return result.data;

  // A strict object reports its unknown keys to zod as well; keep the richer message from findUnknownKeys.
  const reported = new Set(unknown.map((issue) => issue.path));
  const invalid = (result.error?.issues ?? [])
    .flatMap((issue) => describeZodIssue(issue, sourceOf))
    .filter((issue) => !reported.has(issue.path));
  throw new ConfigError([...unknown, ...invalid]);
}

/**
 * Text read as YAML can turn into a number or boolean where the schema wants a
 * string (`token=12345`, `revision=1.10`); there, the original text is used.
 */
function keepStringsWhereWanted(schema: z.core.$ZodType, merged: MergedConfig): void {
  for (const origin of merged.parsedStrings()) {
    const wanted = schemaAt(schema, origin.path);
    if (!wanted) continue;
    const parsed = merged.get(origin.path);
    if (!z.safeParse(wanted, parsed).success && z.safeParse(wanted, origin.raw).success) {
      merged.set(origin.path, origin.raw, origin);
    }
  }
}
