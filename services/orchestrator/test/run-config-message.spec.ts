// The run config on the wire: the YAML shape becomes the typed RunConfig message, which
// StartRun reads back into the same input for the one schema parse (run-config.ts); the
// deprecated Struct field is read in the same place. What the message cannot hold is
// refused naming the YAML path.
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Code, ConnectError } from "@connectrpc/connect";
import { loadConfig } from "@lean-grpo/kit";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RunConfigSchema } from "../src/run/run-config.js";
import { resolvedConfigMessage, runConfigInput, runConfigToMessage } from "../src/run/run-config-message.js";

const configs = new URL("../../../configs/", import.meta.url);
/** A preset's run sections: the file without the CLI's own keys. */
function runSections(file: URL): Record<string, unknown> {
  const {
    model: _model,
    runs_dir: _runsDir,
    services: _services,
    dataset,
    ...run
  } = loadConfig(z.record(z.string(), z.unknown()), {
    file: fileURLToPath(file),
  });
  const { path: _path, ...datasetRun } = (dataset ?? {}) as Record<string, unknown>;
  return Object.keys(datasetRun).length > 0 ? { ...run, dataset: datasetRun } : run;
}
/** As StartRun reads it: message → the schema's input → the one parse. */
const overTheWire = (json: Record<string, unknown>) => RunConfigSchema.parse(runConfigInput({ runConfig: runConfigToMessage(json) }));

describe("the typed run config", () => {
  const presets = ["train", "algorithm"].flatMap((group) =>
    readdirSync(new URL(`${group}/`, configs)).map((name) => new URL(`${group}/${name}`, configs)),
  );
  it.each(presets.map((url) => [url.pathname.split("configs/")[1]!, url] as const))("carries %s as the Struct carried it", (_, url) => {
    const run = runSections(url);
    expect(overTheWire(run)).toEqual(RunConfigSchema.parse(runConfigInput({ config: run as never })));
  });

  it("keeps an explicit 0 (temperature 0 is greedy, not the default 1) and leaves unset fields to the schema's defaults", () => {
    const config = overTheWire({ training: { temperature: 0, top_k: 0, steps: 3 }, eval: { max_problems: 0 } });
    expect(config.training).toMatchObject({ temperature: 0, top_k: 0, steps: 3, batch_size: 8, top_p: 1 });
    expect(overTheWire({}).training.temperature).toBe(1);
  });

  it("maps the YAML values proto3 has no scalar for: dynamic_sampling auto and a null adapter check", () => {
    for (const dynamic of ["auto", true, false] as const)
      expect(overTheWire({ training: { dynamic_sampling: dynamic } }).training.dynamic_sampling).toBe(dynamic);
    expect(runConfigToMessage({ training: { adapter_check: { max_logp_difference: null } } }).training?.adapterCheck?.off).toBe(true);
    expect(overTheWire({ training: { adapter_check: { max_logp_difference: null } } }).training.adapter_check).toEqual({
      max_logp_difference: null,
    });
    expect(overTheWire({ training: { adapter_check: { max_logp_difference: 0.5 } } }).training.adapter_check).toEqual({
      max_logp_difference: 0.5,
    });
    expect(overTheWire({}).training.adapter_check).toEqual({});
  });

  it("round-trips a resolved config (StartRunResponse.config)", () => {
    const resolved = RunConfigSchema.parse({
      exp_name: "x",
      algorithm: { name: "dapo", config: { beta: 0, clip_high: 0.28 } },
      training: { temperature: 0, dynamic_sampling: false },
      reward: { preset: "shaped", scorers: [{ name: "length", weight: 0, params: { cache_tokens: 4 } }] },
      dataset: { max_train_samples: 5 },
    });
    expect(RunConfigSchema.parse(runConfigInput({ runConfig: resolvedConfigMessage(resolved) }))).toEqual(resolved);
  });

  it("refuses an unknown key naming its path and the accepted keys", () => {
    expect(() => runConfigToMessage({ training: { stepz: 3 } })).toThrow(/^training\.stepz: unknown key; accepted: steps, batch_size, /);
    expect(() => runConfigToMessage({ reward: { scorers: [{ name: "length", wieght: 1 }] } })).toThrow(
      /^reward\.scorers\.0\.wieght: unknown key; accepted: name, weight, params$/,
    );
    expect(() => runConfigToMessage({ trainig: {} })).toThrow(/^trainig: unknown key; accepted: exp_name, dataset, algorithm, training, /);
    // Knobs and scorer parameters are open: the learner and the reward service check them.
    expect(runConfigToMessage({ algorithm: { config: { anything: 1 } } }).algorithm?.config).toEqual({ anything: 1 });
  });

  it("refuses a value of the wrong type naming the field", () => {
    expect(() => runConfigToMessage({ training: { steps: "abc" } })).toThrow('training.steps: expected number (uint32), got "abc"');
    expect(() => runConfigToMessage({ training: { adapter_check: { max_logp_difference: "big" } } })).toThrow(
      /^training\.adapter_check\.max_logp_difference: expected number/,
    );
  });

  it("refuses a request that sets both run_config and the deprecated config", () => {
    const both = () => runConfigInput({ runConfig: runConfigToMessage({}), config: { training: { steps: 1 } } as never });
    expect(both).toThrow(ConnectError);
    expect(() => both()).toThrow(/set run_config or the deprecated config/);
    try {
      both();
    } catch (error) {
      expect(ConnectError.from(error).code).toBe(Code.InvalidArgument);
    }
  });
});
