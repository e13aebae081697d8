// `lean-grpo export --run ID [--step N] --out DIR [--merge] [--model DIR]`: a run's PEFT
// adapter (written by either learner) as it is, or merged into its base model as a Hugging
// Face directory that vLLM and transformers load (export/merged-model.ts).
import { access, mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import type { AdapterFile } from "@lean-grpo/adapter-files";
import { writeMergedModel } from "../export/merged-model.js";
import { ExportError, runAdapter } from "../export/run-adapter.js";
import { tracedAction } from "../process/process-tracing.js";
import { nonNegativeInteger } from "./flag-values.js";

export interface ExportCommandOptions {
  run: string;
  step?: string;
  out: string;
  merge?: boolean;
  model?: string;
  runsDir: string;
}

export function registerExportCommand(program: Command): void {
  program
    .command("export")
    .description("write a run's adapter (PEFT files), or with --merge a merged Hugging Face model directory for vLLM and transformers")
    .requiredOption("--run <id>", "the run whose adapter to export")
    .option("--step <n>", "the adapter the run sampled with after this step (default: its latest)")
    .requiredOption("--out <dir>", "where to write it (a new or empty directory)")
    .option("--merge", "merge the adapter into the base model: safetensors in the base's dtype, config, tokenizer files, chat template")
    .option("--model <dir>", "the base model directory (default: the adapter's base_model_name_or_path when that is a directory)")
    .option("--runs-dir <dir>", "where runs live", "runs")
    .action(
      tracedAction("lean-grpo export", async (options: ExportCommandOptions) => {
        process.stdout.write(`${await exportCommand(options)}\n`);
      }),
    );
}

/** Runs the export; returns the line to print. */
export async function exportCommand(options: ExportCommandOptions): Promise<string> {
  const step = options.step === undefined ? undefined : nonNegativeInteger("--step", options.step);
  await checkOut(options.out);
  const adapter = await runAdapter(options.runsDir, options.run, step);
  const from = `run ${options.run} ${adapter.relative}`;
  if (!options.merge) {
    await mkdir(options.out, { recursive: true });
    for (const file of adapter.files) await writeFile(path.join(options.out, path.basename(file.path)), file.data);
    return `exported ${from} (PEFT adapter) to ${options.out}`;
  }
  if (adapter.reasoning)
    throw new ExportError(
      `run ${options.run} trained with a reasoning vocabulary (run.json "reasoning"): a merged model would need the expanded vocabulary and the reasoning mask, which transformers and vLLM do not apply; export without --merge (docs/concepts/reasoning-vocabulary.md)`,
    );
  const base = options.model ?? (await baseModelOf(adapter.files));
  const summary = await writeMergedModel(base, adapter.files, options.out);
  return `exported ${from} merged into ${base} (${summary.merged} linear weights, ${summary.dtype}) to ${options.out}`;
}

/** The output directory must be new or empty: nothing already there is overwritten. */
async function checkOut(out: string): Promise<void> {
  const entries = await readdir(out).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw new ExportError(`--out ${out}: cannot use it (${error.code ?? error.message}); give a new or empty directory`);
  });
  if (entries.length > 0) throw new ExportError(`--out ${out} is not empty (${entries.length} entries); give a new or empty directory`);
}

/** base_model_name_or_path of adapter_config.json, when it is a model directory here. */
async function baseModelOf(files: readonly AdapterFile[]): Promise<string> {
  const config = files.find((f) => f.path === "adapter_config.json");
  let base: unknown;
  try {
    base = config && (JSON.parse(new TextDecoder().decode(config.data)) as Record<string, unknown>).base_model_name_or_path;
  } catch {
    base = undefined;
  }
  if (typeof base === "string" && base !== "") {
    try {
      await access(path.join(base, "config.json"));
      return base;
    } catch {
      throw new ExportError(
        `the adapter's base model ${JSON.stringify(base)} is not a model directory here; give --model DIR (config.json, model.safetensors, tokenizer files)`,
      );
    }
  }
  throw new ExportError("the adapter names no base model; give --model DIR (config.json, model.safetensors, tokenizer files)");
}
