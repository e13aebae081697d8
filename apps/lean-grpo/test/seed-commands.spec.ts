// Every command of the seeds' READMEs (test/seeds/seed-commands.ts) through `lean-grpo train`'s
// own argument parsing and planning: a command that should run resolves to the settings its
// seed means and trains one step on the shipped model (one mesh for all, one step each, the
// distinct run configs only); a command that should be refused is refused before any service
// starts, with its planned message. docs/guide/seeds.md is rendered from the outcomes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Command } from "commander";
import { RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { RunConfigMessageSchema, RunConfigSchema } from "@lean-grpo/orchestrator";
import { toJson } from "@bufbuild/protobuf";
import { registerTrainCommand, type TrainPlan } from "../src/commands/train-command.js";
import { trainRunConfig } from "../src/commands/train-config.js";
import { startMesh } from "../src/mesh/start-mesh.js";
import { withMesh, watchToEnd } from "./support/orchestrator-client.js";
import { repoRoot } from "../../../tests/support/interop-verifier.js";
import { SEED_COMMANDS, type SeedCommand } from "./seeds/seed-commands.js";
import { seedsPage, type SeedOutcome } from "./seeds/seeds-page.js";

const PAGE = path.join(repoRoot, "docs/guide/seeds.md");

/** Splits a command line as a POSIX shell would, for the quoting the seeds use ('...' and "..."). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = undefined;
      else word = (word ?? "") + ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      word ??= "";
    } else if (/\s/.test(ch)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? "") + ch;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** `lean-grpo train <here>` parsed by the command's own options and planned, without running it. */
async function plan(here: string): Promise<TrainPlan> {
  let planned: TrainPlan | undefined;
  const program = new Command().exitOverride();
  registerTrainCommand(program, async (p) => {
    planned = p;
  }).exitOverride();
  await program.parseAsync(["train", ...shellWords(here)], { from: "user" });
  return planned!;
}

/**
 * The settings of a plan as dotted keys (objects flattened, arrays and scalars kept): the CLI's
 * own sections as planned, the run sections as the orchestrator resolves them (defaults filled).
 */
function settings(p: TrainPlan): Record<string, unknown> {
  const { model, runs_dir, services, logging, dataset, ...run } = p.file as Record<string, unknown> & typeof p.file;
  const { path: datasetPath, ...datasetRun } = dataset;
  const resolved = RunConfigSchema.parse({ ...run, dataset: datasetRun });
  const flat: Record<string, unknown> = {};
  const walk = (value: unknown, at: string) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length > 0) {
      for (const [k, v] of Object.entries(value)) walk(v, at ? `${at}.${k}` : k);
    } else if (at) flat[at] = value;
  };
  walk({ ...resolved, model, runs_dir, services, logging, dataset: { ...resolved.dataset, path: datasetPath } }, "");
  return flat;
}

function trackingText(p: TrainPlan): string {
  return p.tracking.trackers.length === 0
    ? "none"
    : p.tracking.trackers.map((t) => (t === "wandb" ? `wandb ${p.tracking.mode}` : t)).join(", ");
}

let baseline: Record<string, unknown>;
let cwd: string;
let runsDir: string;
const outcomes: SeedOutcome[] = [];
/** Plans that run, by their run config, so each distinct one trains once. */
const toRun = new Map<string, { row: SeedCommand; runConfig: ReturnType<typeof trainRunConfig>; datasetPath: string }>();

/** The plan's run config for one quick step: one prompt, 8-token completions, no held-out evaluation; the rest as planned. */
function quickRun(p: TrainPlan) {
  const training = { ...((p.file as Record<string, unknown>).training as Record<string, unknown>), steps: 1, batch_size: 1, max_tokens: 8 };
  return trainRunConfig({ ...p.file, training, eval: { data: "" } } as typeof p.file);
}

beforeAll(async () => {
  cwd = process.cwd();
  process.chdir(repoRoot);
  runsDir = await mkdtemp(path.join(tmpdir(), "seed-commands-"));
  baseline = settings(await plan("examples/arith.jsonl"));
});
afterAll(async () => {
  process.chdir(cwd);
  await rm(runsDir, { recursive: true, force: true });
});

describe("the seeds' commands", () => {
  for (const [index, row] of SEED_COMMANDS.entries()) {
    it(`seed ${row.seed}: ${row.written}`, async () => {
      const { expect: expected } = row;
      if ("elsewhere" in expected) {
        expect(row.here).toBeUndefined();
        outcomes[index] = { row, outcome: `not run by the table; here: ${expected.elsewhere}` };
        return;
      }
      const result = await plan(row.here!).then(
        (p) => ({ p }),
        (error: unknown) => ({ error: error as Error }),
      );
      if ("error" in expected) {
        // Refused while planning: nothing was started (the plan is what runTrain would start from).
        expect(
          "error" in result ? result.error.message : `planned without error: ${JSON.stringify(settings((result as { p: TrainPlan }).p))}`,
        ).toMatch(expected.error);
        outcomes[index] = { row, outcome: `refused before any service starts: ${(result as { error: Error }).error.message}` };
        return;
      }
      if ("error" in result) throw result.error;
      const got = settings(result.p);
      for (const [key, value] of Object.entries(expected.runs)) expect(got[key], key).toEqual(value);
      expect(trackingText(result.p)).toBe(expected.tracking ?? "none");
      // What the command sets (its seed's meaning), then anything else it changes from the defaults.
      const sets = Object.keys(expected.runs).map((key) => `${key}=${JSON.stringify(got[key])}`);
      const also = Object.entries(got)
        .filter(([key, value]) => !(key in expected.runs) && JSON.stringify(value) !== JSON.stringify(baseline[key]))
        .map(([key, value]) => `${key}=${JSON.stringify(value)}`);
      const tracking = trackingText(result.p);
      outcomes[index] = {
        row,
        outcome: `runs: ${sets.join(", ")}${also.length > 0 ? `; also ${also.join(", ")}` : ""}${tracking === "none" ? "" : `; tracking: ${tracking}`}`,
      };
      const quick = quickRun(result.p);
      // Rows that differ only in the run's name or the number of records train alike.
      const {
        exp_name: _name,
        dataset: _dataset,
        ...kind
      } = RunConfigSchema.parse(toJson(RunConfigMessageSchema, quick, { useProtoFieldName: true }));
      if (!toRun.has(JSON.stringify(kind)))
        toRun.set(JSON.stringify(kind), { row, runConfig: quick, datasetPath: result.p.file.dataset.path });
    });
  }

  it("each distinct run config trains one step on the shipped model, on one mesh", async () => {
    expect(toRun.size).toBeGreaterThan(5);
    if (process.env.SEEDS_TIMING) process.stderr.write(`${toRun.size} distinct run configs\n`);
    const mesh = await startMesh({
      modelDir: "models/arith-tiny",
      services: {
        inference: { embedded: { tensor_backend: "cpu" }, adapters: { dir: path.join(runsDir, "adapters") } },
        learner: { backend: "cpu", checkpoint_dir: path.join(runsDir, "ckpt") },
      },
      orchestrator: { runs_dir: runsDir },
    });
    await withMesh(mesh, async (client) => {
      let n = 0;
      for (const { row, runConfig, datasetPath } of toRun.values()) {
        const runId = `seed-${++n}`;
        await client.startRun({ runId, datasetPath, runConfig });
        const t0 = performance.now();
        const final = await watchToEnd(client, runId);
        if (process.env.SEEDS_TIMING) process.stderr.write(`${runId} ${((performance.now() - t0) / 1000).toFixed(1)} s ${row.written}\n`);
        expect(final.state, `${row.written}: ${final.error}`).toBe(RunState.COMPLETED);
        expect(Number(final.step)).toBe(1);
      }
    });
  }, 300_000);

  it("docs/guide/seeds.md is the table as it ran", () => {
    expect(outcomes.filter(Boolean)).toHaveLength(SEED_COMMANDS.length);
    const page = seedsPage(outcomes);
    if (process.env.UPDATE_SEEDS_PAGE === "1") writeFileSync(PAGE, page);
    expect(existsSync(PAGE) ? readFileSync(PAGE, "utf8") : "", "run with UPDATE_SEEDS_PAGE=1 to write docs/guide/seeds.md").toBe(page);
  });
});

describe("planning", () => {
  it("reads the seeds' quoting", () => {
    expect(shellWords(`a --algo-config '{"x": 1}' b="c d"`)).toEqual(["a", "--algo-config", '{"x": 1}', "b=c d"]);
  });
  it("applies the seed names before the schema: a refused key names what the seed meant and what to type here", async () => {
    await expect(plan("examples/arith.jsonl model.model_kwargs.load_in_8bit=true")).rejects.toThrow(
      /load_in_8bit \(override [^)]*\) is seed 003's "8-bit quantized base weights.*not supported/,
    );
    await expect(plan("examples/arith.jsonl dataset.system_prompt=hi")).rejects.toThrow(/prompt\.math_template/);
    await expect(plan("examples/arith.jsonl model.model_kwargs.torch_dtype=fp16")).rejects.toThrow(/fp16 is not supported.*bf16/);
    await expect(plan("examples/arith.jsonl model.model_kwargs.torch_dtype=bf16")).rejects.toThrow(/services\.learner\.impl=torch/);
    await expect(plan("dataset.name=agentica-org/DeepScaleR-Preview-Dataset")).rejects.toThrow(/not a local file.*dataset\.path=FILE/);
    await expect(plan("examples/arith.jsonl num_epochs=1 --steps 3")).rejects.toThrow(/training\.steps.*give one of them/);
    await expect(plan("agentica-org/DeepScaleR-Preview-Dataset")).rejects.toThrow(/Hugging Face Hub dataset id.*save it as JSONL/);
    await expect(plan("theorems.jsonl")).rejects.toThrow(/dataset "theorems\.jsonl" does not exist/);
  });
  it("maps the dtype onto the PyTorch learner and a local dataset name onto the path", async () => {
    const p = await plan("dataset.name=examples/arith.jsonl model.model_kwargs.torch_dtype=fp32 services.learner.impl=torch");
    expect(p.file.dataset.path).toBe("examples/arith.jsonl");
    expect(p.file.services.learner).toMatchObject({ impl: "torch", torch: { dtype: "float32" } });
  });
  it("--steps is the run's length and -n the group size", async () => {
    const p = await plan("examples/arith.jsonl --steps 3 -n 4");
    expect(settings(p)).toMatchObject({ "training.steps": 3, "training.num_generations": 4 });
  });
});
