// Run-time backend choice: cpu and wasm always start; the native "tensorflow" backend
// (@tensorflow/tfjs-node or -gpu, optional and not installed here) is reported missing
// with the reason, and fails clearly only when asked for by name.
import { describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { matMulOpsForBackend } from "../src/backend/matmul-ops.js";
import { probeBackends, useBackend } from "../src/backend/tensor-backend.js";
import { BackendUnavailableError } from "../src/errors.js";
import { CausalLM } from "../src/model/causal-lm.js";
import { fixturePath } from "./support/fixtures.js";

const tensorflowInstalled = await import("@tensorflow/tfjs-node" as string).then(
  () => true,
  () => false,
);

describe("backends", () => {
  it("reports what is available and why the rest is not", async () => {
    const probes = await probeBackends();
    expect(probes.map((p) => p.name)).toEqual(["cpu", "wasm", "tensorflow"]);
    expect(probes.filter((p) => p.name !== "tensorflow").every((p) => p.available)).toBe(true);
    const tensorflow = probes.find((p) => p.name === "tensorflow")!;
    if (tensorflowInstalled) {
      console.warn("@tensorflow/tfjs-node is installed: its absence path is not exercised here");
      expect(tensorflow.available).toBe(true);
    } else {
      expect(tensorflow).toMatchObject({
        available: false,
        detail: expect.stringMatching(/@tensorflow\/tfjs-node-gpu is not installed; @tensorflow\/tfjs-node is not installed/),
      });
    }
  });

  it.each(["cpu", "wasm"] as const)("starts %s and picks its matrix products", async (name) => {
    const backend = await useBackend(name);
    expect(backend.name).toBe(name);
    expect(tf.getBackend()).toBe(name);
    const model = await CausalLM.load(fixturePath("qwen2-tiny"));
    expect(model.ops).toBe(matMulOpsForBackend(name));
    expect(model.ops.kind).toBe(name === "wasm" ? "xnnpack" : "native");
    model.dispose();
  });

  it("falls back from auto to wasm without the native backend", async () => {
    const backend = await useBackend("auto");
    expect(backend.name).toBe(tensorflowInstalled ? "tensorflow" : "wasm");
  });

  it("fails clearly when the native backend is asked for by name and is missing", async () => {
    if (tensorflowInstalled) return console.warn("@tensorflow/tfjs-node is installed: skipping its absence test");
    await expect(useBackend("tensorflow")).rejects.toThrow(BackendUnavailableError);
    await expect(useBackend("tensorflow")).rejects.toThrow(
      /backend "tensorflow" is not available: @tensorflow\/tfjs-node-gpu is not installed/,
    );
  });

  it("refuses an unknown backend name, listing the accepted ones", async () => {
    await expect(useBackend("webgpu" as never)).rejects.toThrow(/backend "webgpu" is not known; accepted: auto, cpu, wasm, tensorflow/);
  });

  it("refuses to run a model on a backend other than the one it was built on", async () => {
    await useBackend("cpu");
    const model = await CausalLM.load(fixturePath("qwen2-tiny"));
    await useBackend("wasm");
    expect(() =>
      model.hiddenStates({
        batch: 1,
        length: 1,
        ids: Int32Array.of(1),
        keyMask: Uint8Array.of(1),
        positions: Int32Array.of(0),
        lengths: [1],
      }),
    ).toThrow(/model was built on the cpu backend but wasm is active; load it again after switching/);
    model.dispose();
  });
});
