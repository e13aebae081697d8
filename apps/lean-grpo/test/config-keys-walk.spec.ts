// `lean-grpo config KEY` answers for every key the tree tells a user to write: every key of
// every config file (configs/, the services' deploy configs, the seeds' files the tests run),
// each in the context it is read in (a group option under its group, a service's file under the
// service, a topology's replica overrides under theirs), and every key of the YAML blocks and
// the `lean-grpo train | eval | serve` command lines of every doc page. A key the reference does
// not know is either a key loading refuses or a reference that misses one.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { isPlainObject, listGroups } from "@lean-grpo/kit";
import { configReference, findConfigKeys } from "../src/config-reference/config-reference.js";
import { SERVICE_NAMES } from "../src/mesh/service-catalog.js";
import { repoRoot } from "../../../tests/support/interop-verifier.js";

const reference = configReference();
const GROUP_OPTIONS = new Set(["algorithm", "dataset", "model"]);
const groups = new Set(listGroups(path.join(repoRoot, "configs")));

/** Where a key was found, and the key as `lean-grpo config` is asked for it. */
interface KeyUse {
  where: string;
  key: string;
}

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(path.join(repoRoot, dir)).flatMap((name) => {
    const rel = path.join(dir, name);
    if (["node_modules", "dist", ".vitepress"].includes(name)) return [];
    return statSync(path.join(repoRoot, rel)).isDirectory() ? files(rel, ext) : ext.test(name) ? [rel] : [];
  });
}

/** Every leaf key of a parsed YAML mapping (a list's items are its value, not keys). */
function leafKeys(value: unknown, prefix: string[] = []): string[][] {
  if (!isPlainObject(value) || Object.keys(value).length === 0) return prefix.length > 0 ? [prefix] : [];
  return Object.entries(value).flatMap(([key, inner]) => leafKeys(inner, [...prefix, key]));
}

const isGlobal = (text: string) => /^\s*#\s*@package\s+_global_\s*$/mu.test(text.split(/\n(?=[^#\s])/u)[0] ?? "");

/** The keys of one config file, in the context it is read in (from where it lives and what it holds). */
function configFileKeys(file: string, text: string): KeyUse[] {
  const value = YAML.parse(text) as unknown;
  const [top, group] = file.split("/");
  const use = (key: string[]) => ({ where: file, key: key.join(".") });
  if (top === "configs" && GROUP_OPTIONS.has(group!)) {
    const { defaults: _defaults, ...own } = (value ?? {}) as Record<string, unknown>;
    return leafKeys(own, isGlobal(text) ? [] : [group!]).map(use);
  }
  if (top === "configs" && group === "reward") return leafKeys(value, ["reward"]).map(use);
  if (file.startsWith("deploy/k8s/base/config/")) return leafKeys(value, [path.basename(file, ".yaml")]).map(use);
  if (isPlainObject(value) && "base_port" in value) return topologyKeys(file, value);
  return leafKeys(value).map(use);
}

/** A topology's keys, and each replica override as a key of its service. */
function topologyKeys(file: string, topology: Record<string, unknown>): KeyUse[] {
  const services = (topology.services ?? {}) as Record<string, { overrides?: string[] }>;
  return [
    ...leafKeys(topology).map((key) => ({ where: file, key: key.join(".") })),
    ...Object.entries(services).flatMap(([service, { overrides = [] }]) =>
      overrides.map((o) => ({ where: `${file} (overrides of ${service})`, key: `${service}.${o.slice(0, o.indexOf("="))}` })),
    ),
  ];
}

/** A doc page's code and inline code, HTML-unescaped (the generated tables write <code> cells). */
function codeOf(markdown: string): { blocks: { lang: string; text: string }[]; inline: string[] } {
  const blocks = [...markdown.matchAll(/^```(\w*)[^\n]*\n([\s\S]*?)^```/gmu)].map((m) => ({ lang: m[1]!, text: m[2]! }));
  const prose = markdown.replace(/^```[\s\S]*?^```/gmu, "");
  const unescapeHtml = (t: string) => t.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&").replaceAll("\\|", "|");
  const inline = [...prose.matchAll(/<code>([\s\S]*?)<\/code>|`([^`\n]+)`/gu)].map((m) => unescapeHtml(m[1] ?? m[2]!));
  return { blocks, inline };
}

/** Splits words as a shell would, for the quoting the docs use. */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/gu)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** The `key=value` words of one `lean-grpo train | eval | serve` command, as keys of `lean-grpo config`. */
function commandKeys(where: string, command: string): KeyUse[] {
  const argv = words(command);
  const at = argv.findIndex((w) => w === "lean-grpo");
  const [verb, target] = [argv[at + 1], argv[at + 2]];
  if (!["train", "eval", "serve"].includes(verb ?? "")) return [];
  const prefix = verb === "serve" && SERVICE_NAMES.includes(target ?? "") ? `${target}.` : "";
  return argv
    .slice(at + 2)
    .filter((w) => /^[a-z_][\w.]*=/u.test(w))
    .map((w) => w.slice(0, w.indexOf("=")))
    .filter((key) => key.includes(".") || !groups.has(key)) // model=..., dataset=...: a group choice
    .map((key) => ({ where, key: `${prefix}${key}` }));
}

/** A doc page's keys: its lean-grpo config YAML blocks and its command lines (a command shown with the error it gets is an example of that error). */
function docKeys(file: string, markdown: string): KeyUse[] {
  const { blocks, inline } = codeOf(markdown);
  const fromYaml = blocks
    .filter((b) => b.lang === "yaml" || b.lang === "yml")
    .flatMap((b) => configFileKeys(`${file} (YAML block)`, b.text));
  const commands: string[] = [];
  for (const block of blocks) {
    const lines = block.text.replace(/\\\n\s*/gu, " ").split("\n");
    lines.forEach((line, i) => {
      const next = lines.slice(i + 1).find((l) => l.trim() !== "") ?? "";
      if (/lean-grpo (train|eval|serve)\b/u.test(line) && !/unknown config key/u.test(next)) commands.push(line);
    });
  }
  commands.push(...inline.filter((code) => /lean-grpo (train|eval|serve)\b/u.test(code)));
  return [...fromYaml, ...commands.flatMap((c) => commandKeys(`${file}: ${c.trim().slice(0, 80)}`, c))];
}

const configFiles = [
  ...files("configs", /\.ya?ml$/u),
  ...files("deploy/k8s/base/config", /\.ya?ml$/u),
  ...files("apps/lean-grpo/test/seeds", /\.ya?ml$/u),
];
const docPages = [
  "README.md",
  ...files("docs", /\.md$/u),
  ...files("services", /^README\.md$/u),
  ...files("models", /^README\.md$/u),
  ...files("bench", /^README\.md$/u),
];

describe("lean-grpo config answers for every key the tree uses", () => {
  it("every key of every config file", () => {
    const uses = configFiles.flatMap((file) => configFileKeys(file, readFileSync(path.join(repoRoot, file), "utf8")));
    expect(uses.length).toBeGreaterThan(150);
    expect(uses.filter((u) => findConfigKeys(reference, u.key).length === 0)).toEqual([]);
  });

  it("every key of every doc page's config blocks and lean-grpo commands", () => {
    const uses = docPages.flatMap((file) => docKeys(file, readFileSync(path.join(repoRoot, file), "utf8")));
    expect(uses.length).toBeGreaterThan(50);
    // The walk reaches what the pages tell users to type: the PyTorch learner's keys, seed 003's names, a topology's.
    const keys = new Set(uses.map((u) => u.key));
    for (const key of ["services.learner.impl", "training.num_train_epochs", "logging.mode"]) expect(keys, key).toContain(key);
    expect(uses.filter((u) => findConfigKeys(reference, u.key).length === 0)).toEqual([]);
  });

  it("would notice a key nobody knows", () => {
    expect(findConfigKeys(reference, "training.stepz")).toEqual([]);
    expect(commandKeys("x", "npx lean-grpo serve learner server.limits.max_concurent_calls=4")).toEqual([
      { where: "x", key: "learner.server.limits.max_concurent_calls" },
    ]);
    expect(findConfigKeys(reference, "learner.server.limits.max_concurent_calls")).toEqual([]);
    expect(configFileKeys("configs/dataset/x.yaml", "# @package _global_\ndefaults:\n  - /model: m\ntraining:\n  stepz: 1\n")).toEqual([
      { where: "configs/dataset/x.yaml", key: "training.stepz" },
    ]);
  });
});
