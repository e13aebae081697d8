// Loading Hugging Face model directories: config.json variants (transformers v4 and v5
// keys), single-file and sharded weights, BF16/F16 widening, and a clear error for every
// config or checkpoint the forward pass cannot honour.
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelCheckpointError, SafetensorsFormatError } from "../src/errors.js";
import { loadCheckpoint } from "../src/model/checkpoint.js";
import { parseModelConfig } from "../src/model/model-config.js";
import { inverseFrequencies } from "../src/model/rotary-embedding.js";
import { SafetensorsFile } from "../src/safetensors/safetensors-reader.js";
import { serializeSafetensors } from "../src/safetensors/safetensors-writer.js";
import { fixturePath } from "./support/fixtures.js";

async function fixtureConfig(name: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(fixturePath(name, "config.json"), "utf8")) as Record<string, unknown>;
}

describe("config.json", () => {
  it("reads qwen2: bias on q/k/v only, head_dim from hidden/heads, tied head", async () => {
    const config = parseModelConfig(await fixtureConfig("qwen2-tiny"));
    expect(config).toMatchObject({
      modelType: "qwen2",
      hiddenSize: 32,
      numHeads: 4,
      numKvHeads: 2,
      headDim: 8,
      qkvBias: true,
      outputBias: false,
      mlpBias: false,
      qkNorm: false,
      tieWordEmbeddings: true,
      ropeTheta: 10000,
      ropeScaling: null,
      dtype: "float32",
      bosTokenId: 1,
      eosTokenIds: [2],
    });
  });

  it("reads qwen3: q/k norm, explicit head_dim, v5 `dtype` key", async () => {
    const config = parseModelConfig(await fixtureConfig("qwen3-tiny"));
    expect(config).toMatchObject({
      modelType: "qwen3",
      headDim: 12,
      qkNorm: true,
      qkvBias: false,
      tieWordEmbeddings: false,
      ropeTheta: 1e6,
    });
  });

  it("reads llama3 RoPE from v5 `rope_parameters`, and the same from v4 `rope_theta` + `rope_scaling`", async () => {
    const v5 = await fixtureConfig("llama-tiny");
    const config = parseModelConfig(v5);
    expect(config).toMatchObject({ modelType: "llama", dtype: "bfloat16", eosTokenIds: [2, 3], ropeTheta: 500000 });
    expect(config.ropeScaling).toEqual({ factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 64 });
    const { rope_theta: theta, ...scaling } = v5.rope_parameters as Record<string, unknown>;
    const { rope_parameters: _, dtype, ...rest } = v5;
    const v4 = parseModelConfig({ ...rest, torch_dtype: dtype, rope_theta: theta, rope_scaling: scaling });
    expect(v4.ropeScaling).toEqual(config.ropeScaling);
    expect(v4.ropeTheta).toBe(config.ropeTheta);
  });

  it("rescales the RoPE frequencies for llama3: high kept, low divided by the factor, middle smoothed", async () => {
    const scaled = inverseFrequencies(parseModelConfig(await fixtureConfig("llama-tiny")));
    const plain = inverseFrequencies(parseModelConfig({ ...(await fixtureConfig("llama-tiny")), rope_parameters: { rope_theta: 500000 } }));
    expect(scaled[0]).toBe(plain[0]); // wavelength 2π < 64/4: kept
    expect(scaled[1]! / plain[1]!).toBeGreaterThan(1 / 8); // wavelength ≈ 32: between, smoothed
    expect(scaled[1]! / plain[1]!).toBeLessThan(1);
    for (let i = 2; i < scaled.length; i++) expect(scaled[i]).toBeCloseTo(plain[i]! / 8, 12); // long wavelengths: divided
  });

  const refusals: Array<[string, Record<string, unknown>, RegExp]> = [
    ["an unknown model_type", { model_type: "mistral" }, /"model_type" is "mistral"; accepted: qwen2, qwen3, llama/],
    [
      "another RoPE type",
      { rope_scaling: { rope_type: "yarn", factor: 4 } },
      /"rope_scaling.rope_type" is "yarn"; accepted: default, llama3/,
    ],
    [
      "llama3 RoPE without its factors",
      { rope_scaling: { rope_type: "llama3", factor: 8 } },
      /"rope_scaling.low_freq_factor" is undefined/,
    ],
    [
      "a quantized checkpoint",
      { quantization_config: { quant_method: "awq" } },
      /"quantization_config" is set; quantized checkpoints are not supported/,
    ],
    ["an fp8 dtype", { torch_dtype: "float8_e4m3fn" }, /"torch_dtype" is "float8_e4m3fn"; accepted: float32, bfloat16, float16/],
    ["sliding-window attention", { use_sliding_window: true }, /"use_sliding_window" is true; sliding-window attention is not supported/],
    [
      "kv heads that do not divide the heads",
      { num_key_value_heads: 3 },
      /"num_key_value_heads" is 3; it must divide num_attention_heads \(4\)/,
    ],
    ["another activation", { hidden_act: "gelu" }, /"hidden_act" is "gelu"; accepted: "silu"/],
    ["a missing size", { hidden_size: undefined }, /"hidden_size" is missing; it must be a positive integer/],
    ["an odd head_dim", { head_dim: 7 }, /"head_dim" is 7; rotary embeddings need an even head_dim/],
  ];

  it.each(refusals)("refuses %s, naming the key and what is accepted", async (_name, change, message) => {
    const base = await fixtureConfig("qwen2-tiny");
    expect(() => parseModelConfig({ ...base, ...change })).toThrow(message);
    expect(() => parseModelConfig({ ...base, ...change })).toThrow(ModelCheckpointError);
  });
});

describe("model weights", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "checkpoint-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("reads every tensor of a sharded checkpoint", async () => {
    const { config, weights } = await loadCheckpoint(fixturePath("qwen3-tiny"));
    expect(weights.size).toBe(1 + 2 * (2 + 7 + 2) + 1 + 1);
    expect(weights.get("model.layers.1.self_attn.q_proj.weight")!.length).toBe(config.numHeads * config.headDim * config.hiddenSize);
  });

  it("loads a BF16 checkpoint with an F16 head (exactness: dtypes fixture and llama parity)", async () => {
    const file = await SafetensorsFile.open(fixturePath("llama-tiny", "model.safetensors"));
    expect(file.info("model.embed_tokens.weight").dtype).toBe("BF16");
    expect(file.info("lm_head.weight").dtype).toBe("F16");
    await file.close();
    const { weights } = await loadCheckpoint(fixturePath("llama-tiny"));
    const embedding = weights.get("model.embed_tokens.weight")!;
    // Widened BF16 keeps zero low mantissa bits.
    expect(new Uint32Array(embedding.buffer).every((bits) => (bits & 0xffff) === 0)).toBe(true);
    expect(weights.get("lm_head.weight")!.length).toBe(96 * 32);
  });

  async function brokenCopy(name: string, edit: (dir: string) => Promise<void>): Promise<string> {
    const target = await mkdtemp(path.join(dir, `${name}-`));
    await cp(fixturePath(name), target, { recursive: true });
    await edit(target);
    return target;
  }

  it("refuses a truncated weights file, naming the file", async () => {
    const target = await brokenCopy("qwen2-tiny", async (d) => {
      const file = path.join(d, "model.safetensors");
      const bytes = await readFile(file);
      await writeFile(file, bytes.subarray(0, bytes.length - 100));
    });
    await expect(loadCheckpoint(target)).rejects.toThrow(SafetensorsFormatError);
    await expect(loadCheckpoint(target)).rejects.toThrow(/model\.safetensors: tensor ".*" ends at byte \d+ .*file truncated/);
  });

  it("refuses a checkpoint that lacks a tensor the config needs", async () => {
    const target = await brokenCopy("qwen2-tiny", async (d) => {
      const file = await SafetensorsFile.open(fixturePath("qwen2-tiny", "model.safetensors"));
      const kept = [...file.tensors.values()].filter((t) => t.name !== "model.layers.1.mlp.up_proj.weight");
      const tensors = await Promise.all(kept.map(async (t) => ({ name: t.name, shape: t.shape, data: await file.float32(t.name) })));
      await file.close();
      await writeFile(path.join(d, "model.safetensors"), serializeSafetensors(tensors));
    });
    await expect(loadCheckpoint(target)).rejects.toThrow(
      /1 tensor\(s\) the config needs are missing: "model\.layers\.1\.mlp\.up_proj\.weight"/,
    );
  });

  it("refuses a tensor whose shape the config does not imply", async () => {
    const target = await brokenCopy("qwen2-tiny", async (d) => {
      const config = JSON.parse(await readFile(path.join(d, "config.json"), "utf8"));
      await writeFile(path.join(d, "config.json"), JSON.stringify({ ...config, intermediate_size: 64 }));
    });
    await expect(loadCheckpoint(target)).rejects.toThrow(/has shape \[48, 32\] but config\.json implies \[64, 32\]/);
  });

  it("refuses tensors of another architecture", async () => {
    const target = await brokenCopy("qwen3-tiny", async (d) => {
      const config = JSON.parse(await readFile(path.join(d, "config.json"), "utf8"));
      await writeFile(path.join(d, "config.json"), JSON.stringify({ ...config, model_type: "llama" }));
    });
    await expect(loadCheckpoint(target)).rejects.toThrow(
      /unexpected tensor "model\.layers\.\d\.self_attn\.[qk]_norm\.weight" for a llama model/,
    );
  });

  it("refuses a shard index that names a tensor its shard lacks", async () => {
    const target = await brokenCopy("qwen3-tiny", async (d) => {
      const file = path.join(d, "model.safetensors.index.json");
      const index = JSON.parse(await readFile(file, "utf8"));
      index.weight_map["model.extra.weight"] = "model-00001-of-00002.safetensors";
      await writeFile(file, JSON.stringify(index));
    });
    await expect(loadCheckpoint(target)).rejects.toThrow(/the shard index puts "model\.extra\.weight" here but the file does not hold it/);
  });

  it("refuses a directory without safetensors weights", async () => {
    const target = await brokenCopy("qwen2-tiny", (d) => rm(path.join(d, "model.safetensors")));
    await expect(loadCheckpoint(target)).rejects.toThrow(/has neither model\.safetensors nor model\.safetensors\.index\.json/);
  });

  it("refuses a missing config.json", async () => {
    await expect(loadCheckpoint(path.join(dir, "nowhere"))).rejects.toThrow(/cannot read model config .*config\.json: ENOENT/);
  });
});
