// A learner checkpoint on disk: everything the next step depends on, so a learner restarted
// from it takes the same next step as one that never stopped.
//   adapter/                  the PEFT adapter (float32, exact)
//   optimizer.safetensors     AdamW's first and second moments, named by PEFT key in the learner's
//                             [in, r] / [r, out] layout (float32, exact)
//   trainer_state.json        step, adapter version, algorithm, optimizer update count (the
//                             schedule position and bias corrections), and the dropout seed
//                             (dropout masks are a function of seed and update count)
// Written and read through a directory opened under checkpoint_dir (kit/paths): no symlink
// there is followed, and each file is replaced whole.
import { PathError, type RootDirectory } from "@lean-grpo/kit";
import type { AdamWState } from "../optimizer/adamw.js";
import { SafetensorsFile } from "@lean-grpo/lm";
import { serializeSafetensors } from "@lean-grpo/lm";
import { CHECKPOINT_ADAPTER_DIR } from "@lean-grpo/adapter-files";

export const ADAPTER_DIR = CHECKPOINT_ADAPTER_DIR;
export const OPTIMIZER_FILE = "optimizer.safetensors";
export const STATE_FILE = "trainer_state.json";
const FORMAT_VERSION = 1;
/** trainer_state.json is a few hundred bytes; anything near this is not one. */
const MAX_STATE_BYTES = 1 << 20;

export interface TrainerState {
  step: number;
  adapterVersion: number;
  algorithm: string;
  seed: number;
  baseModel: string;
}

export class CheckpointError extends Error {
  override readonly name = "CheckpointError";
}

/** optimizer.safetensors and trainer_state.json of a checkpoint, by file name. */
export function checkpointStateFiles(
  state: TrainerState,
  optimizer: AdamWState,
  shapes: ReadonlyMap<string, number[]>,
): Map<string, Uint8Array> {
  const tensors = [...optimizer.firstMoments].flatMap(([key, m]) => [
    { name: `${key}.exp_avg`, shape: shapes.get(key)!, data: m },
    { name: `${key}.exp_avg_sq`, shape: shapes.get(key)!, data: optimizer.secondMoments.get(key)! },
  ]);
  const json = {
    format_version: FORMAT_VERSION,
    step: state.step,
    adapter_version: state.adapterVersion,
    algorithm: state.algorithm,
    optimizer_updates: optimizer.step,
    seed: state.seed,
    base_model: state.baseModel,
  };
  return new Map([
    [OPTIMIZER_FILE, serializeSafetensors(tensors, { format: "pt" })],
    [STATE_FILE, new TextEncoder().encode(JSON.stringify(json, null, 2))],
  ]);
}

function field(json: Record<string, unknown>, key: string, file: string): number {
  const value = json[key];
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    // The value is not quoted: what a file holds is not the client's to read.
    throw new CheckpointError(`${file}: "${key}" must be a non-negative integer`);
  }
  return value;
}

export async function readCheckpointState(directory: RootDirectory): Promise<{ state: TrainerState; optimizer: AdamWState }> {
  const file = STATE_FILE;
  let text: string;
  try {
    text = await directory.readText(STATE_FILE, MAX_STATE_BYTES);
  } catch (error) {
    // A symlink or a FIFO in its place is refused as the path error it is.
    if (!(error instanceof PathError) || error.code !== "missing") throw error;
    throw new CheckpointError(`cannot read ${STATE_FILE}: ENOENT; is it a directory written by SaveCheckpoint?`);
  }
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Never the parser's message: it quotes the file, and the file is not the client's to read.
    throw new CheckpointError(`${STATE_FILE} is not valid JSON; is it a directory written by SaveCheckpoint?`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new CheckpointError(`${STATE_FILE} is not a JSON object; is it a directory written by SaveCheckpoint?`);
  if (json.format_version !== FORMAT_VERSION) {
    throw new CheckpointError(`${file}: its format_version is not supported; accepted: ${FORMAT_VERSION}`);
  }
  const state: TrainerState = {
    step: field(json, "step", file),
    adapterVersion: field(json, "adapter_version", file),
    algorithm: typeof json.algorithm === "string" ? json.algorithm : "",
    seed: field(json, "seed", file),
    baseModel: typeof json.base_model === "string" ? json.base_model : "",
  };
  const optimizer: AdamWState = { step: field(json, "optimizer_updates", file), firstMoments: new Map(), secondMoments: new Map() };
  const { handle } = await directory.openFile(OPTIMIZER_FILE).catch((error: unknown) => {
    if (!(error instanceof PathError) || error.code !== "missing") throw error;
    throw new CheckpointError(`cannot read ${OPTIMIZER_FILE}: ENOENT; is it a directory written by SaveCheckpoint?`);
  });
  const st = await SafetensorsFile.fromHandle(handle, OPTIMIZER_FILE).catch((error: Error) => {
    throw new CheckpointError(`cannot read ${OPTIMIZER_FILE}: ${error.message}`);
  });
  try {
    for (const name of st.tensors.keys()) {
      const match = /^(.*)\.(exp_avg|exp_avg_sq)$/.exec(name);
      if (!match) throw new CheckpointError(`${OPTIMIZER_FILE}: tensor "${name}" is not an AdamW moment`);
      (match[2] === "exp_avg" ? optimizer.firstMoments : optimizer.secondMoments).set(match[1]!, await st.float32(name));
    }
  } finally {
    await st.close();
  }
  return { state, optimizer };
}
