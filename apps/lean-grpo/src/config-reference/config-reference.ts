// Every config key of lean-grpo, from the schemas that parse them: the train file's own keys,
// the run config (the orchestrator's), the learner's algorithm knobs, the server section every
// service shares, each service's section, the PyTorch learner's keys and a topology's; with
// every name the seeds and TRL give a key beside it, and the names that set nothing here with
// what to type instead. One list feeds `lean-grpo config` and the docs' generated reference
// (scripts/docs/config-reference.ts), so both say what loading accepts.
import { fileURLToPath } from "node:url";
import type { z } from "zod";
import { schemaKeys, ServerConfigSchema, type SchemaKey } from "@lean-grpo/kit";
import { ALGORITHMS } from "@lean-grpo/learner";
import { RunConfigSchema } from "@lean-grpo/orchestrator";
import { SERVICE_CATALOG, SERVICE_NAMES } from "../mesh/service-catalog.js";
import { TopologySchema } from "../mesh/topology.js";
import { LearnerImplSchema } from "../mesh/torch-learner-config.js";
import { TrainFileSchema } from "../commands/train-file.js";
import { DERIVED_SETS, SEED_NAMES, seedNameTarget, sourceLabel } from "../config/seed-names.js";
import { KEY_FLAGS } from "../config/train-flags.js";
import { SEED_ALGORITHM_KNOBS } from "../config/seed-algorithm-config.js";
import { commentFor, readKeyComments, type KeyComment } from "./key-comments.js";

const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
/** Where the schemas are written (their comments are the keys' meanings). */
const SCHEMA_DIRS = ["apps/lean-grpo/src", "services", "packages/kit/src", "packages/lm/src/reasoning-vocab"];

export interface ConfigKeyDoc {
  /** The key as written in a train file or a `serve all` file, e.g. "training.async", "inference.vllm.url". */
  key: string;
  /** The same key where another command spells it differently. */
  spellings: string[];
  type: string;
  default?: string;
  choices?: string[];
  /** Other names accepted for the key (the seeds' names among them). */
  aliases: string[];
  /** Who parses and checks it. */
  owner: string;
  meaning: string;
  section: boolean;
}

export interface ConfigGroupDoc {
  id: string;
  title: string;
  /** Where these keys are written and who reads them. */
  intro: string;
  keys: ConfigKeyDoc[];
}

function fromSchema(
  keys: readonly SchemaKey[],
  comments: readonly KeyComment[],
  options: { prefix?: string; owner: string; spellings?: (path: string) => string[] },
): ConfigKeyDoc[] {
  return keys.map((k) => {
    const name = k.path.split(".").at(-1)!;
    const meaning = k.description ?? commentFor(comments, name, k.siblings) ?? "";
    const key = options.prefix ? `${options.prefix}.${k.path}` : k.path;
    return {
      key,
      spellings: options.spellings?.(k.path) ?? [],
      type: k.type,
      ...(k.default !== undefined ? { default: k.default } : k.nullable && k.optional ? {} : {}),
      ...(k.choices ? { choices: k.choices } : {}),
      aliases: [],
      owner: options.owner,
      meaning,
      section: k.type === "section",
    };
  });
}

/** The learner's knobs of `algorithm.config`, one entry per knob with every algorithm's default. */
function algorithmKnobs(): ConfigKeyDoc[] {
  const byName = new Map<string, { spec: (typeof ALGORITHMS)[number]["parameters"][number]; defaults: string[] }>();
  for (const algorithm of ALGORITHMS) {
    for (const spec of algorithm.parameters) {
      const entry = byName.get(spec.name) ?? { spec, defaults: [] };
      entry.defaults.push(`${algorithm.name}: ${JSON.stringify(spec.default)}`);
      byName.set(spec.name, entry);
    }
  }
  return [...byName.values()].map(({ spec, defaults }) => {
    const bounds = [
      spec.above !== undefined ? `> ${spec.above}` : "",
      spec.min !== undefined ? `>= ${spec.min}` : "",
      spec.max !== undefined ? `<= ${spec.max}` : "",
    ].filter(Boolean);
    const base = spec.type === "enum" ? `one of: ${spec.allowed!.join(", ")}` : [spec.type, bounds.join(" and ")].filter(Boolean).join(" ");
    const sameDefault = new Set(defaults.map((d) => d.slice(d.indexOf(":") + 2))).size === 1;
    return {
      key: `algorithm.config.${spec.name}`,
      spellings: [],
      type: spec.nullable ? `${base} | null` : base,
      default: sameDefault ? JSON.stringify(spec.default) : defaults.join("; "),
      ...(spec.allowed ? { choices: [...spec.allowed] } : {}),
      aliases: (spec.aliases ?? []).map((alias) => `algorithm.config.${alias}`),
      owner: "learner",
      meaning: `${spec.description.replace(/\.?$/u, ".")} Algorithms: ${defaults.map((d) => d.slice(0, d.indexOf(":"))).join(", ")}.`,
      section: false,
    };
  });
}

/** A service section's own keys: `server.*` is listed once, in its own group, but for the port. */
function serviceKeys(name: string, schema: z.core.$ZodType, comments: readonly KeyComment[]): ConfigKeyDoc[] {
  const keys = schemaKeys(schema).filter((k) => k.path === "server.port" || !k.path.startsWith("server"));
  return fromSchema(keys, comments, {
    prefix: name,
    owner: name,
    spellings: (path) => [`services.${name}.${path} (train)`, `${path} (serve ${name})`],
  });
}

/**
 * The seeds' and TRL's names (config/seed-names.ts) beside the key each sets, as aliases:
 * "model.name (seed 003)", "training.num_train_epochs (seed 003: training.steps = ceil(...))".
 * A train file's services.<name>.* is the <name> service's key here.
 */
function withSeedNames(groups: ConfigGroupDoc[]): ConfigGroupDoc[] {
  const byKey = new Map(groups.flatMap((g) => g.keys.map((k) => [k.key, k] as const)));
  for (const seedName of SEED_NAMES) {
    const target = "key" in seedName.to ? seedName.to.key : "derived" in seedName.to ? DERIVED_SETS[seedName.to.derived].key : undefined;
    if (target === undefined) continue;
    const key = referenceKey(target.replace(/\.\*$/u, ""));
    const how = "derived" in seedName.to ? `: ${DERIVED_SETS[seedName.to.derived].how}` : "";
    byKey.get(key)?.aliases.push(`${seedName.name} (${sourceLabel(seedName.seeds)}${how})`);
  }
  // lean-grpo train's flags, the seeds' among them (--max_samples is seed 004's).
  for (const flag of KEY_FLAGS) {
    const names = [flag.flag, ...(flag.also ? [flag.also] : [])].join(", ");
    byKey.get(referenceKey(flag.key))?.aliases.push(`${names} (lean-grpo train flag${flag.seeds ? `; ${sourceLabel(flag.seeds)}` : ""})`);
  }
  return groups;
}

/** A key as the reference lists it: a train file's services.<name>.* as the <name> service's key. */
export function referenceKey(key: string): string {
  return key.replace(/^services\./u, "");
}

/** The seeds' and TRL's names that set no key here (refused, or accepted only where they change nothing), and the seeds' algorithm knobs that are refused. */
function namesWithoutKey(): ConfigKeyDoc[] {
  const names = SEED_NAMES.filter((n) => "refuse" in n.to || "none" in n.to).map(
    (n): ConfigKeyDoc => ({
      key: n.name,
      spellings: [],
      type: "refuse" in n.to ? "refused" : "accepted, sets nothing",
      aliases: [],
      owner: `cli (${sourceLabel(n.seeds)}'s name)`,
      meaning: `${sourceLabel(n.seeds)}: ${n.meaning}. Here: ${seedNameTarget(n)}.`,
      section: false,
    }),
  );
  const knobs = Object.entries(SEED_ALGORITHM_KNOBS).flatMap(([algorithm, byKnob]) =>
    Object.entries(byKnob).map(
      ([knob, { meant, here }]): ConfigKeyDoc => ({
        key: `algorithm.config.${knob}`,
        spellings: [`algorithm_config.${knob} (seed 001, 002)`, `--algo-config '{"${knob}": ...}' (seed 001)`],
        type: "refused",
        aliases: [],
        owner: "cli (the seeds' algorithm knobs)",
        meaning: `The seeds' ${algorithm} knob: ${meant}. Here: ${here}.`,
        section: false,
      }),
    ),
  );
  // A knob some algorithm here has (group_size is not one) is listed with the learner's knobs instead.
  const learnerKnobs = new Set(ALGORITHMS.flatMap((a) => a.parameters.flatMap((p) => [p.name, ...(p.aliases ?? [])])));
  return [...names, ...knobs.filter((k) => !learnerKnobs.has(k.key.slice("algorithm.config.".length)))];
}

export function configReference(): ConfigGroupDoc[] {
  return withSeedNames(configGroups());
}

function configGroups(): ConfigGroupDoc[] {
  const comments = readKeyComments(REPO_ROOT, SCHEMA_DIRS);
  const runSections = new Set(schemaKeys(RunConfigSchema).map((k) => k.path.split(".")[0]!));
  const runKeys = new Set(schemaKeys(RunConfigSchema).map((k) => k.path));
  // `model:` is both the CLI's (model.dir, the vocabulary) and the run's (model.reasoning_mask):
  // each key is listed where it is read.
  const trainOwn = schemaKeys(TrainFileSchema).filter((k) => {
    const section = k.path.split(".")[0]!;
    // services.<name>.*: each service's own keys, listed with its section below.
    if (section === "services") return false;
    if (k.path.startsWith("dataset.path") || !runSections.has(section)) return true;
    return section === "model" && !runKeys.has(k.path);
  });
  return [
    {
      id: "train",
      title: "lean-grpo train: the command's own keys",
      intro:
        "Read by `lean-grpo train` (and `eval`) from `--config FILE`, config groups, `LEANGRPO_TRAIN_*`, flags and dotted overrides; not sent to any service. `model.*` is also the top-level `model:` of `serve all`.",
      keys: fromSchema(trainOwn, comments, { owner: "cli" }).map((k) =>
        k.key.startsWith("model") ? { ...k, owner: "cli (train and serve all)" } : k,
      ),
    },
    {
      id: "run",
      title: "The run config: training, algorithm, rollout, eval, report, reward, prompt",
      intro:
        "The sections of a train file that describe the run. `lean-grpo train` carries them to StartRun as the typed `RunConfig` message; the orchestrator parses and checks them once per run.",
      keys: fromSchema(schemaKeys(RunConfigSchema), comments, { owner: "orchestrator" }),
    },
    {
      id: "algorithm-knobs",
      title: "algorithm.config: the learner's knobs",
      intro:
        "Sent to the learner as `TrainStepHeader.algorithm_config` and checked by it (`lean-grpo algorithms` lists the same). A knob an algorithm does not take is refused, naming the algorithm.",
      keys: algorithmKnobs(),
    },
    {
      id: "server",
      title: "server: every service's port, limits, TLS, auth and shutdown",
      intro:
        "The `server:` section of every service (`serve <service>`; `<service>.server.*` in `serve all`; `services.<service>.server.*` in a train file). Each service's default port is listed with its section.",
      keys: fromSchema(schemaKeys(ServerConfigSchema), comments, { prefix: "server", owner: "every service (kit)" }),
    },
    ...SERVICE_CATALOG.map((entry) => ({
      id: entry.name,
      title: `${entry.name}: the ${entry.name} service`,
      intro: `\`lean-grpo serve ${entry.name}\` reads these keys without the \`${entry.name}.\` prefix; \`serve all\` under \`${entry.name}:\`; a train file under \`services.${entry.name}:\`.`,
      keys: serviceKeys(entry.name, entry.schema as unknown as z.core.$ZodType, comments),
    })),
    {
      id: "learner-torch",
      title: "learner.impl, learner.torch: the PyTorch learner in a train file",
      intro:
        "A train file's `services.learner.impl: torch` starts the PyTorch learner (services/learner-torch) as a child process instead of the TypeScript one; `python`, `torchrun` and `torch` say how. `torch.*` is also the `torch` section of `python -m leangrpo_learner serve --config-json`; the rest of `services.learner` is the learner's own keys above, the same for both.",
      keys: fromSchema(schemaKeys(LearnerImplSchema), comments, {
        prefix: "learner",
        owner: "cli (train's mesh) and the PyTorch learner",
        spellings: (path) => [
          `services.learner.${path} (train)`,
          ...(path.startsWith("torch.") ? [`${path} (leangrpo_learner --config-json)`] : []),
        ],
      }),
    },
    {
      id: "topology",
      title: "A topology: serve all --topology FILE",
      intro:
        "How many processes of each service `lean-grpo serve all --topology FILE` starts on this machine and on which ports (configs/mesh/topology-3-verifiers.yaml). Each replica is `lean-grpo serve <service>` with the replica's `config` and `overrides` (the service's own keys).",
      keys: fromSchema(schemaKeys(TopologySchema), comments, { owner: "cli (serve all --topology)" }).map((k) => ({
        ...k,
        spellings: [`${k.key} (serve all --topology FILE)`],
      })),
    },
    {
      id: "seed-names",
      title: "Names that set nothing here: the seeds' and TRL's, refused or accepted as no-ops",
      intro:
        'Names the seeds or TRL give settings that cannot mean here what they meant there. `lean-grpo train` refuses each before anything starts with what to type instead (or accepts it where its value changes nothing). The names that do set a key are listed beside that key ("also accepted as").',
      keys: namesWithoutKey(),
    },
  ];
}

/**
 * The keys whose name is `query` or lies under it (a group), in any of their spellings; a
 * service's `server.*` (`learner.server.port`, `services.learner.server.limits`) as the server
 * section's keys; and a key below a free-form map (`reward.scorers.length.weight`) as the map.
 */
export function findConfigKeys(groups: readonly ConfigGroupDoc[], query: string): ConfigKeyDoc[] {
  const wanted = referenceKey(query);
  const matches = (name: string) => [query, wanted].some((q) => name === q || name.startsWith(`${q}.`));
  const strip = (name: string) => name.replace(/ \(.*\)$/u, "");
  // A flag is found by its name with or without its dashes, in either spelling (max_samples, --max_samples, -n).
  const bare = (name: string) => name.replace(/^-+/u, "");
  const flagMatches = (alias: string) =>
    / \(lean-grpo train flag/u.test(alias) &&
    strip(alias)
      .split(", ")
      .some((f) => f === query || bare(f) === bare(query));
  const found = groups.flatMap((group) =>
    group.keys.filter(
      (k) =>
        matches(k.key) ||
        k.aliases.some((alias) => matches(strip(alias)) || flagMatches(alias)) ||
        k.spellings.some((s) => matches(strip(s)) || matches(referenceKey(strip(s)))),
    ),
  );
  if (found.length > 0) return found;
  // A seed's name for a whole section (algorithm_config.* is algorithm.config.*): the key under ours.
  for (const name of SEED_NAMES) {
    const prefix = name.name.endsWith(".*") ? name.name.slice(0, -1) : undefined;
    if (prefix && query.startsWith(prefix) && "key" in name.to && name.to.key.endsWith(".*"))
      return findConfigKeys(groups, `${name.to.key.slice(0, -1)}${query.slice(prefix.length)}`);
  }
  // <service>.server.*: the section every service shares.
  const server = new RegExp(`^(?:${SERVICE_NAMES.join("|")})\\.(server(?:\\..*)?)$`, "u").exec(wanted);
  if (server)
    return groups
      .filter((g) => g.id === "server")
      .flatMap((g) => g.keys.filter((k) => k.key === server[1] || k.key.startsWith(`${server[1]}.`)));
  // Below a map whose entries are free-form (scorer parameters, an environment, algorithm knobs of a map).
  const parts = wanted.split(".");
  for (let length = parts.length - 1; length > 0; length--) {
    const prefix = parts.slice(0, length).join(".");
    const map = groups
      .flatMap((g) => g.keys)
      .filter((k) => (k.key === prefix || k.key === `${prefix}`) && /^map of|any value/u.test(k.type));
    if (map.length > 0) return map;
  }
  return [];
}
