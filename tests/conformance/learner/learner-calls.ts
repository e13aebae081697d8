// Calls of the LearnerService contract the suite makes, over gRPC with the generated client.
import { createHash } from "node:crypto";
import { expect } from "vitest";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { AdapterManifest, ExportAdapterResponse, TrainStepRequest } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { LearnerService, TrainingMode, TrainStepRequestSchema } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import type { BatchSample, ConformanceCase } from "./conformance-fixtures.js";
import type { ReasoningMask } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { readF32Safetensors } from "./peft-tensors.js";

export type LearnerClient = Client<typeof LearnerService>;

export function learnerClient(url: string): LearnerClient {
  return createClient(LearnerService, createGrpcTransport({ baseUrl: url }));
}

export interface StepHeader {
  algorithm: string;
  algorithmConfig?: JsonObject;
  mode?: TrainingMode;
  step?: bigint;
  numGenerations?: number;
  expectedSamples?: number;
  /** The sampling temperature, sent both in the header and (as the fixtures do) in algorithm_config. */
  temperature?: number;
  /** The reasoning mask of the header's sampling distribution (with `temperature`). */
  reasoningMask?: ReasoningMask;
}

/** A TrainStep request stream: the header, then the samples (after `spoil` has changed them). */
export function trainStepStream(header: StepHeader, samples: readonly BatchSample[], spoil?: (s: BatchSample[]) => void) {
  const copies = samples.map((s) => ({ ...s, promptTokenIds: [...s.promptTokenIds], completionTokenIds: [...s.completionTokenIds] }));
  spoil?.(copies);
  const { temperature, reasoningMask, ...rest } = header;
  const messages: TrainStepRequest[] = [
    create(TrainStepRequestSchema, {
      part: {
        case: "header",
        value: {
          mode: TrainingMode.RL,
          ...rest,
          ...(temperature !== undefined ? { sampling: { temperature, ...(reasoningMask !== undefined ? { reasoningMask } : {}) } } : {}),
        },
      },
    }),
    ...copies.map((value) => create(TrainStepRequestSchema, { part: { case: "sample", value } })),
  ];
  return (async function* () {
    yield* messages;
  })();
}

/** The TrainStep of one reference case (its algorithm, config, mode and temperature) at step 1 over `samples`. */
export function caseStepStream(c: ConformanceCase, samples: readonly BatchSample[]) {
  return trainStepStream(
    {
      algorithm: c.algorithm,
      algorithmConfig: c.config,
      mode: c.mode === "sft" ? TrainingMode.SFT : TrainingMode.RL,
      step: 1n,
      temperature: c.config.temperature as number,
    },
    samples,
  );
}

/** Awaits a call that must fail with `code`; returns its message for further checks. */
export async function failure(call: Promise<unknown>, code: Code): Promise<string> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, `the call should have failed with ${Code[code]}`).toBeInstanceOf(ConnectError);
  const message = (error as ConnectError).rawMessage;
  expect(Code[(error as ConnectError).code], message).toBe(Code[code]);
  return message;
}

export interface ExportedAdapter {
  manifest: AdapterManifest;
  messages: ExportAdapterResponse[];
  files: Map<string, Buffer>;
  tensors: Map<string, { shape: number[]; data: Float32Array }>;
}

/** ExportAdapter, with every file's size and SHA-256 checked against the manifest. */
export async function exportedAdapter(client: LearnerClient, version = 0n, chunkSize = 0): Promise<ExportedAdapter> {
  const messages: ExportAdapterResponse[] = [];
  const parts = new Map<string, Buffer[]>();
  let manifest: AdapterManifest | undefined;
  for await (const message of client.exportAdapter({ version, chunkSize })) {
    messages.push(message);
    if (message.part.case === "manifest") manifest = message.part.value;
    else if (message.part.case === "chunk") {
      const chunk = message.part.value;
      parts.set(chunk.path, [...(parts.get(chunk.path) ?? []), Buffer.from(chunk.data)]);
    }
  }
  expect(manifest, "ExportAdapter's first message is the manifest").toBeDefined();
  const files = new Map([...parts].map(([path, chunks]) => [path, Buffer.concat(chunks)]));
  expect([...files.keys()].sort()).toEqual(["adapter_config.json", "adapter_model.safetensors"]);
  for (const info of manifest!.files) {
    const bytes = files.get(info.path)!;
    expect(BigInt(bytes.byteLength), `${info.path} size`).toBe(info.size);
    expect(createHash("sha256").update(bytes).digest("hex"), `${info.path} sha256`).toBe(info.sha256);
  }
  const tensors = readF32Safetensors(files.get("adapter_model.safetensors")!, "exported adapter_model.safetensors");
  return { manifest: manifest!, messages, files, tensors };
}

/**
 * Largest |(got − start) − (expected − start)| over a tensor, relative to the largest
 * |expected − start|: the error of the update, not of the (much larger) weights.
 */
export function updateError(start: Float32Array, got: Float32Array, expected: Float32Array): { error: number; scale: number } {
  let scale = 0;
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    scale = Math.max(scale, Math.abs(expected[i]! - start[i]!));
    worst = Math.max(worst, Math.abs(got[i]! - expected[i]!));
  }
  return { error: worst / scale, scale };
}

/** Largest |a − b| relative to the largest |b|, over two adapters with the same tensors. */
export function adapterDifference(
  a: Map<string, { data: Float32Array }>,
  b: Map<string, { data: Float32Array }>,
): { error: number; scale: number } {
  expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
  let scale = 0;
  let worst = 0;
  for (const [key, { data }] of b) {
    const other = a.get(key)!.data;
    for (let i = 0; i < data.length; i++) {
      scale = Math.max(scale, Math.abs(data[i]!));
      worst = Math.max(worst, Math.abs(other[i]! - data[i]!));
    }
  }
  return { error: worst / scale, scale };
}
