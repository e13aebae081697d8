// Config groups, as Hydra composes them: a folder per group under a root
// (`configs/model/`, `configs/dataset/`, `configs/algorithm/`) holding one YAML per option,
// chosen on the command line with `group=option` (`model=arith-tiny algorithm=dapo`).
// An option's file is the group's section (`configs/model/arith-tiny.yaml` holds `dir: ...`,
// which becomes `model.dir`), unless its first lines say `# @package _global_`: then its keys
// are top-level keys, for an option that sets more than one section (DAPO sets `algorithm`
// and `training.dynamic_sampling`). An option may choose options of other groups with a
// Hydra defaults list (`defaults: [{model: arith-tiny}]`, `/model` too): they compose before
// the option itself (or where `_self_` stands), unless the command line chose that group.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { ConfigError, type ConfigIssue } from "./errors.js";
import { fileEntries, type SourceEntry } from "./sources.js";

export interface GroupChoice {
  group: string;
  option: string;
}

export interface ConfigGroups {
  /** The folder holding one sub-folder per group. */
  root: string;
  choices: readonly GroupChoice[];
}

const EXTENSIONS = [".yaml", ".yml"];
const GLOBAL_PACKAGE = /^\s*#\s*@package\s+_global_\s*$/m;

/** The groups under `root`: its sub-folders that hold at least one YAML file. */
export function listGroups(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && listOptions(root, entry.name).length > 0)
    .map((entry) => entry.name)
    .sort();
}

/** The options of one group: its YAML files' names without the extension. */
export function listOptions(root: string, group: string): string[] {
  const dir = path.join(root, group);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  return readdirSync(dir)
    .filter((file) => EXTENSIONS.includes(path.extname(file)))
    .map((file) => file.slice(0, -path.extname(file).length))
    .sort();
}

/**
 * Splits command-line words into group choices and dotted overrides: `name=option` whose
 * name (no dot) is a group under `root` is a choice; everything else is left as an override.
 * Choosing the same group twice is an error, as is an option the group does not have; an option
 * is found in any case (algorithm=DAPO chooses dapo.yaml).
 */
export function splitGroupChoices(words: readonly string[], root: string): { choices: GroupChoice[]; overrides: string[] } {
  const groups = new Set(listGroups(root));
  const choices: GroupChoice[] = [];
  const overrides: string[] = [];
  const issues: ConfigIssue[] = [];
  for (const word of words) {
    const match = /^([A-Za-z0-9_-]+)=(.*)$/.exec(word);
    if (!match || !groups.has(match[1]!)) {
      overrides.push(word);
      continue;
    }
    const [, group, option] = match as unknown as [string, string, string];
    const source = `group choice ${word}`;
    if (choices.some((c) => c.group === group)) {
      issues.push({ path: group, source, message: `config group "${group}" is chosen twice (${word}); choose one option per group` });
      continue;
    }
    const options = listOptions(root, group);
    // Names in any case, as `-a DAPO` reads them: algorithm=DAPO is algorithm=dapo (when only one option matches).
    const matches = options.includes(option) ? [option] : options.filter((o) => o.toLowerCase() === option.toLowerCase());
    if (matches.length !== 1) {
      issues.push({
        path: group,
        source,
        message: `unknown ${group} "${option}" (from ${word}); available in ${path.join(root, group)}: ${options.join(", ")}`,
      });
      continue;
    }
    choices.push({ group, option: matches[0]! });
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return { choices, overrides };
}

/**
 * The entries of the chosen options, in the order chosen, each under its group's key (or
 * global), each after the options its defaults list pulls in (those of groups not chosen).
 */
export function groupEntries(groups: ConfigGroups, issues: ConfigIssue[]): SourceEntry[] {
  const chosen = new Set(groups.choices.map((c) => c.group));
  const included = new Set<string>();
  const expand = (choice: GroupChoice, by: string | undefined): SourceEntry[] => {
    const { group, option } = choice;
    if (included.has(group)) return [];
    included.add(group);
    const file = EXTENSIONS.map((ext) => path.join(groups.root, group, `${option}${ext}`)).find((f) => existsSync(f));
    const source = by ? `${group}=${option} (defaults of ${by})` : `${group}=${option}`;
    if (!file) {
      const available = listOptions(groups.root, group);
      issues.push({
        path: group,
        source,
        message: `unknown ${group} "${option}"${by ? ` (in the defaults list of ${by})` : ""}; available in ${path.join(groups.root, group)}: ${available.length > 0 ? available.join(", ") : "(none)"}`,
      });
      return [];
    }
    const entries = fileEntries(file, issues);
    const value = (entries[0]?.value ?? {}) as Record<string, unknown>;
    const { defaults, ...own } = value;
    const self = Object.keys(own).length === 0 ? [] : [{ path: isGlobalPackage(file) ? [] : [group], value: own }];
    const order = defaultsList(defaults, `${group}=${option} (${file})`, issues);
    const at = order.indexOf("_self_");
    const list = at < 0 ? [...order, "_self_" as const] : order;
    return list.flatMap((item) =>
      item === "_self_"
        ? self.map((entry) => ({ ...entry, source: `${source} (${file})`, layer: "group" as const }))
        : chosen.has(item.group)
          ? []
          : expand(item, `${group}=${option}`),
    );
  };
  return groups.choices.flatMap((choice) => expand(choice, undefined));
}

/** A Hydra defaults list: `- group: option` (or `- /group: option`) items and `- _self_`. */
function defaultsList(value: unknown, where: string, issues: ConfigIssue[]): (GroupChoice | "_self_")[] {
  if (value === undefined) return [];
  const form = "a list of `group: option` items (and `_self_`), e.g. defaults: [{model: arith-tiny}]";
  if (!Array.isArray(value)) {
    issues.push({ path: "defaults", source: where, message: `defaults in ${where} must be ${form}` });
    return [];
  }
  return value.flatMap((item): (GroupChoice | "_self_")[] => {
    if (item === "_self_") return ["_self_"];
    const pairs = item !== null && typeof item === "object" && !Array.isArray(item) ? Object.entries(item) : [];
    const [key, option] = pairs[0] ?? [];
    if (pairs.length !== 1 || typeof option !== "string" || !key) {
      issues.push({ path: "defaults", source: where, message: `defaults item ${JSON.stringify(item)} in ${where} is not ${form}` });
      return [];
    }
    return [{ group: key.replace(/^\//, ""), option }];
  });
}

function isGlobalPackage(file: string): boolean {
  // Hydra's directive sits in the header comment, before the first key.
  const header = readFileSync(file, "utf8").split("\n");
  const firstKey = header.findIndex((line) => /^[^#\s]/.test(line));
  return GLOBAL_PACKAGE.test(header.slice(0, firstKey < 0 ? header.length : firstKey).join("\n"));
}
