// Every config key of lean-grpo, from the schemas that parse them: the train file's own keys,
// the run config (the orchestrator's), the learner's algorithm knobs, the server section every
// service shares, and each service's section. One list feeds `lean-grpo config` and the docs'
// generated reference (scripts/docs/config-reference.ts), so both say what loading accepts.
import { fileURLToPath } from "node:url";
import type { z } from "zod";
import { schemaKeys, ServerConfigSchema, type SchemaKey } from "@lean-grpo/kit";
import { ALGORITHMS } from "@lean-grpo/learner";
import { RunConfigSchema } from "@lean-grpo/orchestrator";
import { SERVICE_CATALOG } from "../mesh/service-catalog.js";
import { TrainFileSchema } from "../commands/train-file.js";
import { SEED_NAMES } from "../config/seed-names.js";
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

/** The seeds' names of each key (config/seed-names.ts), as aliases: "model.name (seed 003)". */
function withSeedNames(groups: ConfigGroupDoc[]): ConfigGroupDoc[] {
  const byKey = new Map(groups.flatMap((g) => g.keys.map((k) => [k.key, k] as const)));
  for (const seedName of SEED_NAMES) {
    if (!("key" in seedName.to)) continue;
    // A train file's services.<name>.* is the <name> service's key here.
    const key = seedName.to.key.replace(/^services\./u, "").replace(/\.\*$/u, "");
    byKey.get(key)?.aliases.push(`${seedName.name} (seed ${seedName.seeds.join(", ")})`);
  }
  return groups;
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
  ];
}

/** The keys whose name is `query` or lies under it (a group), in any of their spellings. */
export function findConfigKeys(groups: readonly ConfigGroupDoc[], query: string): ConfigKeyDoc[] {
  const wanted = query.replace(/^services\./u, "");
  const matches = (name: string) => name === wanted || name.startsWith(`${wanted}.`);
  return groups.flatMap((group) =>
    group.keys.filter(
      (k) =>
        matches(k.key) ||
        k.aliases.some((alias) => matches(alias.replace(/ \(.*\)$/u, ""))) ||
        k.spellings.some((s) => matches(s.replace(/ \(.*\)$/u, "").replace(/^services\./u, ""))) ||
        (group.id === "server" && matches(`${k.key}`)),
    ),
  );
}
