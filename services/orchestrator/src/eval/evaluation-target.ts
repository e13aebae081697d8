// What an Evaluate call evaluates, resolved to an adapter directory (or none: the base
// model) and the run settings to sample with: a run's latest adapter with the run's own
// config, an adapter directory, or a learner checkpoint's adapter. Its files are read here,
// through its directory held open under its root (kit/paths: no symlink followed).
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { CHECKPOINT_ADAPTER_DIR, readAdapterDir, type AdapterFile } from "@lean-grpo/adapter-files";
import type { EvaluateRequest } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { PathError, type PathRoot } from "@lean-grpo/kit";
import type { RunConfig } from "../run/config/run-config.js";
import { parseRunConfig } from "../run/config/parse-run-config.js";
import { runConfigInput } from "../run/config/run-config-message.js";
import { RunOutputs } from "../run/outputs/run-outputs.js";

/** A PEFT adapter read from disk: its files, and where they were. */
export interface EvaluatedAdapter {
  dir: string;
  files: AdapterFile[];
}

export interface EvaluationTarget {
  /** The PEFT adapter to load into the inference service; undefined for the base model. */
  adapter: EvaluatedAdapter | undefined;
  /** What the summary says was evaluated: the directory as the client named it (or the run's adapter). */
  shown?: string;
  /** Prompt and length settings: the run's own with run_id, else the request's config over the defaults. */
  runConfig: RunConfig;
}

/** `dataRoot`: where adapter_path and checkpoint_path resolve (the orchestrator's data_root). */
export async function evaluationTarget(request: EvaluateRequest, runsDir: string, dataRoot: PathRoot): Promise<EvaluationTarget> {
  const targets = { run_id: request.runId, adapter_path: request.adapterPath, checkpoint_path: request.checkpointPath };
  const given = Object.keys(targets).filter((field) => targets[field as keyof typeof targets] !== "");
  if (given.length > 1)
    throw new ConnectError(
      `set at most one of run_id, adapter_path and checkpoint_path (got ${given.join(" and ")}); none evaluates the base model`,
      Code.InvalidArgument,
    );
  if (request.runId) {
    const outputs = RunOutputs.for(runsDir, request.runId);
    if (!(await outputs.exists())) throw new ConnectError(`run ${request.runId} not found in ${path.resolve(runsDir)}`, Code.NotFound);
    const runConfig = parseRunConfig((await outputs.readConfig()).run as Record<string, unknown>, []);
    const latest = await outputs.latestAdapter();
    if (!latest)
      throw new ConnectError(
        `run ${request.runId} has no adapter yet (no trained step in ${outputs.adaptersDir})`,
        Code.FailedPrecondition,
      );
    return { adapter: { dir: path.join(outputs.dir, latest), files: await outputs.readAdapter(latest) }, runConfig };
  }
  const runConfig = parseRunConfig(runConfigInput({ runConfig: request.runConfig, config: undefined }), []);
  if (request.adapterPath)
    return { adapter: await peftAdapter(dataRoot, request.adapterPath, "adapter_path"), shown: request.adapterPath, runConfig };
  if (request.checkpointPath) {
    // The checkpoint itself first, so a missing one is named as given, not by its adapter folder.
    await dataRoot.existing(request.checkpointPath, "checkpoint_path", "directory");
    const adapter = path.join(request.checkpointPath, CHECKPOINT_ADAPTER_DIR);
    return { adapter: await peftAdapter(dataRoot, adapter, "checkpoint_path"), shown: adapter, runConfig };
  }
  return { adapter: undefined, runConfig };
}

/** The files of a PEFT adapter directory under the data root (regular files only: a symlink there is refused). */
async function peftAdapter(root: PathRoot, given: string, field: string): Promise<EvaluatedAdapter> {
  return root.withDirectory(given, field, {}, async (dir) => {
    const config = await dir.kind("adapter_config.json");
    if (config === undefined)
      throw new ConnectError(`${field}: ${given} is not a PEFT adapter directory (no adapter_config.json)`, Code.InvalidArgument);
    // A symlink or a FIFO in place of one of its files is refused by name, not skipped.
    for (const name of ["adapter_config.json", "adapter_model.safetensors"])
      await dir.openFile(name).then(({ handle }) => handle.close(), skipMissing);
    return { dir: dir.path, files: await readAdapterDir(dir) };
  });
}

function skipMissing(error: unknown): void {
  if (!(error instanceof PathError) || error.code !== "missing") throw error;
}
