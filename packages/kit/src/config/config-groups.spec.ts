// Config groups (Hydra-style): `group=option` picks <root>/<group>/<option>.yaml, placed
// under the group's key (or at the top level with `# @package _global_`), composed over the
// --config file and under env, flags and dotted overrides.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, listGroups, loadConfig, splitGroupChoices } from "./index.js";

const Schema = z
  .object({
    exp_name: z.string().default(""),
    model: z
      .object({ dir: z.string().default("models/default"), dtype: z.string().default("f32") })
      .strict()
      .prefault({}),
    algorithm: z
      .object({ name: z.string().default("grpo"), beta: z.number().default(0.04) })
      .strict()
      .prefault({}),
    training: z
      .object({ steps: z.number().int().default(10), dynamic: z.boolean().default(false) })
      .strict()
      .prefault({}),
  })
  .strict();

const root = mkdtempSync(path.join(tmpdir(), "config-groups-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
function write(file: string, text: string): string {
  const full = path.join(root, file);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, text);
  return full;
}
write("model/tiny.yaml", "# The tiny model.\ndir: models/tiny\n");
write("model/big.yml", "dir: models/big\ndtype: bf16\n");
write(
  "algorithm/dapo.yaml",
  "# DAPO: sets two sections.\n# @package _global_\nalgorithm:\n  name: dapo\n  beta: 0\ntraining:\n  dynamic: true\n",
);
write("algorithm/grpo.yaml", "name: grpo\n");
mkdirSync(path.join(root, "empty"));

function configError(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("splitGroupChoices", () => {
  it("takes group=option words as choices and leaves dotted overrides and unknown names alone", () => {
    expect(listGroups(root)).toEqual(["algorithm", "model"]);
    expect(splitGroupChoices(["model=tiny", "training.steps=2", "algorithm=dapo", "exp_name=x"], root)).toEqual({
      choices: [
        { group: "model", option: "tiny" },
        { group: "algorithm", option: "dapo" },
      ],
      overrides: ["training.steps=2", "exp_name=x"],
    });
  });

  it("names an unknown option and lists the available ones", () => {
    const error = configError(() => splitGroupChoices(["model=huge"], root));
    expect(error.message).toBe(`unknown model "huge" (from model=huge); available in ${path.join(root, "model")}: big, tiny`);
  });

  it("refuses choosing one group twice", () => {
    expect(configError(() => splitGroupChoices(["model=tiny", "model=big"], root)).message).toMatch(/"model" is chosen twice/);
  });
});

describe("loadConfig with groups", () => {
  it("places a group's file under its key, or at the top level with @package _global_", () => {
    const config = loadConfig(Schema, {
      groups: {
        root,
        choices: [
          { group: "model", option: "big" },
          { group: "algorithm", option: "dapo" },
        ],
      },
    });
    expect(config.model).toEqual({ dir: "models/big", dtype: "bf16" });
    expect(config.algorithm).toEqual({ name: "dapo", beta: 0 });
    expect(config.training.dynamic).toBe(true);
  });

  it("composes file < groups < env < flags < overrides", () => {
    const file = write("run.yaml", "model:\n  dir: from-file\n  dtype: f16\ntraining:\n  steps: 5\n");
    const config = loadConfig(Schema, {
      file,
      groups: { root, choices: [{ group: "model", option: "tiny" }] },
      envPrefix: "X_",
      env: { X_TRAINING__STEPS: "6" },
      flags: { "algorithm.name": "drgrpo", "training.steps": 7 },
      overrides: ["training.steps=8"],
    });
    // The group replaces the file's model.dir and keeps its other keys.
    expect(config.model).toEqual({ dir: "models/tiny", dtype: "f16" });
    expect(config.algorithm.name).toBe("drgrpo");
    expect(config.training.steps).toBe(8);
  });

  it("names the group option as the source of a bad key", () => {
    write("model/typo.yaml", "dri: models/x\n");
    const error = configError(() => loadConfig(Schema, { groups: { root, choices: [{ group: "model", option: "typo" }] } }));
    expect(error.message).toContain(`unknown config key "model.dri" (from model=typo (${path.join(root, "model", "typo.yaml")}))`);
  });

  it("names a flag as it was typed", () => {
    const error = configError(() =>
      loadConfig(Schema, { flags: { "training.steps": "many" }, flagNames: { "training.steps": "-n many" } }),
    );
    expect(error.message).toBe('config key "training.steps": expected number, received string "many" (from flag -n many)');
  });
});
