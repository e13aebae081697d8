// What an Evaluate call evaluates, resolved to an adapter directory (or none: the base
// model) and the run settings to sample with: a run's latest adapter with the run's own
// config, an adapter directory, or a learner checkpoint's adapter.
import { existsSync } from "node:fs";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { CHECKPOINT_ADAPTER_DIR } from "@lean-grpo/adapter-files";
import type { EvaluateRequest } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import type { PathRoot } from "@lean-grpo/kit";
import type { RunConfig } from "../run/config/run-config.js";
import { parseRunConfig } from "../run/config/parse-run-config.js";
import { runConfigInput } from "../run/config/run-config-message.js";
import { RunOutputs } from "../run/outputs/run-outputs.js";

export interface EvaluationTarget {
  /** PEFT adapter directory to load into the inference service; undefined for the base model. */
  adapterDir: string | undefined;
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
    if (!existsSync(path.join(outputs.dir, "run.json")))
      throw new ConnectError(`run ${request.runId} not found in ${path.resolve(runsDir)}`, Code.NotFound);
    const runConfig = parseRunConfig((await outputs.readConfig()).run as Record<string, unknown>, []);
    const adapterDir = await outputs.latestAdapterDir();
    if (!adapterDir)
      throw new ConnectError(
        `run ${request.runId} has no adapter yet (no trained step in ${outputs.adaptersDir})`,
        Code.FailedPrecondition,
      );
    return { adapterDir, runConfig };
  }
  const runConfig = parseRunConfig(runConfigInput({ runConfig: request.runConfig, config: undefined }), []);
  if (request.adapterPath)
    return { adapterDir: await peftDir(dataRoot, request.adapterPath, "adapter_path"), shown: request.adapterPath, runConfig };
  if (request.checkpointPath) {
    await dataRoot.existing(request.checkpointPath, "checkpoint_path", "directory");
    const adapter = path.join(request.checkpointPath, CHECKPOINT_ADAPTER_DIR);
    return { adapterDir: await peftDir(dataRoot, adapter, "checkpoint_path"), shown: adapter, runConfig };
  }
  return { adapterDir: undefined, runConfig };
}

/** A PEFT adapter directory under the data root, its files regular files inside it. */
async function peftDir(root: PathRoot, given: string, field: string): Promise<string> {
  const dir = await root.existing(given, field, "directory");
  if (!existsSync(path.join(dir, "adapter_config.json")))
    throw new ConnectError(`${field}: ${given} is not a PEFT adapter directory (no adapter_config.json)`, Code.InvalidArgument);
  await root.checkFiles(dir, ["adapter_config.json", "adapter_model.safetensors"], field);
  return dir;
}
