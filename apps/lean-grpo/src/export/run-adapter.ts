// Which PEFT adapter of a run `lean-grpo export` takes: the latest one, or the one the run
// sampled with after `--step N` (metrics.jsonl's adapter_version for that step, else the
// learner checkpoint saved at that step). Read through the run's directory held open under
// runs_dir (RunOutputs); an unknown run or step is refused naming what exists.
import path from "node:path";
import { CHECKPOINT_ADAPTER_DIR, type AdapterFile, adapterName } from "@lean-grpo/adapter-files";
import { listRunDirs, RunOutputs } from "@lean-grpo/orchestrator";

export interface RunAdapter {
  /** The adapter directory relative to the run's, e.g. "adapters/policy-v12". */
  relative: string;
  files: AdapterFile[];
  /** run.json's reasoning section: the run's model had a reasoning vocabulary. */
  reasoning: boolean;
}

export class ExportError extends Error {
  override readonly name = "ExportError";
}

export async function runAdapter(runsDir: string, runId: string, step?: number): Promise<RunAdapter> {
  const outputs = RunOutputs.for(runsDir, runId, "--run");
  if (!(await outputs.exists())) {
    const runs = (await listRunDirs(runsDir)).map((run) => run.id).sort();
    throw new ExportError(
      `--run ${runId}: no such run in ${path.resolve(runsDir)}; ${runs.length === 0 ? "it holds no runs" : `runs there: ${shown(runs)}`}`,
    );
  }
  const { checkpoints, adapters } = await outputs.artifacts();
  const relative = step === undefined ? adapters.at(-1) : await adapterOfStep(outputs, step, adapters, checkpoints);
  if (relative === undefined) throw new ExportError(`run ${runId} has no adapter yet (no trained step in ${outputs.adaptersDir})`);
  const run = await outputs.readRun();
  return { relative, files: await outputs.readAdapter(relative), reasoning: run.reasoning !== undefined && run.reasoning.n_r > 0 };
}

async function adapterOfStep(outputs: RunOutputs, step: number, adapters: string[], checkpoints: string[]): Promise<string> {
  const record = (await outputs.readSteps()).find((s) => s.step === step);
  if (record) {
    const relative = `adapters/${adapterName(record.adapter_version)}`;
    if (adapters.includes(relative)) return relative;
  }
  const checkpoint = `checkpoints/step-${step}`;
  if (checkpoints.includes(checkpoint)) return `${checkpoint}/${CHECKPOINT_ADAPTER_DIR}`;
  const steps = (await outputs.readSteps())
    .filter((s) => adapters.includes(`adapters/${adapterName(s.adapter_version)}`))
    .map((s) => String(s.step));
  const saved = checkpoints.map((c) => c.slice("checkpoints/step-".length));
  throw new ExportError(
    `--step ${step}: run ${outputs.id} has no adapter for that step; steps with an adapter: ${steps.length ? shown(steps) : "none"}; checkpoints at steps: ${saved.length ? shown(saved) : "none"}`,
  );
}

/** A list, cut after 20 names. */
function shown(names: string[]): string {
  return names.length > 20 ? `${names.slice(0, 20).join(", ")}, ... (${names.length} in all)` : names.join(", ");
}
