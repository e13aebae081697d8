// The config reference (`lean-grpo config`, docs/reference/config.md) against the schemas:
// every key loading accepts is listed with a meaning, defaults are what loading fills in,
// and the command answers for a key, a group, an alias, and refuses an unknown name.
import { describe, expect, it } from "vitest";
import { describeConfigKeys, loadConfig } from "@lean-grpo/kit";
import { RunConfigSchema } from "@lean-grpo/orchestrator";
import { configReference, findConfigKeys } from "../src/config-reference/config-reference.js";
import { configText } from "../src/commands/config-command.js";
import { SERVICE_CATALOG } from "../src/mesh/service-catalog.js";
import { DERIVED_SETS, SEED_NAMES } from "../src/config/seed-names.js";
import { KEY_FLAGS } from "../src/config/train-flags.js";
import { TorchSectionSchema } from "../src/mesh/torch-learner-config.js";
import { TopologySchema } from "../src/mesh/topology.js";
import { SEED_KEYS } from "./seeds/seed-keys.js";

const groups = configReference();
const all = groups.flatMap((g) => g.keys);

describe("config reference", () => {
  it("lists every leaf key of the run config, each with a meaning", () => {
    const listed = new Set(groups.find((g) => g.id === "run")!.keys.map((k) => k.key));
    for (const key of describeConfigKeys(RunConfigSchema)) expect(listed, key).toContain(key);
  });

  it("gives every key that is not a section a meaning from its schema", () => {
    expect(all.filter((k) => !k.section && k.meaning === "").map((k) => k.key)).toEqual([]);
  });

  it("states the defaults that loading fills in, the service's own port included", () => {
    for (const entry of SERVICE_CATALOG) {
      const loaded = loadConfig(entry.schema, {}) as { server: { port: number } };
      const port = all.find((k) => k.key === `${entry.name}.server.port`);
      expect(port?.default, entry.name).toBe(String(loaded.server.port));
    }
    const run = RunConfigSchema.parse({});
    expect(all.find((k) => k.key === "training.steps")?.default).toBe(String(run.training.steps));
    expect(all.find((k) => k.key === "prompt.feedback_template")?.default).toBe(JSON.stringify(run.prompt.feedback_template));
    expect(all.find((k) => k.key === "training.mode")?.choices).toEqual(["whole", "tactic", "repair"]);
  });

  it("finds a key by its alias and a service key in its train-file spelling", () => {
    expect(findConfigKeys(groups, "algorithm.config.truncated_is").map((k) => k.key)).toEqual(["algorithm.config.importance_sampling_cap"]);
    expect(findConfigKeys(groups, "services.inference.vllm.url").map((k) => k.key)).toEqual(["inference.vllm.url"]);
    // The seeds' names (config/seed-names.ts) are aliases of the key they set.
    // (`serve learner` has a model.name of its own, listed too.)
    expect(findConfigKeys(groups, "model.name").map((k) => k.key)).toEqual(["model.dir", "learner.model.name"]);
    expect(all.find((k) => k.key === "model.dir")?.aliases).toContain("model.path (seed 004)");
  });

  it("holds the PyTorch learner's keys and a topology's, in the spelling each file writes them", async () => {
    for (const key of Object.keys(TorchSectionSchema.shape)) {
      expect(
        findConfigKeys(groups, `services.learner.torch.${key}`).map((k) => k.key),
        key,
      ).toEqual([`learner.torch.${key}`]);
    }
    for (const key of ["services.learner.impl", "services.learner.python", "services.learner.torchrun.nproc_per_node"])
      expect(
        findConfigKeys(groups, key).map((k) => k.owner),
        key,
      ).toEqual(["cli (train's mesh) and the PyTorch learner"]);
    for (const key of describeConfigKeys(TopologySchema)) expect(findConfigKeys(groups, key).length, key).toBeGreaterThan(0);
    expect(await configText("services.learner.impl")).toMatch(/^learner\.impl {2}\(.*\n {4}type: one of: ts, torch {4}default: "ts"/u);
    expect(await configText("services.verifier.replicas")).toContain("type: integer >= 0 and <= 64");
  });

  it("lists every seed and TRL name beside the key it sets, or among the names that set nothing, labelled with who writes it", () => {
    for (const name of SEED_NAMES) {
      const found = findConfigKeys(groups, name.name.replace(/\.\*$/u, ".x"));
      expect(found.length, name.name).toBeGreaterThan(0);
      const target = "key" in name.to ? name.to.key : "derived" in name.to ? DERIVED_SETS[name.to.derived].key : undefined;
      if (target && !target.endsWith(".*")) {
        // Beside its key: an alias of the very key it sets.
        const key = all.find((k) => k.key === target.replace(/^services\./u, ""));
        expect(
          key?.aliases.some((a) => a.startsWith(`${name.name} (`)),
          `${name.name} beside ${target}`,
        ).toBe(true);
      }
      for (const seed of name.seeds.filter((s) => s !== "TRL")) {
        expect(Object.keys(SEED_KEYS[seed]), `${name.name} is labelled seed ${seed}`).toContain(name.name);
      }
    }
    // Every name a seed writes answers `lean-grpo config`.
    for (const [seed, keys] of Object.entries(SEED_KEYS))
      for (const key of Object.keys(keys))
        expect(findConfigKeys(groups, key.replace(/\.\*$/u, ".epsilon")).length, `seed ${seed}: ${key}`).toBeGreaterThan(0);
    // Names no seed writes are TRL's, not seed 001's.
    expect(all.find((k) => k.key === "logging.report_to")?.aliases).toContain("report_to (TRL)");
    expect(
      all.flatMap((k) => k.aliases).filter((a) => /^(report_to|save_steps|max_grad_norm|max_completion_length|beta) \(seed/u.test(a)),
    ).toEqual([]);
  });

  it("knows every flag of lean-grpo train by its key, the seeds' flags too, with or without the dashes", async () => {
    for (const flag of KEY_FLAGS) {
      for (const name of [flag.flag, flag.flag.replace(/^-+/u, ""), ...(flag.also ? [flag.also] : [])]) {
        const keys = findConfigKeys(groups, name).map((k) => k.key);
        expect(keys, name).toContain(flag.key.replace(/^services\./u, ""));
      }
    }
    const maxSamples = await configText("max_samples");
    expect(maxSamples).toMatch(/^dataset\.max_train_samples {2}\(orchestrator\)/u);
    expect(maxSamples).toContain("--max_samples (lean-grpo train flag; seed 004)");
  });

  it("says what each of TRL's ten common names does here", async () => {
    const answers: Record<string, RegExp> = {
      optim: /AdamW is the learners' optimizer/,
      loss_type: /^algorithm\.name /u,
      max_prompt_length: /max_prompt_length \(TRL: a check before the run starts/,
      save_strategy: /steps only: a run checkpoints every training\.checkpoint_every steps/,
      eval_strategy: /steps only: the held-out set \(eval\.data\)/,
      save_total_limit: /every checkpoint of a run is kept/,
      tf32: /false only/,
      use_vllm: /^inference\.backend /u,
      log_completions: /^report\.samples_per_step /u,
      logging_dir: /runs\/<id>\/tensorboard/,
    };
    for (const [name, answer] of Object.entries(answers)) {
      // As printed, its lines joined.
      for (const asked of [name, `training.${name}`]) expect((await configText(asked)).replace(/\s+/gu, " "), asked).toMatch(answer);
    }
  });

  it("prints one key, a group, and refuses an unknown name naming it", async () => {
    const one = await configText("training.async");
    expect(one).toContain("training.async  (orchestrator)");
    expect(one).toContain("type: boolean    default: false");
    const group = await configText("rollout");
    expect(group.split("\n\n").map((block) => block.split("  ")[0])).toEqual([
      "rollout.max_turns",
      "rollout.turn_discount",
      "rollout.max_feedback_tokens",
    ]);
    await expect(configText("training.asynk")).rejects.toThrow(/no config key or group "training.asynk"/);
  });
});
