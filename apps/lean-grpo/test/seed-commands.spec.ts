// Every command of the seeds' READMEs, and every setting they document, on this project's data
// (test/seeds/seed-commands.ts) through `lean-grpo train`'s own argument parsing, planning and
// pre-flight: a command that should run resolves to the settings its seed means and trains one
// step on the shipped model (one mesh for all, one step each, the distinct run configs only;
// the PyTorch learner's on a mesh of its own); one that should be refused is refused before any
// service starts, with its planned message. Then what the runs do: the seed-003-style command
// answers and trains as the README's configuration does, with W&B keeping every evaluation and
// the values used; a system prompt reaches the model; a refusal exits 2 with nothing written.
// docs/guide/seeds.md is rendered from the outcomes.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Command } from "commander";
import { RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { RunConfigMessageSchema, RunConfigSchema, RunOutputs, runConfigToMessage } from "@lean-grpo/orchestrator";
import { toJson } from "@bufbuild/protobuf";
import { Table, Utf8, tableToIPC, vectorFromArray } from "apache-arrow";
import { Table as ParquetTable, WriterPropertiesBuilder, writeParquet } from "parquet-wasm/node";
import { registerTrainCommand, type TrainPlan } from "../src/commands/train-command.js";
import type { trainRunConfig } from "../src/commands/train-config.js";
import { startMesh } from "../src/mesh/start-mesh.js";
import { withMesh, watchToEnd, type OrchestratorClient } from "./support/orchestrator-client.js";
import { startWandbStandIn } from "./tracking/wandb-stand-in.js";
import { configReference, findConfigKeys } from "../src/config-reference/config-reference.js";
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
/** Records as a parquet file (two rows a row group), as a corpus on disk holds them. */
function parquetOf(rows: readonly Record<string, string>[]): Uint8Array {
  const columns = Object.fromEntries(
    Object.keys(rows[0]!).map((name) => [
      name,
      vectorFromArray(
        rows.map((r) => r[name]!),
        new Utf8(),
      ),
    ]),
  );
  const table = ParquetTable.fromIPCStream(tableToIPC(new Table(columns), "stream"));
  return writeParquet(table, new WriterPropertiesBuilder().setMaxRowGroupSize(2).build());
}

function settings(p: TrainPlan): Record<string, unknown> {
  const { model, runs_dir, services, logging, dataset } = p.file;
  // The run sections as sent (the model's own prompt filled in where the sources set none).
  const resolved = RunConfigSchema.parse(toJson(RunConfigMessageSchema, p.runConfig, { useProtoFieldName: true }));
  const datasetPath = dataset.path;
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
const reference = configReference();
let cwd: string;
let runsDir: string;
const outcomes: SeedOutcome[] = [];
interface QuickRun {
  row: SeedCommand;
  runConfig: ReturnType<typeof trainRunConfig>;
  datasetPath: string;
  /** The learner's section when it is the PyTorch learner (its run goes to a mesh with that learner). */
  torchLearner?: Record<string, unknown>;
}
/** Plans that run, by their run config (and learner), so each distinct one trains once. */
const toRun = new Map<string, QuickRun>();
const hasTorch = spawnSync("/usr/bin/python3", ["-c", "import torch, grpc, google.protobuf"]).status === 0;
if (!hasTorch) console.warn("skipping the seed rows on the PyTorch learner: /usr/bin/python3 lacks torch, grpcio or protobuf");

/** The plan's run config (as it would be sent) with some sections' keys replaced. */
function runConfigWith(p: TrainPlan, changes: Record<string, Record<string, unknown>>) {
  const json = toJson(RunConfigMessageSchema, p.runConfig, { useProtoFieldName: true }) as Record<string, Record<string, unknown>>;
  for (const [section, keys] of Object.entries(changes)) json[section] = { ...json[section], ...keys };
  return runConfigToMessage(json);
}

/** The plan's run config for one quick step: one prompt, 8-token completions, no held-out evaluation; the rest as planned. */
function quickRun(p: TrainPlan) {
  return runConfigWith(p, { training: { steps: 1, batch_size: 1, max_tokens: 8 }, eval: { data: "" } });
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
        // Every key it tells users to type is one `lean-grpo config` knows.
        for (const [, key] of expected.elsewhere.matchAll(/([a-z_][\w.]*\.[\w.]+)=/gu))
          expect(findConfigKeys(reference, key!), key).not.toEqual([]);
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
        outcome:
          `runs: ${sets.join(", ")}${also.length > 0 ? `; also ${also.join(", ")}` : ""}${tracking === "none" ? "" : `; tracking: ${tracking}`}` +
          result.p.warnings.map((w) => `; warns: ${w}`).join(""),
      };
      const quick = quickRun(result.p);
      // Rows that differ only in the run's name or the number of records train alike.
      const {
        exp_name: _name,
        dataset: _dataset,
        ...kind
      } = RunConfigSchema.parse(toJson(RunConfigMessageSchema, quick, { useProtoFieldName: true }));
      const learner = result.p.file.services.learner;
      const torchLearner = learner?.impl === "torch" ? learner : undefined;
      const key = JSON.stringify({ kind, torchLearner });
      if (!toRun.has(key))
        toRun.set(key, { row, runConfig: quick, datasetPath: result.p.file.dataset.path, ...(torchLearner ? { torchLearner } : {}) });
    });
  }

  it("each distinct run config trains one step on the shipped model, under the algorithm as the learner names it", async () => {
    expect(toRun.size).toBeGreaterThan(5);
    if (process.env.SEEDS_TIMING) process.stderr.write(`${toRun.size} distinct run configs\n`);
    const runs = [...toRun.values()];
    const oneStep = async (client: OrchestratorClient, { row, runConfig, datasetPath }: QuickRun, runId: string) => {
      await client.startRun({ runId, datasetPath, runConfig });
      const t0 = performance.now();
      const final = await watchToEnd(client, runId);
      if (process.env.SEEDS_TIMING) process.stderr.write(`${runId} ${((performance.now() - t0) / 1000).toFixed(1)} s ${row.written}\n`);
      expect(final.state, `${row.written}: ${final.error}`).toBe(RunState.COMPLETED);
      expect(Number(final.step)).toBe(1);
      expect(final.algorithm, row.written).toBe(runConfig.algorithm?.name?.toLowerCase() ?? "grpo");
    };
    const services = (learner: Record<string, unknown>) => ({
      inference: { adapters: { dir: path.join(runsDir, "adapters") } },
      learner: { ...learner, checkpoint_dir: path.join(runsDir, "ckpt") },
    });
    const mesh = await startMesh({
      modelDir: "models/arith-tiny",
      services: services({}),
      orchestrator: { runs_dir: runsDir },
    });
    await withMesh(mesh, async (client) => {
      for (const [n, run] of runs.filter((r) => !r.torchLearner).entries()) await oneStep(client, run, `seed-${n + 1}`);
    });
    for (const [n, run] of runs.filter((r) => r.torchLearner).entries()) {
      if (!hasTorch) continue;
      const torchMesh = await startMesh({
        modelDir: "models/arith-tiny",
        services: services(run.torchLearner!),
        orchestrator: { runs_dir: runsDir },
      });
      await withMesh(torchMesh, (client) => oneStep(client, run, `seed-torch-${n + 1}`));
    }
    // About a minute on a quiet 2-core machine; the bound is for a loaded one.
  }, 900_000);

  it("docs/guide/seeds.md is the table as it ran", () => {
    expect(outcomes.filter(Boolean)).toHaveLength(SEED_COMMANDS.length);
    const page = seedsPage(outcomes);
    if (process.env.UPDATE_SEEDS_PAGE === "1") writeFileSync(PAGE, page);
    expect(existsSync(PAGE) ? readFileSync(PAGE, "utf8") : "", "run with UPDATE_SEEDS_PAGE=1 to write docs/guide/seeds.md").toBe(page);
  });
});

/** Held-out greedy accuracy (the eval.jsonl record) of a run at `step`. */
async function heldoutAt(runDir: string, step: number): Promise<number> {
  const record = (await new RunOutputs(runDir).readEvals()).find((e) => e.step === step);
  if (!record) throw new Error(`no held-out evaluation at step ${step} in ${runDir}`);
  return record.heldout_accuracy;
}

describe("what the seeds' runs do", () => {
  // The held-out problems evaluated: enough for the shipped model's 57.5 % to show, few enough to be quick.
  const HELDOUT = 40;

  it("seed 003's overrides on dataset=arith: the README's prompt and learner settings, non-zero rewards, and W&B keeps step 0 and the values used", async () => {
    const seed3 = "dataset=arith exp_name=seed3 training.learning_rate=1e-5 dataset.max_train_samples=8 training.num_train_epochs=1";
    const readme = await plan("examples/arith.jsonl --config configs/train/arith.yaml");
    const planned = await plan(seed3);
    // What decides whether the shipped model answers and learns, as the README's command has it.
    const learningKeys = Object.keys(settings(readme)).filter((k) =>
      /^(prompt\.|reward\.|model\.dir|training\.(max_tokens|temperature|num_generations|top_|seed)|services\.learner\.lora\.|eval\.data)/u.test(
        k,
      ),
    );
    expect(learningKeys.length).toBeGreaterThan(8);
    for (const key of learningKeys) expect(settings(planned)[key], key).toEqual(settings(readme)[key]);

    const server = await startWandbStandIn();
    const key = process.env.WANDB_API_KEY;
    process.env.WANDB_API_KEY = "k";
    const out = path.join(runsDir, "learns");
    try {
      const program = new Command().exitOverride();
      registerTrainCommand(program);
      await program.parseAsync(
        [
          "train",
          ...shellWords(`${seed3} eval.max_problems=${HELDOUT} logging.base_url=${server.url} logging.mode=online --output_dir ${out}`),
        ],
        { from: "user" },
      );
    } finally {
      if (key === undefined) delete process.env.WANDB_API_KEY;
      else process.env.WANDB_API_KEY = key;
      process.exitCode = undefined;
      await server.close();
    }
    const [runId] = readdirSync(out).filter((f) => f.startsWith("seed3-"));
    const runDir = path.join(out, runId!);
    const outputs = new RunOutputs(runDir);
    expect((await outputs.readRun()).state).toBe("COMPLETED");
    // The shipped model answers the group's prompt (the default prompt gets none right) ...
    const start = await heldoutAt(runDir, 0);
    expect(start).toBeGreaterThan(0.4);
    // ... and its one step trains on rewards that are not all zero.
    const [step] = await outputs.readSteps();
    expect(step!.metrics.reward_mean).toBeGreaterThan(0);

    // W&B: the run's config is the values it used, and its history starts with the evaluation before step 1.
    const upsert = server.requests.find((r) => String(r.body.query).includes("upsertBucket"))!;
    const config = JSON.parse(String((upsert.body.variables as Record<string, unknown>).config)) as Record<string, { value: unknown }>;
    expect(config["prompt.math_template"]?.value).toBe("{problem}");
    expect(config["services.learner.optimizer.learning_rate"]?.value).toBe(1e-5);
    expect(config["services.learner.lora.rank"]?.value).toBe(16);
    expect(config["dataset.path"]?.value).toBe("examples/arith.jsonl");
    expect(config["algorithm.config.beta"]?.value).toBe(0.04);
    const placeholders = Object.entries(config).filter(
      ([, { value }]) =>
        value === "{}" || (typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0),
    );
    expect(placeholders).toEqual([]);
    expect(Object.keys(config).filter((k) => /(^|\.)(token|auth|server)(\.|$)/u.test(k))).toEqual([]);
    const rows = server.requests
      .flatMap((r) => {
        const files = r.body.files as Record<string, { content: string[] }> | undefined;
        return files?.["wandb-history.jsonl"]?.content ?? [];
      })
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows.map((r) => r._step)).toEqual([0, 1]);
    expect(rows[0]).toMatchObject({ "eval/heldout_accuracy": start });
    expect(rows[1]).toMatchObject({ "eval/heldout_accuracy": await heldoutAt(runDir, 1) });
  }, 600_000);

  it("a system prompt (seed 003's dataset.system_prompt) reaches the shipped model through its chat template, which it was not warm-started with", async () => {
    const accuracyAtStart = async (client: OrchestratorClient, here: string, runId: string) => {
      const p = await plan(here);
      const runConfig = runConfigWith(p, {
        training: { steps: 1, batch_size: 1, num_generations: 2 },
        eval: { data: "examples/arith-heldout.jsonl", max_problems: HELDOUT },
      });
      await client.startRun({ runId, datasetPath: p.file.dataset.path, runConfig });
      const final = await watchToEnd(client, runId);
      expect(final.state, final.error).toBe(RunState.COMPLETED);
      return heldoutAt(path.join(runsDir, runId), 0);
    };
    const mesh = await startMesh({
      modelDir: "models/arith-tiny",
      // The backends a run picks (wasm): greedy held-out decoding is several times faster there than on tfjs-cpu.
      services: { learner: { checkpoint_dir: runsDir } },
      orchestrator: { runs_dir: runsDir },
    });
    await withMesh(mesh, async (client) => {
      const without = await accuracyAtStart(client, "dataset=arith", "system-none");
      const withSystem = await accuracyAtStart(
        client,
        "dataset=arith 'dataset.system_prompt=You are an expert mathematician.'",
        "system-set",
      );
      expect(without).toBeGreaterThan(0.4);
      // A turn the warm start never saw: the model no longer boxes its answers (docs/guide/seeds.md).
      expect(withSystem).toBeLessThan(without);
    });
  }, 600_000);

  it("a refused command exits 2 before any service starts, with the message and nothing written", () => {
    const out = path.join(runsDir, "refused");
    const run = spawnSync(
      process.execPath,
      ["--import", "tsx", "apps/lean-grpo/src/main.ts", "train", "apps/lean-grpo/test/seeds/theorems.jsonl", "--output_dir", out],
      { cwd: repoRoot, encoding: "utf8", env: { ...process.env, LEAN_REPL_CMD: "" } },
    );
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr).toMatch(
      /^lean-grpo: the dataset .*theorems\.jsonl holds Lean theorems .*no REPL is configured: set services\.verifier\.repl\.command/mu,
    );
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});

describe("planning", () => {
  it("reads the seeds' quoting", () => {
    expect(shellWords(`a --algo-config '{"x": 1}' b="c d"`)).toEqual(["a", "--algo-config", '{"x": 1}', "b=c d"]);
  });
  it("applies the seed names before the schema: a refused key names what the seed meant and what to type here", async () => {
    await expect(plan("examples/arith.jsonl model.model_kwargs.load_in_8bit=true")).rejects.toThrow(
      /load_in_8bit \(override [^)]*\) is seed 003's "8-bit quantized base weights.*not supported/,
    );
    await expect(plan("examples/arith.jsonl model.model_kwargs.torch_dtype=fp16")).rejects.toThrow(/fp16 is not supported.*bf16/);
    await expect(plan("examples/arith.jsonl model.model_kwargs.torch_dtype=bf16")).rejects.toThrow(/services\.learner\.impl=torch/);
    await expect(plan("dataset.name=agentica-org/DeepScaleR-Preview-Dataset")).rejects.toThrow(/not a local file.*dataset\.path=FILE/);
    await expect(plan("examples/arith.jsonl num_epochs=1 --steps 3")).rejects.toThrow(
      /num_epochs: sets the length of the run and so does training\.steps \(flag --steps 3\), both on the command line; give one of them/,
    );
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
  it("every key follows command line > file > group > default, a seed's derived one (epochs, batch, dtype) too", async () => {
    const withFile = (file: string, rest = "") => plan(`examples/arith.jsonl --config ${file} ${rest}`);
    // The run's length: epochs on the command line over the file's steps, and steps over the file's epochs.
    expect(settings(await withFile("configs/train/arith.yaml", "training.num_train_epochs=2"))["training.steps"]).toBe(100);
    expect(settings(await withFile("configs/train/arith.yaml", "num_epochs=0.5"))["training.steps"]).toBe(25);
    // Epochs count records as the orchestrator reads them: a parquet file's rows, not its lines.
    const arith = readFileSync(path.join(repoRoot, "examples/arith.jsonl"), "utf8")
      .split("\n")
      .slice(0, 5)
      .map((l) => JSON.parse(l));
    // Under the working directory, which the services started here read files under.
    mkdirSync(path.join(repoRoot, "runs"), { recursive: true });
    const scratch = await mkdtemp(path.join(repoRoot, "runs", "seed-epochs-"));
    onTestFinished(() => rm(scratch, { recursive: true, force: true }));
    const parquet = path.relative(repoRoot, path.join(scratch, "arith-5.parquet"));
    writeFileSync(parquet, parquetOf(arith));
    const epochSteps = async (data: string, rest = "") =>
      settings(await plan(`${data} num_epochs=2 training.batch_size=1 ${rest}`))["training.steps"];
    expect(await epochSteps(parquet)).toBe(10);
    expect(await epochSteps(parquet, "dataset.max_train_samples=3")).toBe(6);
    await expect(plan("services/orchestrator/test/fixtures/datasets/proofnet-dict num_epochs=2")).rejects.toThrow(
      /num_epochs: counts passes over the dataset, and ".*proofnet-dict" cannot be read \(.*has no train split: set dataset\.split.*\); give training\.steps instead/,
    );
    expect(settings(await withFile("apps/lean-grpo/test/seeds/rl_grpo_config_test.yaml", "training.steps=7"))["training.steps"]).toBe(7);
    // The batch: TRL's per-device batch over the file's batch_size, the file's over a group's.
    expect(
      settings(await withFile("configs/train/arith.yaml", "per_device_train_batch_size=4 gradient_accumulation_steps=4")),
    ).toMatchObject({
      "training.batch_size": 2,
    });
    // A file over a group: dataset=arith's budget gives way to the file's, and the command line over both.
    expect(settings(await plan("dataset=arith --config configs/train/smoke.yaml"))["training.max_tokens"]).toBe(16);
    expect(settings(await plan("dataset=arith --config configs/train/smoke.yaml training.max_tokens=24"))["training.max_tokens"]).toBe(24);
    // A group typed on the command line whose value the file replaces is said.
    expect((await plan("dataset=arith model=qwen2.5-0.5b-instruct --config configs/train/arith.yaml")).notes).toEqual([
      expect.stringMatching(
        /^model\.dir is "models\/arith-tiny" from the --config file, not "models\/Qwen2\.5-0\.5B-Instruct" from model=qwen2\.5-0\.5b-instruct/,
      ),
    ]);
    // Both on one layer: refused, naming both.
    await expect(plan("examples/arith.jsonl per_device_train_batch_size=8 training.batch_size=2")).rejects.toThrow(
      /per_device_train_batch_size: sets the batch .* and so does training\.batch_size \(override training\.batch_size=2\), both on the command line/,
    );
  });
  it("maps TRL's names: precision and checkpointing onto the PyTorch learner, the optimizer's, the run's length and interval keys", async () => {
    const torch = await plan("examples/arith.jsonl services.learner.impl=torch training.bf16=true gradient_checkpointing=true fp16=false");
    expect(torch.file.services.learner).toMatchObject({ impl: "torch", torch: { dtype: "bfloat16", gradient_checkpointing: true } });
    const trl = await plan(
      "examples/arith.jsonl max_steps=40 warmup_ratio=0.1 lr_scheduler_type=cosine weight_decay=0.01 max_grad_norm=0.5 save_steps=5 eval_steps=20 adam_beta2=0.99 beta=0.02 training.epsilon_high=0.28",
    );
    expect(settings(trl)).toMatchObject({
      "training.steps": 40,
      "services.learner.optimizer.warmup_steps": 4,
      "services.learner.optimizer.lr_schedule": "cosine",
      "services.learner.optimizer.total_steps": 40,
      "services.learner.optimizer.weight_decay": 0.01,
      "services.learner.optimizer.max_grad_norm": 0.5,
      "services.learner.optimizer.beta2": 0.99,
      "training.checkpoint_every": 5,
      "eval.every": 20,
      "algorithm.config.beta": 0.02,
      "algorithm.config.epsilon_high": 0.28,
    });
    await expect(plan("examples/arith.jsonl lr_scheduler_type=polynomial")).rejects.toThrow(
      /"polynomial" is not a schedule here; accepted: constant/,
    );
  });
  it("checks what only the services would have met, before any starts", async () => {
    // An algorithm in any case is the learner's; an unknown one is refused with the list.
    expect((await plan("examples/arith.jsonl --algorithm GSPO")).runConfig.algorithm?.name).toBe("gspo");
    await expect(plan("examples/arith.jsonl --algorithm foo")).rejects.toThrow(/algorithm "foo" is not known; accepted: .*grpo/);
    // Every service key, the PyTorch learner's among them, by the key the train file writes.
    await expect(plan("examples/arith.jsonl services.learner.optimizer.lr=1")).rejects.toThrow(
      /unknown config key "services\.learner\.optimizer\.lr"; accepted keys under "services\.learner\.optimizer": .*learning_rate/,
    );
    await expect(plan("examples/arith.jsonl services.learner.impl=torch services.learner.torch.dtype=fp16")).rejects.toThrow(
      /config key "services\.learner\.torch\.dtype": expected one of "auto" \| "float32" \| "bfloat16"/,
    );
    await expect(plan("examples/arith.jsonl services.foo.x=1")).rejects.toThrow(
      /accepted keys under "services": inference, learner, orchestrator, reward, verifier/,
    );
    // A prompt the shipped model's vocabulary cannot encode; with a REPL configured, the seed's Lean theorems
    // (ASCII, which the shipped vocabulary covers) plan.
    await expect(plan("examples/arith.jsonl 'prompt.math_template=∀ {problem}'")).rejects.toThrow(
      /the tokenizer of models\/arith-tiny \(the embedded sampler's model\) cannot encode 800 prompts \(dataset "row-1": .*"∀"/,
    );
    const repl = process.env.LEAN_REPL_CMD;
    process.env.LEAN_REPL_CMD = "lake env repl";
    const theorems = "apps/lean-grpo/test/seeds/theorems.jsonl";
    try {
      expect((await plan(theorems)).file.dataset.path).toBe(theorems);
    } finally {
      if (repl === undefined) delete process.env.LEAN_REPL_CMD;
      else process.env.LEAN_REPL_CMD = repl;
    }
    expect((await plan(`${theorems} 'services.verifier.repl.command=lake env repl'`)).file.dataset.path).toBe(theorems);
    // A remote verifier has a REPL of its own.
    expect((await plan(`${theorems} services.verifier.url=127.0.0.1:50052`)).file.dataset.path).toBe(theorems);
  });
});
