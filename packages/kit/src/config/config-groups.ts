// Config groups, as Hydra composes them: a folder per group under a root
// (`configs/model/`, `configs/dataset/`, `configs/algorithm/`) holding one YAML per option,
// chosen on the command line with `group=option` (`model=arith-tiny algorithm=dapo`).
// An option's file is the group's section (`configs/model/arith-tiny.yaml` holds `dir: ...`,
// which becomes `model.dir`), unless its first lines say `# @package _global_`: then its keys
// are top-level keys, for an option that sets more than one section (DAPO sets `algorithm`
// and `training.dynamic_sampling`).
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
 * Choosing the same group twice is an error, as is an option the group does not have.
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
    if (!options.includes(option)) {
      issues.push({
        path: group,
        source,
        message: `unknown ${group} "${option}" (from ${word}); available in ${path.join(root, group)}: ${options.join(", ")}`,
      });
      continue;
    }
    choices.push({ group, option });
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return { choices, overrides };
}

/** The entries of the chosen options, in the order chosen, each under its group's key (or global). */
export function groupEntries(groups: ConfigGroups, issues: ConfigIssue[]): SourceEntry[] {
  return groups.choices.flatMap(({ group, option }) => {
    const file = EXTENSIONS.map((ext) => path.join(groups.root, group, `${option}${ext}`)).find((f) => existsSync(f));
    const source = `${group}=${option}`;
    if (!file) {
      const available = listOptions(groups.root, group);
      issues.push({
        path: group,
        source,
        message: `unknown ${group} "${option}"; available in ${path.join(groups.root, group)}: ${available.length > 0 ? available.join(", ") : "(none)"}`,
      });
      return [];
    }
    return fileEntries(file, issues).map((entry) => ({
      ...entry,
      path: isGlobalPackage(file) ? entry.path : [group, ...entry.path],
      source: `${source} (${file})`,
    }));
  });
}

function isGlobalPackage(file: string): boolean {
  // Hydra's directive sits in the header comment, before the first key.
  const header = readFileSync(file, "utf8").split("\n");
  const firstKey = header.findIndex((line) => /^[^#\s]/.test(line));
  return GLOBAL_PACKAGE.test(header.slice(0, firstKey < 0 ? header.length : firstKey).join("\n"));
}
