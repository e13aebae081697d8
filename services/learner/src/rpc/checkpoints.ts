// SaveCheckpoint / LoadCheckpoint: adapter, optimizer state, step and RNG state on the
// learner's filesystem (see training/checkpoint-files.ts).
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
import type { LearnerHost } from "./learner-host.js";

export async function saveCheckpoint(host: LearnerHost, request: SaveCheckpointRequest): Promise<SaveCheckpointResponse> {
  const learner = await host.learner();
  const saved = await learner.exclusive(() =>
    learner.saveCheckpoint(request.path || path.join(host.config.checkpoint_dir, checkpointName(learner.step))),
  );
  return create(SaveCheckpointResponseSchema, {
    path: saved.path,
    step: BigInt(saved.step),
    adapterVersion: BigInt(saved.adapterVersion),
    sizeBytes: BigInt(saved.sizeBytes),
  });
}

export async function loadCheckpoint(host: LearnerHost, request: LoadCheckpointRequest): Promise<LoadCheckpointResponse> {
  if (!request.path) throw new ConnectError("path is empty; give the directory SaveCheckpoint wrote", Code.InvalidArgument);
  const learner = await host.learner();
  const loaded = await learner.exclusive(() => learner.loadCheckpoint(request.path));
  return create(LoadCheckpointResponseSchema, {
    step: BigInt(loaded.step),
    adapterVersion: BigInt(loaded.adapterVersion),
    algorithm: loaded.algorithm,
  });
}
