// SaveCheckpoint / LoadCheckpoint: adapter, optimizer state, step and RNG state on the
// learner's filesystem (see training/checkpoint-files.ts), always under checkpoint_dir:
// a request's path is relative to it, and the checkpoint's directory is opened there by
// kit/paths (no absolute path, no `..`, no symlink anywhere below checkpoint_dir) and held
// open while its files are written or read, so no client and no planted symlink can make
// the learner write or read anywhere else.
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
import { checkpointName } from "@lean-grpo/adapter-files";
import { PathRoot } from "@lean-grpo/kit";
import type { LearnerHost } from "./learner-host.js";

function checkpointRoot(host: LearnerHost): PathRoot {
  return new PathRoot({ dir: host.config.checkpoint_dir, key: "checkpoint_dir" });
}

export async function saveCheckpoint(host: LearnerHost, request: SaveCheckpointRequest): Promise<SaveCheckpointResponse> {
  const learner = await host.learner();
  const root = checkpointRoot(host);
  const saved = await learner.exclusive(async () => {
    const given = request.path || checkpointName(learner.step);
    return root.withDirectory(given, "path", { create: true }, async (directory) => ({
      ...(await learner.saveCheckpoint(directory)),
      given,
    }));
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
  const loaded = await root.withDirectory(request.path, "path", {}, async (directory) => {
    const learner = await host.learner();
    return learner.exclusive(() => learner.loadCheckpoint(directory));
  });
  return create(LoadCheckpointResponseSchema, {
    step: BigInt(loaded.step),
    adapterVersion: BigInt(loaded.adapterVersion),
    algorithm: loaded.algorithm,
  });
}
