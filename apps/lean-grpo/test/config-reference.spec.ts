// The config reference (`lean-grpo config`, docs/reference/config.md) against the schemas:
// every key loading accepts is listed with a meaning, defaults are what loading fills in,
// and the command answers for a key, a group, an alias, and refuses an unknown name.
import { describe, expect, it } from "vitest";
import { describeConfigKeys, loadConfig } from "@lean-grpo/kit";
import { RunConfigSchema } from "@lean-grpo/orchestrator";
import { configReference, findConfigKeys } from "../src/config-reference/config-reference.js";
import { configText } from "../src/commands/config-command.js";
import { SERVICE_CATALOG } from "../src/mesh/service-catalog.js";

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
