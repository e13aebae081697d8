// Paths and readers for the committed fixtures written by scripts/reference/make_fixtures.py
// (an independent PyTorch implementation); tests compare the learner against them.
import { readFile } from "node:fs/promises";
import * as tf from "@tensorflow/tfjs-core";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { SafetensorsFile } from "../../src/safetensors/safetensors-reader.js";

export const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));
export const MODEL_NAMES = ["qwen2-tiny", "qwen3-tiny", "llama-tiny"] as const;
export type ModelName = (typeof MODEL_NAMES)[number];

export interface ParityCase {
  temperature: number;
  adapter: boolean;
  logprobs: number[][];
  entropies: number[][];
}

export interface Parity {
  model: string;
  adapter: string;
  pairs: Array<{ prompt: number[]; completion: number[] }>;
  cases: ParityCase[];
  gradient: { temperature: number; entropy_coef: number; token_weights: number[][]; loss: number; file: string };
  /** The same loss without the adapter, differentiated in every base weight (checkpoint names and layout). */
  full_gradient: { loss: number; file: string };
  greedy: Array<{ prompt: number[]; tokens: number[] }>;
}

export function fixturePath(...parts: string[]): string {
  return path.join(FIXTURES, ...parts);
}

export async function readParity(name: ModelName): Promise<Parity> {
  return JSON.parse(await readFile(fixturePath(`${name}-parity.json`), "utf8")) as Parity;
}

export function sequencesOf(parity: Parity) {
  return parity.pairs.map((p) => ({ promptIds: p.prompt, completionIds: p.completion }));
}

/** All float32 tensors of a fixture safetensors file, by name. */
/** Every tensor of a safetensors file as float32; a relative `file` is under these fixtures. */
export async function readFixtureTensors(file: string): Promise<Map<string, Float32Array>> {
  const st = await SafetensorsFile.open(path.isAbsolute(file) ? file : fixturePath(file));
  try {
    const out = new Map<string, Float32Array>();
    for (const name of st.tensors.keys()) out.set(name, await st.float32(name));
    return out;
  } finally {
    await st.close();
  }
}

/** Largest |a − b| over two ragged arrays of the same shape. */
export function maxAbsDifference(a: number[][], b: number[][]): number {
  if (a.length !== b.length) throw new Error(`row counts differ: ${a.length} vs ${b.length}`);
  let worst = 0;
  a.forEach((row, i) => {
    const other = b[i]!;
    if (row.length !== other.length) throw new Error(`row ${i} lengths differ: ${row.length} vs ${other.length}`);
    row.forEach((v, j) => {
      worst = Math.max(worst, Math.abs(v - other[j]!));
    });
  });
  return worst;
}

/** Right-aligns per-token weights into the [batch, C] layout completionLogprobs uses. */
export function alignedWeights(rows: number[][]): tf.Tensor2D {
  const window = Math.max(...rows.map((r) => r.length));
  const out = new Float32Array(rows.length * window);
  rows.forEach((row, b) =>
    row.forEach((w, i) => {
      out[b * window + window - row.length + i] = w;
    }),
  );
  return tf.tensor2d(out, [rows.length, window]);
}
