// The messages between the learner's thread and its gradient threads (gradient-threads.ts,
// gradient-worker.ts), and a micro-batch's share as plain arrays for the crossing.
import * as tf from "@tensorflow/tfjs-core";
import type { BackendName, LoraConfig, ReasoningMarkers } from "@lean-grpo/lm";
import type { MicroBatchShare, MicroBatchTask, PassInputs } from "../training/micro-batch-gradients.js";

/** workerData of a gradient thread: what it loads once. */
export interface GradientThreadSetup {
  modelDir: string;
  backend: BackendName;
  lora: LoraConfig;
  /** The learner's reasoning vocabulary (the thread expands its model the same way), and whether the adapter has token rows. */
  reasoning?: { standardSize: number; sourceIds: number[]; markers: ReasoningMarkers; rows: boolean };
}

/** One LoRA tensor in the learner's layout ([in, r] / [r, out]), by PEFT key. */
export interface WeightArray {
  key: string;
  shape: number[];
  data: Float32Array;
}

export interface SharedShare {
  index: number;
  loss: number;
  grads: WeightArray[];
  entropy: number;
  clipLow: number;
  clipHigh: number;
  clipRegion: number;
  kl: number | null;
  detached: [number, number[]][] | null;
  reference: [number, number[]][] | null;
}

export type ToGradientThread = {
  kind: "pass";
  id: number;
  /** The adapter's weights at this pass. */
  weights: WeightArray[];
  pass: PassInputs;
  /** Every micro-batch of the pass, in the order they are claimed. */
  tasks: MicroBatchTask[];
  /** [next task to claim]: the learner's thread and every gradient thread take tasks from it. */
  claims: SharedArrayBuffer;
};

export type FromGradientThread =
  | { kind: "ready" }
  | { kind: "share"; id: number; share: SharedShare }
  | { kind: "done"; id: number }
  | { kind: "failed"; id: number | null; name: string; message: string };

/** A share as plain arrays (its gradient tensors disposed). */
export function shareToArrays(share: MicroBatchShare): SharedShare {
  const grads = [...share.grads].map(([key, grad]) => ({ key, shape: grad.shape, data: grad.dataSync() as Float32Array }));
  tf.dispose([...share.grads.values()]);
  return {
    ...share,
    grads,
    detached: share.detached ? [...share.detached] : null,
    reference: share.reference ? [...share.reference] : null,
  };
}

/** A share back as tensors on this thread's backend. */
export function shareFromArrays(shared: SharedShare): MicroBatchShare {
  return {
    ...shared,
    grads: new Map(shared.grads.map(({ key, shape, data }) => [key, tf.tensor(data, shape)])),
    detached: shared.detached ? new Map(shared.detached) : null,
    reference: shared.reference ? new Map(shared.reference) : null,
  };
}

/** Takes the next unclaimed task index (atomically, so each task is computed once). */
export function claimTask(claims: Int32Array): number {
  return Atomics.add(claims, 0, 1);
}
