// LoRA adapters: PEFT's initialisation (B = 0, so a fresh adapter is the base model),
// targets, scaling (alpha/r, rsLoRA alpha/√r), dropout only while training, and the
// reference policy (no adapter) from the same weights.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { useBackend } from "../src/backend/tensor-backend.js";
import { AdapterError } from "../src/errors.js";
import { completionLogprobs, scoreCompletions } from "../src/logprobs/completion-logprobs.js";
import { LoraAdapter } from "../src/lora/lora-adapter.js";
import type { LoraConfig } from "../src/lora/lora-config.js";
import { loadPeftAdapter } from "../src/lora/peft-adapter.js";
import { CausalLM } from "../src/model/causal-lm.js";
import { lossGradients } from "../src/gradients/adapter-gradients.js";
import { fixturePath, maxAbsDifference, readParity, sequencesOf, type Parity } from "./support/fixtures.js";

const ALL_TARGETS: LoraConfig["targetModules"] = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];

describe("LoRA adapters", () => {
  let model: CausalLM;
  let parity: Parity;

  beforeAll(async () => {
    await useBackend("cpu");
    model = await CausalLM.load(fixturePath("qwen2-tiny"));
    parity = await readParity("qwen2-tiny");
  });
  afterAll(() => model.dispose());

  it("starts as the base model: B is zero and A is Kaiming-uniform with bound 1/√in", async () => {
    const adapter = LoraAdapter.create(model.config, { rank: 4, alpha: 8, targetModules: ALL_TARGETS, dropout: 0, useRslora: false }, 1);
    const variables = adapter.variables();
    expect(variables).toHaveLength(2 * 7 * 2);
    for (const tensor of adapter.peftTensors()) {
      const values = Array.from(tensor.data);
      if (tensor.key.endsWith("lora_B.weight")) {
        expect(
          values.every((v) => v === 0),
          tensor.key,
        ).toBe(true);
      } else {
        const bound = 1 / Math.sqrt(tensor.shape[1]);
        expect(Math.max(...values.map(Math.abs))).toBeLessThanOrEqual(bound);
        expect(Math.max(...values.map(Math.abs))).toBeGreaterThan(bound / 2);
      }
    }
    const scores = await scoreCompletions(model, sequencesOf(parity), { adapter });
    expect(maxAbsDifference(scores.logprobs, parity.cases[1]!.logprobs)).toBeLessThan(1e-4); // the reference case
    adapter.dispose();
  });

  it("draws the same A for the same seed and a different A for another", () => {
    const config: LoraConfig = { rank: 2, alpha: 2, targetModules: ["q_proj"], dropout: 0, useRslora: false };
    const [a, b, c] = [1, 1, 2].map((seed) => LoraAdapter.create(model.config, config, seed));
    expect(a!.peftTensors()[0]!.data).toEqual(b!.peftTensors()[0]!.data);
    expect(a!.peftTensors()[0]!.data).not.toEqual(c!.peftTensors()[0]!.data);
    [a, b, c].forEach((x) => x!.dispose());
  });

  it("scales by alpha/r, or alpha/√r with rsLoRA", () => {
    const base = { rank: 16, alpha: 32, targetModules: ["v_proj"] as LoraConfig["targetModules"], dropout: 0 };
    const plain = LoraAdapter.create(model.config, { ...base, useRslora: false }, 0);
    const rs = LoraAdapter.create(model.config, { ...base, useRslora: true }, 0);
    expect(plain.scaling).toBe(2);
    expect(rs.scaling).toBe(8);
    plain.dispose();
    rs.dispose();
  });

  it("has trainable variables only for its targets, and gradients for all of them", async () => {
    const adapter = LoraAdapter.create(
      model.config,
      { rank: 2, alpha: 4, targetModules: ["k_proj", "up_proj"], dropout: 0, useRslora: false },
      3,
    );
    const names = adapter.variables().map((v) => adapter.peftKeyOfVariable(v.name));
    expect(names).toEqual([
      "base_model.model.model.layers.0.self_attn.k_proj.lora_A.weight",
      "base_model.model.model.layers.0.self_attn.k_proj.lora_B.weight",
      "base_model.model.model.layers.0.mlp.up_proj.lora_A.weight",
      "base_model.model.model.layers.0.mlp.up_proj.lora_B.weight",
      "base_model.model.model.layers.1.self_attn.k_proj.lora_A.weight",
      "base_model.model.model.layers.1.self_attn.k_proj.lora_B.weight",
      "base_model.model.model.layers.1.mlp.up_proj.lora_A.weight",
      "base_model.model.model.layers.1.mlp.up_proj.lora_B.weight",
    ]);
    const { value, grads } = lossGradients(
      () => tf.sum(completionLogprobs(model, sequencesOf(parity), { adapter }).logprobs) as tf.Scalar,
      adapter.variables(),
    );
    // With B = 0 only B gets a gradient (PEFT's init: dL/dA = 0 at the start).
    for (const [name, grad] of Object.entries(grads)) {
      const norm = tf.norm(grad).dataSync()[0]!;
      if (adapter.peftKeyOfVariable(name)!.includes("lora_B")) expect(norm).toBeGreaterThan(0);
      else expect(norm).toBe(0);
    }
    tf.dispose([value, ...Object.values(grads)]);
    adapter.dispose();
  });

  describe("dropout", () => {
    let adapter: LoraAdapter;
    beforeAll(async () => {
      const trained = await loadPeftAdapter(fixturePath("qwen2-tiny-lora"), model.config);
      const withDropout = { ...trained.config, dropout: 0.5 };
      adapter = LoraAdapter.fromPeftTensors(model.config, withDropout, new Map(trained.peftTensors().map((t) => [t.key, t])));
      trained.dispose();
    });
    afterAll(() => adapter.dispose());

    const logprobs = (dropoutSeed?: number) =>
      tf.tidy(() => Array.from(completionLogprobs(model, sequencesOf(parity), { adapter, dropoutSeed }).logprobs.dataSync()));

    it("is off without a seed (scoring, sampling): the adapter's exact logprobs", async () => {
      const scores = await scoreCompletions(model, sequencesOf(parity), { adapter });
      expect(maxAbsDifference(scores.logprobs, parity.cases[0]!.logprobs)).toBeLessThan(1e-4);
    });

    it("changes the logprobs while training, reproducibly per seed", () => {
      const off = logprobs();
      const first = logprobs(11);
      expect(Math.max(...first.map((v, i) => Math.abs(v - off[i]!)))).toBeGreaterThan(1e-3);
      expect(logprobs(11)).toEqual(first);
      expect(logprobs(12)).not.toEqual(first);
    });
  });

  const invalid: Array<[string, Partial<LoraConfig>, RegExp]> = [
    ["rank 0", { rank: 0 }, /LoRA rank 0 must be a positive integer/],
    ["a fractional rank", { rank: 2.5 }, /LoRA rank 2.5 must be a positive integer/],
    ["a negative alpha", { alpha: -1 }, /LoRA alpha -1 must be a positive number/],
    ["dropout 1", { dropout: 1 }, /LoRA dropout 1 must be in \[0, 1\)/],
    [
      "an unknown target",
      { targetModules: ["qkv_proj" as never] },
      /target module "qkv_proj" is not known; accepted: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj/,
    ],
    ["no targets", { targetModules: [] }, /non-empty list/],
    ["a repeated target", { targetModules: ["q_proj", "q_proj"] }, /list a module twice/],
  ];
  it.each(invalid)("refuses %s", (_name, change, message) => {
    const config = { rank: 4, alpha: 8, targetModules: ALL_TARGETS, dropout: 0, useRslora: false, ...change };
    expect(() => LoraAdapter.create(model.config, config, 0)).toThrow(AdapterError);
    expect(() => LoraAdapter.create(model.config, config, 0)).toThrow(message);
  });
});
