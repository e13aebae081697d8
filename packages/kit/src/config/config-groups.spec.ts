// Config groups (Hydra-style): `group=option` picks <root>/<group>/<option>.yaml, placed
// under the group's key (or at the top level with `# @package _global_`), composed under the
// --config file (as Hydra's primary config overrides its groups), env, flags and overrides;
// an option's defaults list chooses options of the groups the command line leaves unchosen.
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

  it("finds an option in any case, as -a does (algorithm=DAPO is dapo.yaml)", () => {
    expect(splitGroupChoices(["algorithm=DAPO", "model=Tiny"], root).choices).toEqual([
      { group: "algorithm", option: "dapo" },
      { group: "model", option: "tiny" },
    ]);
    const error = configError(() => splitGroupChoices(["algorithm=DAPOX"], root));
    expect(error.message).toBe(
      `unknown algorithm "DAPOX" (from algorithm=DAPOX); available in ${path.join(root, "algorithm")}: dapo, grpo`,
    );
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

  it("composes defaults < groups < file < env < flags < overrides", () => {
    const file = write("run.yaml", "model:\n  dtype: f16\ntraining:\n  steps: 5\n");
    const config = loadConfig(Schema, {
      file,
      groups: { root, choices: [{ group: "model", option: "big" }] },
      envPrefix: "X_",
      env: { X_TRAINING__STEPS: "6" },
      flags: { "algorithm.name": "drgrpo", "training.steps": 7 },
      overrides: ["training.steps=8"],
    });
    // The file replaces the group's model.dtype and keeps its other keys.
    expect(config.model).toEqual({ dir: "models/big", dtype: "f16" });
    expect(config.algorithm.name).toBe("drgrpo");
    expect(config.training.steps).toBe(8);
    const fileOverGroup = loadConfig(Schema, { file, groups: { root, choices: [{ group: "model", option: "big" }] } });
    expect(fileOverGroup.training.steps).toBe(5);
  });

  it("composes an option's defaults list before it, unless the command line chose that group", () => {
    write(
      "dataset/arith.yaml",
      "# @package _global_\ndefaults:\n  - /model: tiny\n  - algorithm: dapo\nexp_name: arith\ntraining:\n  steps: 3\n",
    );
    write("dataset/self-first.yaml", "# @package _global_\ndefaults:\n  - _self_\n  - algorithm: dapo\ntraining:\n  dynamic: false\n");
    const data = loadConfig(Schema, { groups: { root, choices: [{ group: "dataset", option: "arith" }] } });
    expect(data).toMatchObject({ exp_name: "arith", model: { dir: "models/tiny" }, algorithm: { name: "dapo" }, training: { steps: 3 } });
    const chosen = loadConfig(Schema, {
      groups: {
        root,
        choices: [
          { group: "dataset", option: "arith" },
          { group: "model", option: "big" },
        ],
      },
    });
    expect(chosen.model).toEqual({ dir: "models/big", dtype: "bf16" });
    // `_self_` first: the defaults compose over the option's own keys.
    const selfFirst = loadConfig(Schema, { groups: { root, choices: [{ group: "dataset", option: "self-first" }] } });
    expect(selfFirst.training.dynamic).toBe(true);
  });

  it("refuses a malformed defaults list and a default option that does not exist, naming the file", () => {
    write("dataset/bad.yaml", "defaults: model=tiny\n");
    write("dataset/missing.yaml", "defaults:\n  - model: huge\n");
    expect(configError(() => loadConfig(Schema, { groups: { root, choices: [{ group: "dataset", option: "bad" }] } })).message).toMatch(
      /defaults in dataset=bad \(.*bad\.yaml\) must be a list of `group: option` items/,
    );
    expect(configError(() => loadConfig(Schema, { groups: { root, choices: [{ group: "dataset", option: "missing" }] } })).message).toMatch(
      /unknown model "huge" \(in the defaults list of dataset=missing\); available in .*: big, tiny/,
    );
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
