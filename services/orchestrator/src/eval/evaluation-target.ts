// What an Evaluate call evaluates, resolved to an adapter directory (or none: the base
// model) and the run settings to sample with: a run's latest adapter with the run's own
// config, an adapter directory, or a learner checkpoint's adapter.
import { existsSync } from "node:fs";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { CHECKPOINT_ADAPTER_DIR } from "@lean-grpo/adapter-files";
import type { EvaluateRequest } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import type { RunConfig } from "../run/config/run-config.js";
import { parseRunConfig } from "../run/run-manager.js";
import { runConfigInput } from "../run/config/run-config-message.js";
import { RunOutputs } from "../run/outputs/run-outputs.js";

export interface EvaluationTarget {
  /** PEFT adapter directory to load into the inference service; undefined for the base model. */
  adapterDir: string | undefined;
  /** Prompt and length settings: the run's own with run_id, else the request's config over the defaults. */
  runConfig: RunConfig;
}

export async function evaluationTarget(request: EvaluateRequest, runsDir: string): Promise<EvaluationTarget> {
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
  if (request.adapterPath) return { adapterDir: peftDir(path.resolve(request.adapterPath), "adapter_path"), runConfig };
  if (request.checkpointPath) {
    const checkpoint = path.resolve(request.checkpointPath);
    if (!existsSync(checkpoint)) throw new ConnectError(`checkpoint_path ${checkpoint} does not exist`, Code.NotFound);
    return { adapterDir: peftDir(path.join(checkpoint, CHECKPOINT_ADAPTER_DIR), "checkpoint_path"), runConfig };
  }
  return { adapterDir: undefined, runConfig };
}

function peftDir(dir: string, field: string): string {
  if (!existsSync(path.join(dir, "adapter_config.json")))
    throw new ConnectError(`${field}: ${dir} is not a PEFT adapter directory (no adapter_config.json)`, Code.InvalidArgument);
  return dir;
}
