// `lean-grpo eval` without the printing: starts the embedded mesh, loads the adapter to
// evaluate (a run's latest, or a PEFT directory) into the inference service from its path,
// and evaluates a held-out file with it.
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { adapterName, parseAdapterName } from "@lean-grpo/adapter-files";
import { loadConfig } from "@lean-grpo/kit";
import { startMesh } from "../mesh/start-mesh.js";
import { OrchestratorConfigSchema } from "@lean-grpo/orchestrator";
import { loadDataset } from "@lean-grpo/orchestrator";
import { connectMesh } from "@lean-grpo/orchestrator";
import { usesChatPrompts } from "@lean-grpo/orchestrator";
import { RunConfigSchema, type RunConfig } from "@lean-grpo/orchestrator";
import { RunOutputs } from "@lean-grpo/orchestrator";
import { evaluate, HELDOUT_CONCURRENCY, type EvalReport } from "@lean-grpo/orchestrator";

export interface EvalWithMeshOptions {
  data: string;
  k: number;
  /** Completions per problem; default k (1: greedy). */
  samples?: number;
  temperature?: number;
  maxTokens?: number;
  /** Evaluate this run's latest adapter, with the run's prompt settings. */
  run?: string;
  /** Evaluate this PEFT adapter directory (adapter_config.json + adapter_model.safetensors). */
  adapter?: string;
  /** Prompt and length settings of a train config (`--config`); a run's own settings win with `run`. */
  runConfig?: RunConfig;
  runsDir: string;
  modelDir: string;
  seed?: number;
  /** Per-service config sections for the embedded mesh, as in a train config. */
  services?: Record<string, Record<string, unknown>>;
}

export interface EvalResult extends EvalReport {
  /** What was evaluated: an adapter directory, or "base model". */
  evaluated: string;
}

export async function evaluateWithMesh(options: EvalWithMeshOptions): Promise<EvalResult> {
  if (options.run && options.adapter) throw new Error("give --run or --adapter, not both");
  const theorems = await loadDataset(options.data);
  let runConfig = options.runConfig ?? RunConfigSchema.parse({});
  let adapterDir: string | undefined = options.adapter && path.resolve(options.adapter);
  if (options.run) {
    const outputs = RunOutputs.for(options.runsDir, options.run);
    if (!existsSync(path.join(outputs.dir, "run.json")))
      throw new Error(`run ${options.run} not found in ${path.resolve(options.runsDir)}`);
    runConfig = RunConfigSchema.parse((await outputs.readConfig()).run);
    adapterDir = await latestAdapter(outputs.adaptersDir);
    if (!adapterDir) throw new Error(`run ${options.run} has no adapter yet (no trained step in ${outputs.adaptersDir})`);
  }
  if (adapterDir && !existsSync(path.join(adapterDir, "adapter_config.json")))
    throw new Error(`${adapterDir} is not a PEFT adapter directory (no adapter_config.json)`);

  const mesh = await startMesh({ modelDir: options.modelDir, services: options.services ?? {} });
  const clients = connectMesh(
    loadConfig(OrchestratorConfigSchema, {
      flags: { services: { inference: mesh.urls.inference, reward: mesh.urls.reward, learner: mesh.urls.learner } },
    }),
  );
  try {
    let adapter = "";
    if (adapterDir) {
      const loaded = await clients.inference.loadAdapter(
        (async function* () {
          yield {
            part: {
              case: "source" as const,
              value: { name: `eval-${path.basename(adapterDir)}`, version: 1n, path: adapterDir, files: [] },
            },
          };
        })(),
      );
      adapter = loaded.adapter!.name;
    }
    const report = await evaluate({
      clients,
      theorems,
      k: options.k,
      samples: options.samples ?? options.k,
      temperature: options.temperature ?? 1,
      maxTokens: options.maxTokens ?? runConfig.training.max_tokens,
      adapter,
      prompt: runConfig.prompt,
      chatPrompts: await usesChatPrompts(runConfig.prompt.format, clients),
      seed: options.seed ?? 0,
      // All problems in flight (bounded), so the sampler batches them (as in a run).
      concurrency: HELDOUT_CONCURRENCY,
    });
    return { ...report, evaluated: adapterDir ?? "base model" };
  } finally {
    clients.close();
    await mesh.shutdown();
  }
}

/** The directory of the highest adapter version under a run's adapters/. */
async function latestAdapter(adaptersDir: string): Promise<string | undefined> {
  if (!existsSync(adaptersDir)) return undefined;
  const versions = (await readdir(adaptersDir)).map(parseAdapterName).filter((version) => version !== undefined);
  if (versions.length === 0) return undefined;
  return path.join(adaptersDir, adapterName(Math.max(...versions)));
}
