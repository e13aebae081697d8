// SaveCheckpoint / LoadCheckpoint: adapter, optimizer state, step and RNG state on the
// learner's filesystem (see training/checkpoint-files.ts), always under checkpoint_dir:
// a request's path is relative to it (kit/paths refuses absolute paths, `..` and symlinks
// out of it), so no client can make the learner write or read anywhere else.
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  LoadCheckpointResponseSchema,
  SaveCheckpointResponseSchema,
  type LoadCheckpointRequest,
  type LoadCheckpointResponse,
  type SaveCheckpointRequest,
  type SaveCheckpointResponse,
} from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { CHECKPOINT_ADAPTER_DIR, checkpointName } from "@lean-grpo/adapter-files";
import { PathRoot } from "@lean-grpo/kit";
import { OPTIMIZER_FILE, STATE_FILE } from "../training/checkpoint-files.js";
import type { LearnerHost } from "./learner-host.js";

/** What LoadCheckpoint reads inside the directory: each must be a regular file under the root. */
const CHECKPOINT_FILES = [
  STATE_FILE,
  OPTIMIZER_FILE,
  path.join(CHECKPOINT_ADAPTER_DIR, "adapter_config.json"),
  path.join(CHECKPOINT_ADAPTER_DIR, "adapter_model.safetensors"),
];

function checkpointRoot(host: LearnerHost): PathRoot {
  return new PathRoot({ dir: host.config.checkpoint_dir, key: "checkpoint_dir" });
}

export async function saveCheckpoint(host: LearnerHost, request: SaveCheckpointRequest): Promise<SaveCheckpointResponse> {
  const learner = await host.learner();
  const root = checkpointRoot(host);
  const saved = await learner.exclusive(async () => {
    const given = request.path || checkpointName(learner.step);
    const target = await root.directoryForWrite(given, "path");
    return { ...(await learner.saveCheckpoint(target)), given };
  });
  return create(SaveCheckpointResponseSchema, {
    // As a client gives it back to LoadCheckpoint: relative to checkpoint_dir.
    path: path.normalize(saved.given),
    step: BigInt(saved.step),
    adapterVersion: BigInt(saved.adapterVersion),
    sizeBytes: BigInt(saved.sizeBytes),
  });
}

export async function loadCheckpoint(host: LearnerHost, request: LoadCheckpointRequest): Promise<LoadCheckpointResponse> {
  if (!request.path)
    throw new ConnectError("path is empty; give the directory SaveCheckpoint wrote, relative to checkpoint_dir", Code.InvalidArgument);
  const root = checkpointRoot(host);
  const dir = await root.existing(request.path, "path", "directory");
  await root.checkFiles(dir, CHECKPOINT_FILES, "path");
  const learner = await host.learner();
  const loaded = await learner.exclusive(() => learner.loadCheckpoint(dir));
  return create(LoadCheckpointResponseSchema, {
    step: BigInt(loaded.step),
    adapterVersion: BigInt(loaded.adapterVersion),
    algorithm: loaded.algorithm,
  });
}
