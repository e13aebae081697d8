// The names of what a run writes, built and read here only: an adapter is named by its
// policy version ("policy-v3", 0 being the base model) in runs/<id>/adapters/ and in
// inference requests; a learner checkpoint by its step ("step-10") in runs/<id>/checkpoints/
// and the learner's checkpoint_dir. The PyTorch learner writes the same names
// (leangrpo_learner/training/learner.py); the learner conformance suite checks both.
import { checkedVersion } from "./adapter-version.js";

/** Folder of a run's exported adapters (runs/<id>/adapters/policy-v<N>/). */
export const ADAPTERS_DIR = "adapters";
/** Folder of a run's learner checkpoints (runs/<id>/checkpoints/step-<N>/). */
export const CHECKPOINTS_DIR = "checkpoints";
/** Folder of the PEFT adapter inside a learner checkpoint (step-<N>/adapter/). */
export const CHECKPOINT_ADAPTER_DIR = "adapter";

const ADAPTER_NAME = /^policy-v(0|[1-9][0-9]*)$/;
const CHECKPOINT_NAME = /^step-(0|[1-9][0-9]*)$/;

/** "policy-v<version>". */
export function adapterName(version: number): string {
  return `policy-v${checkedVersion(version)}`;
}

/** The version an adapter name stands for; undefined for a name adapterName does not produce. */
export function parseAdapterName(name: string): number | undefined {
  return safeInteger(ADAPTER_NAME.exec(name)?.[1]);
}

/** "step-<step>": the checkpoint saved after optimizer step `step`. */
export function checkpointName(step: number): string {
  if (!Number.isSafeInteger(step) || step < 0) throw new RangeError(`checkpoint step ${step} is not a non-negative integer`);
  return `step-${step}`;
}

/** The step a checkpoint name stands for; undefined for a name checkpointName does not produce. */
export function parseCheckpointName(name: string): number | undefined {
  return safeInteger(CHECKPOINT_NAME.exec(name)?.[1]);
}

function safeInteger(digits: string | undefined): number | undefined {
  if (digits === undefined) return undefined;
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : undefined;
}
