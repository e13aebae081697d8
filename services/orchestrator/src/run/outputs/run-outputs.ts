// runs/<id>/: config.json (resolved run config + dataset), run.json (state, step, last
// checkpoint), metrics.jsonl (one line per step), eval.jsonl (held-out accuracy, when the
// run evaluates), samples.jsonl (a few completions per step to read), dataset.jsonl (inline
// theorems), checkpoints/step-<N>/, adapters/, report.html (written by the report renderer
// the composition root gives, run-report.ts).
//
// Every file is reached through the run's directory opened under runs_dir by kit/paths: a
// run folder, a file or a folder in it that is a symlink is refused, never followed, and
// files are replaced whole. No error quotes what a file holds.
import path from "node:path";
import { jsonErrorPlace, parseJsonLines } from "@lean-grpo/jsonl";
import { checkSafeName, isSafeName, PathError, PathRoot, type FreshDirectory, type RootDirectory } from "@lean-grpo/kit";
import {
  ADAPTERS_DIR,
  CHECKPOINTS_DIR,
  checkpointName,
  parseAdapterName,
  parseCheckpointName,
  readAdapterDir,
  type AdapterFile,
} from "@lean-grpo/adapter-files";
import type { EvalRecord } from "./eval-record.js";
import type { SampleRecord } from "../training/step-samples.js";

export interface StepRecord {
  step: number;
  time: string;
  adapter_version: number;
  metrics: Record<string, number>;
  timings: Record<string, number>;
  /** Completions kept to read; stored apart in samples.jsonl, so metrics.jsonl stays small. */
  samples?: SampleRecord[];
}

/** The completions kept of one step (a line of samples.jsonl). */
export interface StepSamples {
  step: number;
  samples: SampleRecord[];
}

export interface RunFile {
  id: string;
  state: string;
  algorithm: string;
  step: number;
  total_steps: number;
  dataset: string;
  created_at: string;
  updated_at: string;
  error: string;
  last_checkpoint_step: number;
  /** False while no checkpoint was saved (nothing to resume from); absent in files written before it was recorded. */
  checkpointed?: boolean;
  last_metrics: Record<string, number>;
  /** The model's reasoning vocabulary and the run's mask (docs/concepts/reasoning-vocabulary.md); absent without one. */
  reasoning?: RunReasoning;
}

/** run.json "reasoning": what the run's reasoning ids meant. */
export interface RunReasoning {
  n_s: number;
  n_r: number;
  map_sha256: string;
  mask: string;
  markers: [string, string];
}

const RUN_FILE = "run.json";
const CONFIG_FILE = "config.json";
/** The run's files are the server's own: read whole, as they were written. */
const WHOLE = Number.MAX_SAFE_INTEGER;

export class RunOutputs {
  private readonly runs: PathRoot;
  readonly id: string;

  /** The run whose directory is `dir` (`<runs_dir>/<id>`); its last name must be a safe run id. */
  constructor(
    dir: string,
    private readonly field = "run_id",
  ) {
    const absolute = path.resolve(dir);
    this.runs = new PathRoot({ dir: path.dirname(absolute), key: "runs_dir" });
    this.id = checkSafeName(path.basename(absolute), field);
  }

  /** The directory of run `id` under runs_dir; an id that is not one safe name (".." say) is refused. */
  static for(runsDir: string, id: string, field = "run_id"): RunOutputs {
    return new RunOutputs(path.join(path.resolve(runsDir), checkSafeName(id, field)), field);
  }

  /** Where the run's directory is on this host (Run.output_dir, messages); reached only through `open`. */
  get dir(): string {
    return path.join(this.runs.dir, this.id);
  }
  get checkpointsDir(): string {
    return path.join(this.dir, CHECKPOINTS_DIR);
  }
  get adaptersDir(): string {
    return path.join(this.dir, ADAPTERS_DIR);
  }
  checkpoint(step: number): string {
    return path.join(this.checkpointsDir, checkpointName(step));
  }
  /**
   * The path SaveCheckpoint / LoadCheckpoint are given: relative to the learner's
   * checkpoint_dir, which a mesh sharing this filesystem sets to runs_dir, so that it names
   * checkpoint(step) there (`<run id>/checkpoints/step-<N>`).
   */
  learnerCheckpoint(step: number): string {
    return path.join(this.id, CHECKPOINTS_DIR, checkpointName(step));
  }

  /** Runs `use` on the run's directory, held open; `create` makes it (and runs_dir) first. */
  async open<T>(use: (dir: RootDirectory) => Promise<T>, create = false): Promise<T> {
    return this.runs.withDirectory(this.id, this.field, { create }, use);
  }

  /** Whether the run has a run.json; a run folder that is a symlink is refused, not looked into. */
  async exists(): Promise<boolean> {
    try {
      return (await this.open((dir) => dir.kind(RUN_FILE))) !== undefined;
    } catch (error) {
      if (error instanceof PathError && error.code === "missing") return false;
      throw error;
    }
  }

  async create(config: unknown): Promise<void> {
    await this.writeFile(CONFIG_FILE, `${JSON.stringify(config, null, 2)}\n`);
  }

  async readConfig(): Promise<Record<string, unknown>> {
    return this.readJsonObject(CONFIG_FILE);
  }

  async writeRun(run: RunFile): Promise<void> {
    await this.writeFile(RUN_FILE, `${JSON.stringify(run, null, 2)}\n`);
  }

  async readRun(): Promise<RunFile> {
    return checkRunFile(await this.readJsonObject(RUN_FILE), `${this.id}/${RUN_FILE}`);
  }

  /** Replaces the run's file `name` (its directory made when missing). */
  async writeFile(name: string, data: string | Uint8Array): Promise<void> {
    await this.open((dir) => dir.writeFile(name, data), true);
  }

  /** The run's file `name` as text; undefined when it does not exist. */
  async readFile(name: string): Promise<string | undefined> {
    try {
      return await this.open((dir) => dir.readText(name, WHOLE));
    } catch (error) {
      if (error instanceof PathError && error.code === "missing") return undefined;
      throw error;
    }
  }

  async appendStep(record: StepRecord): Promise<void> {
    const { samples, ...line } = record;
    await this.appendLine("metrics.jsonl", line);
    if (samples && samples.length > 0) await this.appendLine("samples.jsonl", { step: record.step, samples } satisfies StepSamples);
  }

  async readSamples(): Promise<StepSamples[]> {
    return this.readLines<StepSamples>("samples.jsonl");
  }

  /** Checkpoints and adapters saved so far, relative to the run directory, oldest first (real directories only). */
  async artifacts(): Promise<{ checkpoints: string[]; adapters: string[] }> {
    const under = (dir: RootDirectory, area: string, parse: (name: string) => number | undefined) =>
      dir
        .withDirectory(area, {}, (listed) => listed.entries())
        .catch((error: unknown) => {
          if (error instanceof PathError && error.code === "missing") return [];
          throw error;
        })
        .then((entries) =>
          entries
            .filter((e) => e.kind === "directory")
            .map((e) => ({ name: e.name, n: parse(e.name) }))
            .filter((e): e is { name: string; n: number } => e.n !== undefined)
            .sort((a, b) => a.n - b.n)
            .map((e) => `${area}/${e.name}`),
        );
    try {
      return await this.open(async (dir) => ({
        checkpoints: await under(dir, CHECKPOINTS_DIR, parseCheckpointName),
        adapters: await under(dir, ADAPTERS_DIR, parseAdapterName),
      }));
    } catch (error) {
      if (error instanceof PathError && error.code === "missing") return { checkpoints: [], adapters: [] };
      throw error;
    }
  }

  /** The highest adapter version exported so far, relative to the run directory (`adapters/policy-v<N>`); undefined before the first. */
  async latestAdapter(): Promise<string | undefined> {
    return (await this.artifacts()).adapters.at(-1);
  }

  /** The files of the adapter directory `relative` to the run's (`adapters/policy-v<N>`); a symlink among them is no file of it. */
  async readAdapter(relative: string): Promise<AdapterFile[]> {
    return this.open((dir) => dir.withDirectory(relative, {}, readAdapterDir));
  }

  /** adapters/<name>/ made afresh for an adapter received from the learner. */
  async freshAdapterDirectory(name: string): Promise<FreshDirectory> {
    return this.open((dir) => dir.freshDirectory(`${ADAPTERS_DIR}/${name}`), true);
  }

  async readSteps(): Promise<StepRecord[]> {
    return this.readLines<StepRecord>("metrics.jsonl");
  }

  async appendEval(record: EvalRecord): Promise<void> {
    await this.appendLine("eval.jsonl", record);
  }

  async readEvals(): Promise<EvalRecord[]> {
    return this.readLines<EvalRecord>("eval.jsonl");
  }

  private async appendLine(file: string, record: object): Promise<void> {
    await this.open((dir) => dir.appendFile(file, `${JSON.stringify(record)}\n`), true);
  }

  /** The records of a JSONL file of the run; none when it does not exist yet. */
  private async readLines<T>(file: string): Promise<T[]> {
    const text = await this.readFile(file);
    if (text === undefined) return [];
    return parseJsonLines(text).map(({ line, value, error }) => {
      if (error !== undefined) throw new Error(`${path.join(this.dir, file)}:${line}: ${error}`);
      return value as T;
    });
  }

  /** A JSON object file of the run; the parser's message is not passed on, as it quotes the file. */
  private async readJsonObject(file: string): Promise<Record<string, unknown>> {
    const text = await this.open((dir) => dir.readText(file, WHOLE));
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new Error(`${this.id}/${file} is not valid JSON${jsonErrorPlace(error)}`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`${this.id}/${file} is not a JSON object`);
    return value as Record<string, unknown>;
  }

  /** On resume: steps after the checkpoint are trained (and evaluated) again, so their old lines go. */
  async truncateStepsAfter(step: number): Promise<void> {
    const kept = (await this.readSteps()).filter((r) => r.step <= step);
    await this.writeFile("metrics.jsonl", kept.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const evals = (await this.readEvals()).filter((r) => r.step <= step);
    if (evals.length > 0 || (await this.readFile("eval.jsonl")) !== undefined) {
      await this.writeFile("eval.jsonl", evals.map((r) => `${JSON.stringify(r)}\n`).join(""));
    }
    if ((await this.readFile("samples.jsonl")) !== undefined) {
      const samples = (await this.readSamples()).filter((r) => r.step <= step);
      await this.writeFile("samples.jsonl", samples.map((r) => `${JSON.stringify(r)}\n`).join(""));
    }
  }
}

/**
 * Every run directory under `runsDir` that has a run.json: real directories only (a symlink
 * in runs_dir is no run, and is neither listed nor read).
 */
export async function listRunDirs(runsDir: string): Promise<RunOutputs[]> {
  const root = new PathRoot({ dir: runsDir, key: "runs_dir" });
  const entries = await root.list(".", "runs_dir").catch((error: unknown) => {
    if (error instanceof PathError && error.code === "missing") return [];
    throw error;
  });
  const runs = entries.filter((e) => e.kind === "directory" && isSafeName(e.name)).map((e) => RunOutputs.for(runsDir, e.name));
  const present = await Promise.all(runs.map((run) => run.exists().catch(() => false)));
  return runs.filter((_, i) => present[i]);
}

/** run.json's fields have the types the run store wrote; anything else is named, never quoted. */
function checkRunFile(json: Record<string, unknown>, shown: string): RunFile {
  const wrong = (key: string, kind: string) => new Error(`${shown}: "${key}" is not ${kind}; is it a run.json this orchestrator wrote?`);
  for (const key of ["step", "total_steps", "last_checkpoint_step"] as const)
    if (!Number.isSafeInteger(json[key]) || (json[key] as number) < 0) throw wrong(key, "a non-negative integer");
  for (const key of ["id", "state", "algorithm", "dataset", "created_at", "updated_at", "error"] as const)
    if (typeof json[key] !== "string") throw wrong(key, "a string");
  const metrics = json.last_metrics;
  if (
    typeof metrics !== "object" ||
    metrics === null ||
    Array.isArray(metrics) ||
    Object.values(metrics).some((v) => typeof v !== "number" && v !== null)
  )
    throw wrong("last_metrics", "an object of numbers");
  return json as unknown as RunFile;
}
