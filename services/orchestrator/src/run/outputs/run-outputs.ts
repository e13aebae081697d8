// runs/<id>/: config.json (resolved run config + dataset), run.json (state, step, last
// checkpoint), metrics.jsonl (one line per step), eval.jsonl (held-out accuracy, when the
// run evaluates), samples.jsonl (a few completions per step to read), checkpoints/step-<N>/,
// adapters/, report.html (written by the report renderer the composition root gives, run-report.ts).
import { appendFile, mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { readJsonLines } from "@lean-grpo/jsonl";
import { ADAPTERS_DIR, CHECKPOINTS_DIR, checkpointName, parseAdapterName, parseCheckpointName } from "@lean-grpo/adapter-files";
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
}

export class RunOutputs {
  constructor(readonly dir: string) {}

  static for(runsDir: string, id: string): RunOutputs {
    return new RunOutputs(path.resolve(runsDir, id));
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

  async create(config: unknown): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await writeFile(path.join(this.dir, "config.json"), `${JSON.stringify(config, null, 2)}\n`);
  }

  async readConfig(): Promise<Record<string, unknown>> {
    return JSON.parse(await readFile(path.join(this.dir, "config.json"), "utf8")) as Record<string, unknown>;
  }

  async writeRun(run: RunFile): Promise<void> {
    await writeFile(path.join(this.dir, "run.json"), `${JSON.stringify(run, null, 2)}\n`);
  }

  async readRun(): Promise<RunFile> {
    return JSON.parse(await readFile(path.join(this.dir, "run.json"), "utf8")) as RunFile;
  }

  async appendStep(record: StepRecord): Promise<void> {
    const { samples, ...line } = record;
    await this.appendLine("metrics.jsonl", line);
    if (samples && samples.length > 0) await this.appendLine("samples.jsonl", { step: record.step, samples } satisfies StepSamples);
  }

  async readSamples(): Promise<StepSamples[]> {
    return this.readLines<StepSamples>("samples.jsonl");
  }

  /** Checkpoints and adapters saved so far, relative to the run directory, oldest first. */
  async artifacts(): Promise<{ checkpoints: string[]; adapters: string[] }> {
    const under = async (dir: string, parse: (name: string) => number | undefined) => {
      const names = existsSync(dir) ? (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name) : [];
      return names
        .map((name) => ({ name, n: parse(name) }))
        .filter((e): e is { name: string; n: number } => e.n !== undefined)
        .sort((a, b) => a.n - b.n)
        .map((e) => `${path.basename(dir)}/${e.name}`);
    };
    return {
      checkpoints: await under(this.checkpointsDir, parseCheckpointName),
      adapters: await under(this.adaptersDir, parseAdapterName),
    };
  }

  /** The directory of the highest adapter version exported so far; undefined before the first. */
  async latestAdapterDir(): Promise<string | undefined> {
    const { adapters } = await this.artifacts();
    return adapters.length === 0 ? undefined : path.join(this.dir, adapters.at(-1)!);
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
    await appendFile(path.join(this.dir, file), `${JSON.stringify(record)}\n`);
  }

  /** The records of a JSONL file of the run; none when it does not exist yet. */
  private async readLines<T>(file: string): Promise<T[]> {
    return (await readJsonLines(path.join(this.dir, file), { missing: "empty" })).map(({ line, value, error }) => {
      if (error !== undefined) throw new Error(`${path.join(this.dir, file)}:${line}: ${error}`);
      return value as T;
    });
  }

  /** On resume: steps after the checkpoint are trained (and evaluated) again, so their old lines go. */
  async truncateStepsAfter(step: number): Promise<void> {
    const kept = (await this.readSteps()).filter((r) => r.step <= step);
    await writeFile(path.join(this.dir, "metrics.jsonl"), kept.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const evals = (await this.readEvals()).filter((r) => r.step <= step);
    if (evals.length > 0 || existsSync(path.join(this.dir, "eval.jsonl"))) {
      await writeFile(path.join(this.dir, "eval.jsonl"), evals.map((r) => `${JSON.stringify(r)}\n`).join(""));
    }
    if (existsSync(path.join(this.dir, "samples.jsonl"))) {
      const samples = (await this.readSamples()).filter((r) => r.step <= step);
      await writeFile(path.join(this.dir, "samples.jsonl"), samples.map((r) => `${JSON.stringify(r)}\n`).join(""));
    }
  }
}

/** Every run directory under `runsDir` that has a run.json. */
export async function listRunDirs(runsDir: string): Promise<RunOutputs[]> {
  if (!existsSync(runsDir)) return [];
  const entries = await readdir(runsDir, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory() && existsSync(path.join(runsDir, e.name, "run.json")))
    .map((e) => RunOutputs.for(runsDir, e.name));
}
