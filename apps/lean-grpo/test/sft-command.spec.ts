// `lean-grpo sft`: a short run on a tiny data set writes a model directory the learner core
// loads; the LoRA merge reproduces the adapter's outputs; bad input is refused by name.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import {
  CausalLM,
  completionLogprobs,
  LINEAR_MODULES,
  loadCheckpoint,
  loraScaling,
  mergeLora,
  ModelTokenizer,
  SafetensorsFile,
  useBackend,
} from "@lean-grpo/lm";
import { Learner } from "@lean-grpo/learner";
import { sftCommand } from "../src/commands/sft-command.js";
import { readSftPairs, tokenizePair } from "../src/sft/sft-data.js";
import { writeInitialModel } from "../../../scripts/arith/init-model.js";
import { drawProblems } from "../../../scripts/arith/arith-problems.js";

describe("lean-grpo sft", () => {
  let dir: string;
  let base: string;
  let data: string;

  beforeAll(async () => {
    await useBackend("cpu");
    dir = mkdtempSync(path.join(tmpdir(), "sft-"));
    base = path.join(dir, "base");
    writeInitialModel(base, 5);
    data = path.join(dir, "data.jsonl");
    writeFileSync(
      data,
      `${drawProblems(12, 9)
        .map((p) => JSON.stringify(p))
        .join("\n")}\n`,
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("trains 2 steps and writes a loadable model directory with changed weights", async () => {
    const out = path.join(dir, "out");
    const summary = await sftCommand(data, {
      model: base,
      out,
      steps: "2",
      batch: "4",
      rank: "4",
      lr: "1e-2",
      backend: "cpu",
      logEvery: "0",
    });
    expect(summary.steps).toBe(2);
    expect(Number.isFinite(summary.lastLoss)).toBe(true);
    const model = await CausalLM.load(out);
    const tokenizer = await ModelTokenizer.load(out);
    expect(model.config).toEqual((await CausalLM.load(base)).config);
    expect(tokenizer.hasChatTemplate).toBe(true);
    const before = await SafetensorsFile.open(path.join(base, "model.safetensors"));
    const after = await SafetensorsFile.open(path.join(out, "model.safetensors"));
    expect([...after.tensors.keys()].sort()).toEqual([...before.tensors.keys()].sort());
    const name = "model.layers.0.self_attn.q_proj.weight";
    expect(Array.from(await after.float32(name))).not.toEqual(Array.from(await before.float32(name)));
    await Promise.all([before.close(), after.close()]);
    expect(JSON.parse(readFileSync(path.join(out, "sft_run.json"), "utf8"))).toMatchObject({ steps: 2, batch: 4, rank: 4, seed: 0 });
    // The prompt it was trained to read travels with it: the bare problem as the only turn.
    expect(JSON.parse(readFileSync(path.join(out, "prompt_format.json"), "utf8"))).toEqual({ system: "", math_template: "{problem}" });
    model.dispose();
  });

  it("warm-starts in the base model's own prompt format and keeps it: its system turn and template, through the chat template", async () => {
    const tokenizer = await ModelTokenizer.load(base);
    const pair = { problem: "What is 2 + 3?", completion: "\\boxed{5}" };
    const format = { system: "Be brief.", math_template: "Q: {problem}" };
    // What the sampler is given for that format (ChatML, written out here).
    const expected = tokenizer.encode(
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nQ: What is 2 + 3?<|im_end|>\n<|im_start|>assistant\n",
      {
        addSpecialTokens: false,
      },
    );
    expect(tokenizePair(tokenizer, pair, format).promptIds).toEqual(expected);
    const based = path.join(dir, "formatted-base");
    cpSync(base, based, { recursive: true });
    writeFileSync(path.join(based, "prompt_format.json"), JSON.stringify(format));
    const out = path.join(dir, "formatted-out");
    await sftCommand(data, { model: based, out, steps: "1", batch: "2", rank: "2", backend: "cpu", logEvery: "0" });
    expect(JSON.parse(readFileSync(path.join(out, "prompt_format.json"), "utf8"))).toEqual(format);
  });

  it("--full trains every weight, embedding and norms included, and lowers the loss", async () => {
    const out = path.join(dir, "full");
    const summary = await sftCommand(data, {
      model: base,
      out,
      steps: "10",
      batch: "6",
      lr: "1e-2",
      backend: "cpu",
      logEvery: "0",
      full: true,
    });
    expect(summary.lastLoss).toBeLessThan(summary.firstLoss * 0.6);
    const before = await SafetensorsFile.open(path.join(base, "model.safetensors"));
    const after = await SafetensorsFile.open(path.join(out, "model.safetensors"));
    expect([...after.tensors.keys()].sort()).toEqual([...before.tensors.keys()].sort());
    // LoRA cannot reach these; --full must have moved every one of them.
    for (const name of after.tensors.keys()) {
      expect(Array.from(await after.float32(name)), name).not.toEqual(Array.from(await before.float32(name)));
    }
    await Promise.all([before.close(), after.close()]);
    const run = JSON.parse(readFileSync(path.join(out, "sft_run.json"), "utf8"));
    expect(run).toMatchObject({ steps: 10, full: true });
    expect(run.rank).toBeUndefined();
    // The written directory loads as a plain (frozen) model.
    const model = await CausalLM.load(out);
    expect(model.weights.trainable).toHaveLength(0);
    model.dispose();
  }, 240_000); // full fine-tuning of every weight: minutes on a loaded 2-core machine

  it("is deterministic for a seed", async () => {
    const options = { model: base, steps: "2", batch: "4", rank: "4", lr: "1e-2", backend: "cpu", logEvery: "0", seed: "3" };
    await sftCommand(data, { ...options, out: path.join(dir, "a") });
    await sftCommand(data, { ...options, out: path.join(dir, "b") });
    expect(readFileSync(path.join(dir, "a/model.safetensors")).equals(readFileSync(path.join(dir, "b/model.safetensors")))).toBe(true);
  });

  it("merges the adapter so that the merged model scores as base + adapter", async () => {
    const model = await CausalLM.load(base);
    const tokenizer = await ModelTokenizer.load(base);
    const learner = new Learner(model, {
      baseModel: base,
      lora: { rank: 4, alpha: 8, targetModules: [...LINEAR_MODULES], dropout: 0, useRslora: false },
      optimizer: {
        learningRate: 0.05,
        maxGradNorm: null,
        beta1: 0.9,
        beta2: 0.999,
        epsilon: 1e-8,
        weightDecay: 0,
        schedule: { name: "constant", warmupSteps: 0, totalSteps: 1 },
      },
      microBatchTokens: 4096,
      seed: 1,
      keepVersions: 1,
    });
    const sequences = (await readSftPairs(data)).slice(0, 3).map((pair) => tokenizePair(tokenizer, pair));
    await learner.trainStep({
      algorithm: "grpo",
      algorithmConfig: {},
      mode: "sft",
      step: 1,
      expectedSamples: 0,
      numGenerations: 0,
      examples: sequences.map((s, i) => ({ sampleId: `${i}`, groupId: `${i}`, ...s, samplerLogprobs: null, reward: 0, truncated: false })),
    });
    const checkpoint = await loadCheckpoint(base);
    mergeLora(checkpoint, learner.policy.peftTensors(), loraScaling(learner.lora));
    const merged = CausalLM.fromCheckpoint(checkpoint);
    const withAdapter = completionLogprobs(model, sequences, { adapter: learner.policy });
    const fromMerged = completionLogprobs(merged, sequences);
    const baseOnly = completionLogprobs(model, sequences);
    const expected = await withAdapter.logprobs.array();
    const actual = await fromMerged.logprobs.array();
    const unchanged = await baseOnly.logprobs.array();
    expect(Math.max(...expected.flat().map((v, i) => Math.abs(v - unchanged.flat()[i]!)))).toBeGreaterThan(1e-3);
    expect(Math.max(...expected.flat().map((v, i) => Math.abs(v - actual.flat()[i]!)))).toBeLessThan(1e-4);
    for (const out of [withAdapter, fromMerged, baseOnly]) tf.dispose([out.logprobs, out.entropies, out.mask]);
    learner.dispose();
    merged.dispose();
    model.dispose();
  });

  it("refuses a malformed record naming its line and field, before training", async () => {
    const bad = path.join(dir, "bad.jsonl");
    writeFileSync(bad, '{"problem":"What is 1 + 1?","answer":"2"}\n{"problem":"What is 2 + 2?"}\n');
    await expect(sftCommand(bad, { model: base, out: path.join(dir, "never") })).rejects.toThrow(
      /bad\.jsonl:2: missing "answer" \(or "ground_truth"\)/,
    );
    writeFileSync(bad, '{"problem":"What is 1 + 1?","answer":"2","solution":"1 + 1 = 3"}\n');
    await expect(sftCommand(bad, { model: base, out: path.join(dir, "never") })).rejects.toThrow(
      /bad\.jsonl:1: "solution" must contain \\boxed\{2\} or end with 2/,
    );
    // A plain (unboxed) solution ending in the answer is warm-start data like any other.
    writeFileSync(bad, '{"problem":"What is 1 + 1?","answer":"2","solution":"1 + 1 = 2"}\n');
    expect(await readSftPairs(bad)).toEqual([{ problem: "What is 1 + 1?", completion: "1 + 1 = 2" }]);
    writeFileSync(bad, "not json\n");
    await expect(sftCommand(bad, { model: base, out: path.join(dir, "never") })).rejects.toThrow(/bad\.jsonl:1: not valid JSON/);
  });

  it("refuses bad options naming the flag and what is accepted", async () => {
    await expect(sftCommand(data, { model: base, out: path.join(dir, "x"), steps: "0" })).rejects.toThrow(
      /--steps is "0"; it must be an integer >= 1/,
    );
    await expect(sftCommand(data, { model: base, out: path.join(dir, "x"), lr: "-1" })).rejects.toThrow(
      /--lr is "-1"; it must be a positive number/,
    );
    await expect(sftCommand(data, { model: base, out: path.join(dir, "x"), backend: "gpu" })).rejects.toThrow(
      /--backend is "gpu"; accepted: auto, cpu, wasm, tensorflow/,
    );
    await expect(sftCommand(data, { model: base, out: base })).rejects.toThrow(/--out must differ from --model/);
  });
});
