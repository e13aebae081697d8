// `lean-grpo export`: a run's adapter as it is, or merged into its base as a Hugging Face
// directory. The merged model's logits are checked two ways on the lm fixtures (Qwen2 tied
// with q/k/v bias, Qwen3 sharded and untied with rsLoRA, Llama stored in BF16/F16):
//  - against the base model with the adapter applied by the learner's own forward pass
//    (packages/lm). NOT independent: the same model code computes both sides; it catches a
//    merge that is wrong or left out, not a forward pass wrong in the same way twice;
//  - by scripts/reference/check_export.py, independent of all the TypeScript: the merge done
//    in PyTorch from the PEFT files, logits from the plain-PyTorch reference model, and with
//    transformers + peft where installed (skipped, saying why, where /usr/bin/python3 lacks torch).
import { spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import * as tf from "@tensorflow/tfjs-core";
import { CausalLM, leftPaddedBatch, loadPeftAdapter, SafetensorsFile, useBackend } from "@lean-grpo/lm";
import { RunOutputs } from "@lean-grpo/orchestrator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportCommand } from "../src/commands/export-command.js";

const REPO = path.resolve(import.meta.dirname, "../../..");
const FIXTURES = path.join(REPO, "packages/lm/test/fixtures");
const CHECK_EXPORT = path.join(REPO, "scripts/reference/check_export.py");
// Debian's torch by default; PEFT_PYTHON (as in tests/conformance) names a Python that also has
// transformers and peft, where check_export.py loads the merged folder as a lab would.
const PYTHON = process.env.PEFT_PYTHON || "/usr/bin/python3";
const hasTorch = spawnSync(PYTHON, ["-c", "import torch"]).status === 0;
if (!hasTorch) console.warn(`skipping the independent PyTorch check of \`lean-grpo export --merge\`: ${PYTHON} lacks torch`);

const TOLERANCE = 1e-4;
const MODELS = ["qwen2-tiny", "qwen3-tiny", "llama-tiny"] as const;

let dir: string;
let runsDir: string;

/** A run folder as the orchestrator leaves it: run.json, metrics.jsonl, adapters/policy-v<N>/, checkpoints/step-<N>/adapter/. */
async function makeRun(id: string, adapter: string, options: { reasoning?: boolean } = {}): Promise<void> {
  const outputs = RunOutputs.for(runsDir, id);
  await outputs.create({ run: {} });
  await outputs.writeRun({
    id,
    state: "RUN_STATE_COMPLETED",
    algorithm: "grpo",
    step: 2,
    total_steps: 2,
    dataset: "d.jsonl",
    created_at: "",
    updated_at: "",
    error: "",
    last_checkpoint_step: 2,
    last_metrics: {},
    ...(options.reasoning ? { reasoning: { n_s: 64, n_r: 64, map_sha256: "", mask: "free", markers: ["<think>", "</think>"] } } : {}),
  });
  for (const step of [1, 2]) await outputs.appendStep({ step, time: "", adapter_version: step, metrics: {}, timings: {} });
  await cp(adapter, path.join(outputs.dir, "adapters", "policy-v2"), { recursive: true });
  await cp(adapter, path.join(outputs.dir, "checkpoints", "step-1", "adapter"), { recursive: true });
}

/** Logits [rows, vocab] of a fixed left-padded batch. */
function logits(model: CausalLM, adapter: Awaited<ReturnType<typeof loadPeftAdapter>> | null): Float32Array {
  const sequences = [
    [3, 17, 42, 5, 9, 11, 2],
    [8, 1, 30, 4],
    [12, 60, 7, 19, 23, 2, 45, 6, 33],
  ];
  const batch = leftPaddedBatch(sequences, model.config);
  return tf.tidy(() => {
    const hidden = model.hiddenStates(batch, { adapter });
    const rows = tf.reshape(hidden, [batch.batch * batch.length, model.config.hiddenSize]) as tf.Tensor2D;
    const all = model.logits(rows, adapter);
    // Padding rows are not compared: their values are arbitrary.
    const keep = Array.from(batch.keyMask).flatMap((m, i) => (m ? [i] : []));
    return tf.gather(all, keep).dataSync() as Float32Array;
  });
}

const maxDifference = (a: Float32Array, b: Float32Array) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);

async function dtypes(directory: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const name of (await readdir(directory)).filter((n) => n.endsWith(".safetensors"))) {
    const file = await SafetensorsFile.open(path.join(directory, name));
    for (const info of file.tensors.values()) found.set(info.name, info.dtype);
    await file.close();
  }
  return found;
}

beforeAll(async () => {
  await useBackend("cpu");
  dir = await mkdtemp(path.join(tmpdir(), "export-"));
  runsDir = path.join(dir, "runs");
  for (const name of MODELS) await makeRun(name, path.join(FIXTURES, `${name}-lora`));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe.each(MODELS)("lean-grpo export --merge of %s", (name) => {
  const base = path.join(FIXTURES, name);
  const adapterDir = path.join(FIXTURES, `${name}-lora`);
  let out: string;
  beforeAll(async () => {
    out = path.join(dir, `${name}-merged`);
    const line = await exportCommand({ run: name, out, merge: true, model: base, runsDir });
    expect(line).toContain(`exported run ${name} adapters/policy-v2 merged into ${base}`);
  }, 60_000);

  it("writes safetensors in the base's dtype beside the base's config", async () => {
    expect(await dtypes(out)).toEqual(await dtypes(base));
    expect(await readFile(path.join(out, "config.json"), "utf8")).toBe(await readFile(path.join(base, "config.json"), "utf8"));
    expect((await readdir(out)).sort()).toEqual(["config.json", "generation_config.json", "model.safetensors"]);
  });

  it("gives the logits of the base with the adapter (the learner's forward; not independent)", async () => {
    const baseModel = await CausalLM.load(base);
    const adapter = await loadPeftAdapter(adapterDir, baseModel.config);
    const merged = await CausalLM.load(out);
    try {
      const want = logits(baseModel, adapter);
      const got = logits(merged, null);
      // The adapter matters here: a merge left out would be caught.
      expect(maxDifference(want, logits(baseModel, null))).toBeGreaterThan(1e-2);
      // A 16-bit base stores the merged weights rounded to its dtype (one unit in the last place), by design.
      const float32 = [...(await dtypes(base)).values()].every((d) => d === "F32");
      expect(maxDifference(got, want)).toBeLessThan(float32 ? TOLERANCE : 5e-2);
    } finally {
      adapter.dispose();
      baseModel.dispose();
      merged.dispose();
    }
  }, 60_000);

  it.skipIf(!hasTorch)(
    "matches the independent PyTorch merge and reference model (scripts/reference/check_export.py)",
    () => {
      const run = spawnSync(PYTHON, [CHECK_EXPORT, base, adapterDir, out], { encoding: "utf8", timeout: 120_000 });
      expect(run.stderr).toBe("");
      const report = JSON.parse(run.stdout) as { failures: string[]; max_logit_difference: number; skipped: string[] };
      for (const skipped of report.skipped) console.warn(`check_export.py ${name}: skipped ${skipped}`);
      console.info(`check_export.py ${name}: ${JSON.stringify(report)}`);
      expect(report.failures).toEqual([]);
      expect(report.max_logit_difference).toBeLessThan(TOLERANCE);
      expect(run.status).toBe(0);
    },
    120_000,
  );
});

describe("lean-grpo export", () => {
  it("without --merge writes the adapter files as the run holds them", async () => {
    const out = path.join(dir, "plain");
    expect(await exportCommand({ run: "qwen2-tiny", out, runsDir })).toBe(
      `exported run qwen2-tiny adapters/policy-v2 (PEFT adapter) to ${out}`,
    );
    for (const file of ["adapter_config.json", "adapter_model.safetensors"])
      expect(await readFile(path.join(out, file))).toEqual(await readFile(path.join(FIXTURES, "qwen2-tiny-lora", file)));
  });

  it("--step N takes the adapter the run sampled with after step N, else that step's checkpoint", async () => {
    expect(await exportCommand({ run: "qwen2-tiny", step: "2", out: path.join(dir, "step-2"), runsDir })).toContain("adapters/policy-v2");
    expect(await exportCommand({ run: "qwen2-tiny", step: "1", out: path.join(dir, "step-1"), runsDir })).toContain(
      "checkpoints/step-1/adapter",
    );
  });

  it("carries the tokenizer files and chat template of a base that has them", async () => {
    const model = path.join(REPO, "models/arith-tiny");
    const out = path.join(dir, "arith-merged");
    // An adapter of the arith model, as the learner writes one.
    const learner = await CausalLM.load(model);
    const { LoraAdapter, savePeftAdapter } = await import("@lean-grpo/lm");
    const adapter = LoraAdapter.create(
      learner.config,
      { rank: 2, alpha: 4, targetModules: ["q_proj", "v_proj"], dropout: 0, useRslora: false },
      1,
    );
    const adapterDir = path.join(dir, "arith-adapter");
    await savePeftAdapter(adapter, adapterDir, { baseModel: model });
    adapter.dispose();
    learner.dispose();
    await makeRun("arith", adapterDir);
    // No --model: the adapter's base_model_name_or_path is a directory here.
    expect(await exportCommand({ run: "arith", out, merge: true, runsDir })).toContain(`merged into ${model}`);
    expect((await readdir(out)).sort()).toEqual([
      "config.json",
      "generation_config.json",
      "model.safetensors",
      "tokenizer.json",
      "tokenizer_config.json",
    ]);
    const tokenizerConfig = JSON.parse(await readFile(path.join(out, "tokenizer_config.json"), "utf8")) as { chat_template?: string };
    expect(tokenizerConfig.chat_template).toContain("<|im_start|>");
  }, 60_000);

  it("names what exists when the run or the step is unknown", async () => {
    await expect(exportCommand({ run: "nope", out: path.join(dir, "x1"), runsDir })).rejects.toThrow(
      `--run nope: no such run in ${runsDir}; runs there: arith, llama-tiny, qwen2-tiny, qwen3-tiny`,
    );
    await expect(exportCommand({ run: "qwen2-tiny", step: "7", out: path.join(dir, "x2"), runsDir })).rejects.toThrow(
      "--step 7: run qwen2-tiny has no adapter for that step; steps with an adapter: 2; checkpoints at steps: 1",
    );
    await expect(exportCommand({ run: "qwen2-tiny", step: "two", out: path.join(dir, "x3"), runsDir })).rejects.toThrow(
      '--step is "two"; it must be an integer >= 0',
    );
  });

  it("refuses an --out that is not empty, and a base it cannot find, saying what to give", async () => {
    const full = path.join(dir, "full");
    await mkdir(full);
    await writeFile(path.join(full, "keep.txt"), "x");
    await expect(exportCommand({ run: "qwen2-tiny", out: full, runsDir })).rejects.toThrow(
      `--out ${full} is not empty (1 entries); give a new or empty directory`,
    );
    await expect(exportCommand({ run: "qwen2-tiny", out: path.join(dir, "x4"), merge: true, runsDir })).rejects.toThrow(
      `the adapter's base model "qwen2-tiny" is not a model directory here; give --model DIR`,
    );
  });

  it("refuses to merge an adapter into a base it does not fit, naming the weight", async () => {
    // qwen3-tiny's q_proj is [48, 32] (head_dim 12); qwen2-tiny's is [32, 32].
    await expect(
      exportCommand({ run: "qwen3-tiny", out: path.join(dir, "x8"), merge: true, model: path.join(FIXTURES, "qwen2-tiny"), runsDir }),
    ).rejects.toThrow(
      /cannot merge base_model\.model\.model\.layers\.0\.self_attn\.q_proj\.lora_A\.weight: .* do not fit .*is the adapter for this base model\?/,
    );
  });

  it("refuses to merge a run trained with a reasoning vocabulary, and exports its adapter as is", async () => {
    await makeRun("reasoning", path.join(FIXTURES, "qwen2-tiny-lora"), { reasoning: true });
    await expect(
      exportCommand({ run: "reasoning", out: path.join(dir, "x5"), merge: true, model: path.join(FIXTURES, "qwen2-tiny"), runsDir }),
    ).rejects.toThrow(/trained with a reasoning vocabulary .* export without --merge/);
    expect(await exportCommand({ run: "reasoning", out: path.join(dir, "x6"), runsDir })).toContain("(PEFT adapter)");
  });

  it("refuses to merge an adapter with trainable token rows (a reasoning vocabulary's), naming the key", async () => {
    const adapterDir = path.join(dir, "token-rows");
    await cp(path.join(FIXTURES, "qwen2-tiny-lora"), adapterDir, { recursive: true });
    const config = JSON.parse(await readFile(path.join(adapterDir, "adapter_config.json"), "utf8")) as Record<string, unknown>;
    await writeFile(path.join(adapterDir, "adapter_config.json"), JSON.stringify({ ...config, trainable_token_indices: [60, 61, 62, 63] }));
    await makeRun("token-rows", adapterDir);
    await expect(
      exportCommand({ run: "token-rows", out: path.join(dir, "x7"), merge: true, model: path.join(FIXTURES, "qwen2-tiny"), runsDir }),
    ).rejects.toThrow(/trains reasoning-vocabulary rows \(trainable_token_indices\).* export it without --merge/);
  });
});
