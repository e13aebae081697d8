// PEFT adapter files: what the learner writes matches, key for key and byte for byte, what
// the independent Python writer produced in PEFT's layout; a saved adapter loads back to
// the same numbers; the config carries what vLLM's PEFTHelper requires; and adapters the
// forward pass cannot honour are refused, naming the key.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { useBackend } from "../src/backend/tensor-backend.js";
import { AdapterError } from "../src/errors.js";
import { scoreCompletions } from "../src/logprobs/completion-logprobs.js";
import { LoraAdapter } from "../src/lora/lora-adapter.js";
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  exportPeftAdapter,
  importPeftAdapter,
  loadPeftAdapter,
  savePeftAdapter,
  type PeftFiles,
} from "../src/lora/peft-adapter.js";
import { CausalLM } from "../src/model/causal-lm.js";
import { float32ToBfloat16 } from "../src/safetensors/float-conversion.js";
import { SafetensorsFile } from "../src/safetensors/safetensors-reader.js";
import { serializeSafetensors } from "../src/safetensors/safetensors-writer.js";
import { fixturePath, maxAbsDifference, MODEL_NAMES, readFixtureTensors, readParity, sequencesOf } from "./support/fixtures.js";

async function fixtureFiles(name: string): Promise<PeftFiles> {
  return {
    [ADAPTER_CONFIG_FILE]: new Uint8Array(await readFile(fixturePath(name, ADAPTER_CONFIG_FILE))),
    [ADAPTER_WEIGHTS_FILE]: new Uint8Array(await readFile(fixturePath(name, ADAPTER_WEIGHTS_FILE))),
  };
}

describe("PEFT adapters", () => {
  let dir: string;
  beforeAll(async () => {
    await useBackend("cpu");
    dir = await mkdtemp(path.join(tmpdir(), "peft-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  describe.each(MODEL_NAMES)("%s", (name) => {
    let model: CausalLM;
    beforeAll(async () => {
      model = await CausalLM.load(fixturePath(name));
    });
    afterAll(() => model.dispose());

    it("exports the same keys, shapes and float32 bytes as the Python-written PEFT adapter", async () => {
      const adapter = await loadPeftAdapter(fixturePath(`${name}-lora`), model.config);
      const files = exportPeftAdapter(adapter, { baseModel: name });
      adapter.dispose();
      const written = await SafetensorsFile.fromBytes(files[ADAPTER_WEIGHTS_FILE], "exported");
      const reference = await SafetensorsFile.open(fixturePath(`${name}-lora`, ADAPTER_WEIGHTS_FILE));
      expect([...written.tensors.keys()].sort()).toEqual([...reference.tensors.keys()].sort());
      for (const key of reference.tensors.keys()) {
        expect(written.info(key).shape, key).toEqual(reference.info(key).shape);
        expect(written.info(key).dtype).toBe("F32");
        expect(Buffer.from(await written.rawBytes(key)).equals(Buffer.from(await reference.rawBytes(key))), key).toBe(true);
      }
      await reference.close();
      const config = JSON.parse(new TextDecoder().decode(files[ADAPTER_CONFIG_FILE]));
      const expected = JSON.parse(await readFile(fixturePath(`${name}-lora`, ADAPTER_CONFIG_FILE), "utf8"));
      for (const key of [
        "peft_type",
        "task_type",
        "r",
        "lora_alpha",
        "target_modules",
        "use_rslora",
        "use_dora",
        "bias",
        "fan_in_fan_out",
        "base_model_name_or_path",
      ]) {
        expect(config[key], key).toEqual(expected[key]);
      }
      // vLLM's PEFTHelper rejects a non-empty modules_to_save and DoRA.
      expect(config.modules_to_save).toBeNull();
      expect(config.use_dora).toBe(false);
    });
  });

  it("saves and loads an adapter back to the same tensors and logprobs", async () => {
    const model = await CausalLM.load(fixturePath("qwen3-tiny"));
    const parity = await readParity("qwen3-tiny");
    const adapter = LoraAdapter.create(
      model.config,
      { rank: 3, alpha: 5, targetModules: ["k_proj", "gate_proj", "o_proj"], dropout: 0.1, useRslora: true },
      9,
    );
    // Give B non-zero values so the adapter changes the model.
    for (const variable of adapter.variables()) {
      if (adapter.peftKeyOfVariable(variable.name)!.includes("lora_B"))
        variable.assign(tf.randomNormal(variable.shape, 0, 0.2, "float32", 5));
    }
    await savePeftAdapter(adapter, path.join(dir, "saved"), { baseModel: "qwen3-tiny" });
    const loaded = await loadPeftAdapter(path.join(dir, "saved"), model.config);
    expect(loaded.config).toEqual(adapter.config);
    expect(loaded.peftTensors()).toEqual(adapter.peftTensors());
    const before = await scoreCompletions(model, sequencesOf(parity), { adapter });
    const after = await scoreCompletions(model, sequencesOf(parity), { adapter: loaded });
    expect(maxAbsDifference(after.logprobs, before.logprobs)).toBe(0);
    expect(maxAbsDifference(before.logprobs, parity.cases[1]!.logprobs)).toBeGreaterThan(1e-3); // it is not the base model
    adapter.dispose();
    loaded.dispose();
    model.dispose();
  });

  it("exports BF16 tensors rounded as torch rounds them", async () => {
    const model = await CausalLM.load(fixturePath("qwen2-tiny"));
    const adapter = await loadPeftAdapter(fixturePath("qwen2-tiny-lora"), model.config);
    const files = exportPeftAdapter(adapter, { baseModel: "qwen2-tiny", dtype: "BF16" });
    const file = await SafetensorsFile.fromBytes(files[ADAPTER_WEIGHTS_FILE], "bf16");
    const original = await readFixtureTensors("qwen2-tiny-lora/adapter_model.safetensors");
    for (const [key, values] of original) {
      expect(file.info(key).dtype).toBe("BF16");
      expect(new Uint16Array((await file.rawBytes(key)).slice().buffer)).toEqual(float32ToBfloat16(values));
    }
    const reloaded = await importPeftAdapter(files, model.config);
    reloaded.dispose();
    adapter.dispose();
    model.dispose();
  });

  describe("refuses adapters it cannot honour", () => {
    let model: CausalLM;
    let good: PeftFiles;
    beforeAll(async () => {
      model = await CausalLM.load(fixturePath("qwen2-tiny"));
      good = await fixtureFiles("qwen2-tiny-lora");
    });
    afterAll(() => model.dispose());

    const withConfig = (change: Record<string, unknown>): PeftFiles => {
      const config = JSON.parse(new TextDecoder().decode(good[ADAPTER_CONFIG_FILE]));
      return { ...good, [ADAPTER_CONFIG_FILE]: new TextEncoder().encode(JSON.stringify({ ...config, ...change })) };
    };

    const configs: Array<[string, Record<string, unknown>, RegExp]> = [
      ["DoRA", { use_dora: true }, /"use_dora" is true; DoRA adapters are not supported/],
      ["trained biases", { bias: "all" }, /"bias" is "all"; accepted: "none"/],
      ["per-layer ranks", { rank_pattern: { q_proj: 8 } }, /"rank_pattern" is .*only empty\/null is supported/],
      ["modules_to_save", { modules_to_save: ["lm_head"] }, /"modules_to_save" is \["lm_head"\]/],
      [
        "a regex target",
        { target_modules: ".*proj" },
        /"target_modules" is ".\*proj"; give a list of module names .* \(regular expressions are not supported\)/,
      ],
      ["an unknown target", { target_modules: ["lm_head"] }, /"target_modules" names "lm_head"; accepted: q_proj/],
      ["a missing r", { r: undefined }, /"r" is undefined; it must be a positive integer/],
      ["a missing lora_alpha", { lora_alpha: undefined }, /"lora_alpha" is undefined; it must be a positive number/],
      ["another PEFT type", { peft_type: "PREFIX_TUNING" }, /"peft_type" is "PREFIX_TUNING"; accepted: "LORA"/],
      ["a rank the tensors do not have", { r: 8 }, /has shape \[4, 32\]; the model and r=8 need \[8, 32\]/],
    ];
    it.each(configs)("%s", async (_name, change, message) => {
      const before = tf.memory().numTensors;
      await expect(importPeftAdapter(withConfig(change), model.config)).rejects.toThrow(AdapterError);
      await expect(importPeftAdapter(withConfig(change), model.config)).rejects.toThrow(message);
      expect(tf.memory().numTensors).toBe(before);
    });

    it("a missing tensor", async () => {
      const tensors = await readFixtureTensors("qwen2-tiny-lora/adapter_model.safetensors");
      const file = await SafetensorsFile.fromBytes(good[ADAPTER_WEIGHTS_FILE], "x");
      const kept = [...tensors]
        .filter(([k]) => !k.includes("layers.1.mlp.down_proj.lora_B"))
        .map(([name, data]) => ({ name, data, shape: file.info(name).shape }));
      const files = { ...good, [ADAPTER_WEIGHTS_FILE]: serializeSafetensors(kept) };
      const before = tf.memory().numTensors;
      await expect(importPeftAdapter(files, model.config)).rejects.toThrow(
        /adapter lacks "base_model\.model\.model\.layers\.1\.mlp\.down_proj\.lora_B\.weight" \(shape \[32, 4\]\)/,
      );
      expect(tf.memory().numTensors).toBe(before);
    });

    it("a tensor the config does not explain", async () => {
      const file = await SafetensorsFile.fromBytes(good[ADAPTER_WEIGHTS_FILE], "x");
      const tensors = await Promise.all(
        [...file.tensors.values()].map(async (t) => ({ name: t.name, shape: t.shape, data: await file.float32(t.name) })),
      );
      tensors.push({ name: "base_model.model.lm_head.lora_A.weight", shape: [4, 32], data: new Float32Array(128) });
      const files = { ...good, [ADAPTER_WEIGHTS_FILE]: serializeSafetensors(tensors) };
      await expect(importPeftAdapter(files, model.config)).rejects.toThrow(
        /tensors the config's target_modules and the model's layers do not explain: "base_model\.model\.lm_head\.lora_A\.weight"/,
      );
    });

    it("a truncated weights file", async () => {
      const cut = { ...good, [ADAPTER_WEIGHTS_FILE]: good[ADAPTER_WEIGHTS_FILE].subarray(0, 1000) };
      await expect(importPeftAdapter(cut, model.config)).rejects.toThrow(/adapter_model\.safetensors: .*file truncated/);
    });

    it("a directory without the files", async () => {
      await expect(loadPeftAdapter(path.join(dir, "none"), model.config)).rejects.toThrow(/cannot read .*adapter_config\.json: ENOENT/);
    });

    it("an adapter of another model's shape", async () => {
      const qwen3 = await CausalLM.load(fixturePath("qwen3-tiny"));
      await expect(importPeftAdapter(good, qwen3.config)).rejects.toThrow(AdapterError);
      qwen3.dispose();
    });
  });

  it("writes files a reader of the directory finds", async () => {
    const model = await CausalLM.load(fixturePath("llama-tiny"));
    const adapter = await loadPeftAdapter(fixturePath("llama-tiny-lora"), model.config);
    await savePeftAdapter(adapter, path.join(dir, "nested", "v1"), { baseModel: "/models/llama-tiny" });
    const config = JSON.parse(await readFile(path.join(dir, "nested", "v1", ADAPTER_CONFIG_FILE), "utf8"));
    expect(config).toMatchObject({ base_model_name_or_path: "/models/llama-tiny", r: 2, lora_alpha: 4, inference_mode: true });
    await writeFile(path.join(dir, "nested", "v1", "extra.txt"), "ignored");
    const reloaded = await loadPeftAdapter(path.join(dir, "nested", "v1"), model.config);
    expect(reloaded.peftTensors()).toEqual(adapter.peftTensors());
    reloaded.dispose();
    adapter.dispose();
    model.dispose();
  });
});
