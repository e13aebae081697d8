import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, describeConfigKeys, loadConfig, parseOverride } from "./index.js";

const Schema = z
  .object({
    server: z
      .object({ host: z.string().default("127.0.0.1"), port: z.number().int().min(0).default(0) })
      .strict()
      .default({ host: "127.0.0.1", port: 0 }),
    training: z
      .object({
        algorithm: z.enum(["grpo", "dapo", "dr_grpo"]).default("grpo"),
        learning_rate: z.number().default(1e-6),
        batch_size: z.number().int().default(8),
        num_generations: z.number().int().default(4),
        stop: z.array(z.string()).default([]),
        // An object-level default and no leaf defaults: a source setting one key keeps the other's default.
        optimizer: z.object({ beta1: z.number(), beta2: z.number() }).strict().default({ beta1: 0.9, beta2: 0.999 }),
      })
      .strict()
      .prefault({}),
    model: z
      .object({ name: z.string().default("base"), revision: z.string().optional() })
      .strict()
      .prefault({}),
  })
  .strict();

const DEFAULTS = {
  server: { host: "127.0.0.1", port: 0 },
  training: {
    algorithm: "grpo",
    learning_rate: 1e-6,
    batch_size: 8,
    num_generations: 4,
    stop: [],
    optimizer: { beta1: 0.9, beta2: 0.999 },
  },
  model: { name: "base" },
};

const TRAINING_KEYS = "algorithm, batch_size, learning_rate, num_generations, optimizer, stop";

const dir = mkdtempSync(join(tmpdir(), "kit-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
function writeConfig(text: string, extension = "yaml"): string {
  const file = join(dir, `config-${++fileCount}.${extension}`);
  writeFileSync(file, text);
  return file;
}

function configError(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error: unknown) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError, but loading succeeded");
}

describe("loadConfig precedence", () => {
  it("fills every default, at every level", () => {
    expect(loadConfig(Schema, {})).toEqual(DEFAULTS);
  });

  it("lets each later source win: default < file < env < flags < overrides", () => {
    const file = writeConfig(
      [
        "training:",
        "  batch_size: 16", // file only
        "  num_generations: 2", // file < env
        "  learning_rate: 1.0e-3", // file < env < flag < override
        "server:",
        "  port: 1", // file < env < flag
      ].join("\n"),
    );
    const config = loadConfig(Schema, {
      file,
      envPrefix: "LEANGRPO_",
      env: {
        LEANGRPO_TRAINING__NUM_GENERATIONS: "3",
        LEANGRPO_TRAINING__LEARNING_RATE: "1e-4",
        LEANGRPO_SERVER__PORT: "2",
      },
      flags: { server: { port: 3 }, "training.learning_rate": 2e-5 },
      overrides: ["training.learning_rate=1e-5"],
    });
    expect(config.training.batch_size).toBe(16);
    expect(config.training.num_generations).toBe(3);
    expect(config.server.port).toBe(3);
    expect(config.training.learning_rate).toBe(1e-5);
    // Keys no source set keep their defaults, beside the keys that were set.
    expect(config.server.host).toBe("127.0.0.1");
    expect(config.training.optimizer).toEqual({ beta1: 0.9, beta2: 0.999 });
  });

  it("merges objects key by key but replaces arrays", () => {
    const file = writeConfig("training:\n  stop: [a, b]\n  optimizer:\n    beta1: 0.5\n");
    const config = loadConfig(Schema, { file, overrides: ["training.optimizer.beta2=0.95", "training.stop=[c]"] });
    expect(config.training.optimizer).toEqual({ beta1: 0.5, beta2: 0.95 });
    expect(config.training.stop).toEqual(["c"]);
  });

  it("merges a source's part of an object over the object's own default", () => {
    const file = writeConfig("training:\n  optimizer:\n    beta1: 0.5\n");
    expect(loadConfig(Schema, { file }).training.optimizer).toEqual({ beta1: 0.5, beta2: 0.999 });
  });

  it("reads a JSON file and treats an empty file as setting nothing", () => {
    const json = writeConfig(JSON.stringify({ model: { name: "lean-7b" } }), "json");
    expect(loadConfig(Schema, { file: json }).model.name).toBe("lean-7b");
    expect(loadConfig(Schema, { file: writeConfig("") })).toEqual(DEFAULTS);
  });
});

describe("env source", () => {
  it("nests on __, keeps single underscores in the key, and ignores variables without the prefix", () => {
    const config = loadConfig(Schema, {
      envPrefix: "LEANGRPO_",
      env: {
        LEANGRPO_TRAINING__LEARNING_RATE: "1e-5",
        LEANGRPO_TRAINING__OPTIMIZER__BETA1: "0.8",
        LEANGRPO_TRAINING__STOP: "[x, y]",
        OTHER_TRAINING__BATCH_SIZE: "99",
        PATH: "/usr/bin",
      },
    });
    expect(config.training.learning_rate).toBe(1e-5);
    expect(config.training.optimizer.beta1).toBe(0.8);
    expect(config.training.stop).toEqual(["x", "y"]);
    expect(config.training.batch_size).toBe(8);
  });

  it("never reads LEANGRPO_AUTH_TOKEN, the mesh token, as a config key, whatever the prefix", () => {
    // Under serve all's prefix "LEANGRPO_" the variable would otherwise be the unknown key auth_token.
    const env = { LEANGRPO_AUTH_TOKEN: "t0k", LEANGRPO_SERVER__PORT: "9" };
    expect(loadConfig(Schema, { envPrefix: "LEANGRPO_", env }).server.port).toBe(9);
    expect(loadConfig(Schema, { envPrefix: "LEANGRPO_AUTH_", env: { LEANGRPO_AUTH_TOKEN: "t0k" } })).toEqual(DEFAULTS);
    // Any other variable under the prefix is still a key, and an unknown one is still an error.
    expect(configError(() => loadConfig(Schema, { envPrefix: "LEANGRPO_", env: { LEANGRPO_AUTH_TOKENS: "x" } })).message).toContain(
      "auth_tokens",
    );
  });

  it("is not read at all without envPrefix", () => {
    const env = { LEANGRPO_NOT_A_KEY: "1", LEANGRPO_SERVER__PORT: "9" };
    expect(loadConfig(Schema, { env })).toEqual(DEFAULTS);
  });

  it("rejects a variable name with an empty nesting level", () => {
    const error = configError(() => loadConfig(Schema, { envPrefix: "LEANGRPO_", env: { LEANGRPO_TRAINING____X: "1" } }));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]!.source).toBe("env LEANGRPO_TRAINING____X");
    expect(error.message).toContain("malformed env var name");
  });
});

describe("string values", () => {
  it("parses override values as YAML scalars and flow collections", () => {
    expect(parseOverride("training.learning_rate=1e-5")).toEqual({ path: ["training", "learning_rate"], value: 1e-5 });
    expect(parseOverride("a=true").value).toBe(true);
    expect(parseOverride("a=[a, b]").value).toEqual(["a", "b"]);
    expect(parseOverride("a={x: 1}").value).toEqual({ x: 1 });
    expect(parseOverride("a=null").value).toBeNull();
  });

  it("keeps as strings what is not a scalar or flow collection, and splits at the first =", () => {
    expect(parseOverride("a=hello world").value).toBe("hello world");
    expect(parseOverride("a=k: v").value).toBe("k: v");
    expect(parseOverride("a=x=y").value).toBe("x=y");
    expect(parseOverride("a=").value).toBe("");
    expect(parseOverride("a='007'").value).toBe("007");
    expect(parseOverride("a=[unclosed").value).toBe("[unclosed");
  });

  it("keeps the original text where the schema wants a string", () => {
    const config = loadConfig(Schema, {
      envPrefix: "LEANGRPO_",
      env: { LEANGRPO_MODEL__REVISION: "12345" },
      overrides: ["model.name=1.10"],
    });
    expect(config.model).toEqual({ name: "1.10", revision: "12345" });
  });

  it("reads string flags like env values, as node's parseArgs gives only strings", () => {
    const config = loadConfig(Schema, {
      flags: { "server.port": "8080", server: { host: "0.0.0.0" }, "training.batch_size": undefined },
    });
    expect(config.server).toEqual({ host: "0.0.0.0", port: 8080 });
    expect(config.training.batch_size).toBe(8);
  });
});

describe("unknown keys", () => {
  const cases: { name: string; source: string; load: () => unknown }[] = [
    {
      name: "file",
      source: "file ",
      load: () => loadConfig(Schema, { file: writeConfig("training:\n  learnin_rate: 1e-5\n") }),
    },
    {
      name: "env",
      source: "env LEANGRPO_TRAINING__LEARNIN_RATE",
      load: () => loadConfig(Schema, { envPrefix: "LEANGRPO_", env: { LEANGRPO_TRAINING__LEARNIN_RATE: "1e-5" } }),
    },
    {
      name: "flag",
      source: "flag --training.learnin_rate",
      load: () => loadConfig(Schema, { flags: { training: { learnin_rate: 1e-5 } } }),
    },
    {
      name: "override",
      source: "override training.learnin_rate=1e-5",
      load: () => loadConfig(Schema, { overrides: ["training.learnin_rate=1e-5"] }),
    },
  ];

  it.each(cases)("names the key, its source and the accepted siblings ($name)", ({ source, load }) => {
    const error = configError(load);
    // Reported once, though the strict schema makes zod report it too.
    expect(error.issues).toHaveLength(1);
    const issue = error.issues[0]!;
    expect(issue.path).toBe("training.learnin_rate");
    expect(issue.source.startsWith(source)).toBe(true);
    expect(issue.message).toBe(
      `unknown config key "training.learnin_rate" (from ${issue.source}); accepted keys under "training": ${TRAINING_KEYS}`,
    );
    expect(error.message).toBe(issue.message);
  });

  it("lists the top-level keys for an unknown top-level key", () => {
    const error = configError(() => loadConfig(Schema, { overrides: ["trainer.lr=1"] }));
    expect(error.message).toBe(
      'unknown config key "trainer" (from override trainer.lr=1); accepted keys at the top level: model, server, training',
    );
  });

  it("rejects unknown keys at any depth even when the schema is not .strict()", () => {
    const Loose = z.object({ a: z.object({ b: z.object({ c: z.number().default(1) }).default({ c: 1 }) }).default({ b: { c: 1 } }) });
    expect(loadConfig(Loose, {})).toEqual({ a: { b: { c: 1 } } });
    const error = configError(() => loadConfig(Loose, { overrides: ["a.b.d=2"] }));
    expect(error.issues.map((issue) => issue.path)).toEqual(["a.b.d"]);
    expect(error.message).toContain('accepted keys under "a.b": c');
  });

  it("allows extra keys where the schema asks for them", () => {
    const Open = z.object({ labels: z.looseObject({ team: z.string().optional() }).default({}) }).strict();
    expect(loadConfig(Open, { overrides: ["labels.owner=me"] })).toEqual({ labels: { owner: "me" } });
  });

  it("does not let a __proto__ key reach Object.prototype", () => {
    const error = configError(() => loadConfig(Schema, { overrides: ["__proto__.polluted=1"] }));
    expect(error.issues[0]!.path).toBe("__proto__");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("bad values", () => {
  it("names the key, the expected type, the value received and its source", () => {
    const error = configError(() => loadConfig(Schema, { envPrefix: "LEANGRPO_", env: { LEANGRPO_SERVER__PORT: "abc" } }));
    expect(error.issues).toEqual([
      {
        path: "server.port",
        source: "env LEANGRPO_SERVER__PORT",
        message: 'config key "server.port": expected number, received string "abc" (from env LEANGRPO_SERVER__PORT)',
      },
    ]);
  });

  it("lists the allowed values of an enum", () => {
    const file = writeConfig("training:\n  algorithm: ppo\n");
    const error = configError(() => loadConfig(Schema, { file }));
    expect(error.message).toBe(
      `config key "training.algorithm": expected one of "grpo" | "dapo" | "dr_grpo", received string "ppo" (from file ${file})`,
    );
  });

  it("attributes a value to the last source that set it", () => {
    const file = writeConfig("server:\n  port: -1\n");
    const error = configError(() => loadConfig(Schema, { file, flags: { server: { port: -2 } } }));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]!.source).toBe("flag --server.port");
    expect(error.message).toMatch(/^config key "server\.port": too small: .*received number -2 \(from flag --server\.port\)$/);
  });

  it("lists every issue, one per line", () => {
    const error = configError(() =>
      loadConfig(Schema, {
        envPrefix: "LEANGRPO_",
        env: { LEANGRPO_TRAINING__BATCH_SIZE: "many" },
        overrides: ["model.nme=x"],
      }),
    );
    expect(error.issues.map((issue) => issue.path)).toEqual(["model.nme", "training.batch_size"]);
    expect(error.message.split("\n")).toEqual(error.issues.map((issue) => issue.message));
  });

  it("lists the options of a discriminated union", () => {
    const Reward = z
      .object({
        reward: z.discriminatedUnion("kind", [
          z.object({ kind: z.literal("lean"), timeout_ms: z.number() }).strict(),
          z.object({ kind: z.literal("format") }).strict(),
        ]),
      })
      .strict();
    expect(loadConfig(Reward, { overrides: ["reward.kind=format"] })).toEqual({ reward: { kind: "format" } });
    const error = configError(() => loadConfig(Reward, { overrides: ["reward.kind=length"] }));
    expect(error.message).toBe('config key "reward.kind": expected one of "lean" | "format" (from override reward.kind=length)');
  });

  it("says a required key no source sets is missing", () => {
    const Required = z.object({ database: z.object({ url: z.string() }).strict() }).strict();
    const error = configError(() => loadConfig(Required, { overrides: ["database={}"] }));
    expect(error.issues).toEqual([
      {
        path: "database.url",
        source: "override database={}",
        message: 'config key "database.url" is required (expected string) but no source sets it',
      },
    ]);
  });
});

describe("malformed sources", () => {
  it.each(["training.learning_rate", "=1e-5", "training..learning_rate=1", ".x=1"])(
    "rejects the override %j, naming it and the accepted form",
    (override) => {
      const error = configError(() => loadConfig(Schema, { overrides: [override] }));
      expect(error.issues).toHaveLength(1);
      expect(error.issues[0]!.source).toBe(`override ${override}`);
      expect(error.message).toBe(`malformed override "${override}": expected key.path=value, e.g. training.learning_rate=1e-5`);
      expect(() => parseOverride(override)).toThrow(ConfigError);
    },
  );

  it("names the file and the line of a YAML error", () => {
    const file = writeConfig("server:\n  port: 1\n  port: 2\n");
    const error = configError(() => loadConfig(Schema, { file }));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]!.source).toBe(`file ${file}`);
    expect(error.message).toMatch(new RegExp(`^config file "${file}" is not valid YAML: line 3, column 3: `));
  });

  it("reports every syntax error of a file with its line", () => {
    const file = writeConfig("training:\n  stop: [a, b\nmodel:\n  name: x\n");
    const error = configError(() => loadConfig(Schema, { file }));
    expect(error.issues.length).toBeGreaterThan(0);
    expect(error.issues.every((issue) => /: line \d+, column \d+: /.test(issue.message))).toBe(true);
  });

  it("names a missing file", () => {
    const file = join(dir, "absent.yaml");
    const error = configError(() => loadConfig(Schema, { file }));
    expect(error.issues).toEqual([{ path: "", source: `file ${file}`, message: `config file "${file}" not found` }]);
  });

  it("rejects a file whose top level is not a mapping", () => {
    const file = writeConfig("- a\n- b\n");
    const error = configError(() => loadConfig(Schema, { file }));
    expect(error.message).toContain("must hold a mapping");
  });
});

describe("describeConfigKeys", () => {
  it("lists every dotted leaf key in declaration order", () => {
    expect(describeConfigKeys(Schema)).toEqual([
      "server.host",
      "server.port",
      "training.algorithm",
      "training.learning_rate",
      "training.batch_size",
      "training.num_generations",
      "training.stop",
      "training.optimizer.beta1",
      "training.optimizer.beta2",
      "model.name",
      "model.revision",
    ]);
  });
});
