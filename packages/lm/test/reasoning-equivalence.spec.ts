// The expanded model says what the base says, and sampler and learner agree on it
// (docs/concepts/reasoning-vocabulary.md, "Equivalence at initialisation"):
// - logits of every copy equal its source's (tied arith-tiny and untied llama-tiny);
// - free mode: each token's mass is shared among it and its copies, so the mapped-text
//   distribution is the base's and a sampled id's logprob is the base's minus ln(k + 1);
// - the sampler's logprobs equal the learner's under free, gated and strict (≤ 1e-5), with
//   trained token rows and LoRA, with and without top-k/top-p;
// - a stop token's copy stops; token rows train (and only they, among the table's rows),
//   and travel through PEFT files unchanged.
import path from "node:path";
import * as tf from "@tensorflow/tfjs-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useBackend } from "../src/backend/tensor-backend.js";
import { generate } from "../src/decode/generate.js";
import { lossGradients } from "../src/gradients/adapter-gradients.js";
import { completionLogprobs, scoreCompletions } from "../src/logprobs/completion-logprobs.js";
import { LoraAdapter, TOKEN_ROWS_KEYS } from "../src/lora/lora-adapter.js";
import type { LoraConfig } from "../src/lora/lora-config.js";
import { exportPeftAdapter, importPeftAdapter } from "../src/lora/peft-adapter.js";
import { CausalLM } from "../src/model/causal-lm.js";
import { loadCheckpoint, type Checkpoint } from "../src/model/checkpoint.js";
import { expandCheckpoint } from "../src/reasoning-vocab/expand-checkpoint.js";
import {
  blockStates,
  defaultReasoningMap,
  isAllowed,
  REASONING_MASK_MODES,
  ReasoningTokenMap,
  ReasoningVocabulary,
  type ReasoningMaskMode,
} from "../src/reasoning-vocab/index.js";
import { SafetensorsFile } from "../src/safetensors/safetensors-reader.js";
import { ModelTokenizer } from "../src/tokenizer/model-tokenizer.js";
import { fixturePath } from "./support/fixtures.js";

const ARITH = path.resolve(import.meta.dirname, "../../../models/arith-tiny");
const LORA: LoraConfig = { rank: 4, alpha: 8, targetModules: ["q_proj", "v_proj", "up_proj"], dropout: 0, useRslora: false };

/** Row-wise log-softmax of logits [rows, vocab] as float64. */
function logSoftmaxRows(values: Float32Array, vocab: number): Float64Array[] {
  const rows: Float64Array[] = [];
  for (let r = 0; r < values.length / vocab; r++) {
    const row = Float64Array.from(values.subarray(r * vocab, (r + 1) * vocab));
    const max = Math.max(...row);
    const log = Math.log(row.reduce((a, v) => a + Math.exp(v - max), 0)) + max;
    rows.push(row.map((v) => v - log));
  }
  return rows;
}

/** Logits [positions, vocab] of every position of one sequence. */
function allLogits(model: CausalLM, ids: number[], adapter: LoraAdapter | null = null): Float32Array {
  return tf.tidy(() => {
    const hidden = model.forward(
      {
        batch: 1,
        queryLength: ids.length,
        ids: Int32Array.from(ids),
        positions: Int32Array.from(ids, (_, i) => i),
        keyMask: new Uint8Array(ids.length).fill(1),
      },
      { adapter },
    );
    hidden.present.forEach((kv) => tf.dispose([kv.keys, kv.values]));
    return model
      .logits(tf.reshape(hidden.hidden, [ids.length, model.config.hiddenSize]) as tf.Tensor2D, adapter)
      .dataSync() as Float32Array;
  });
}

describe.each([
  ["arith-tiny (tied)", ARITH],
  ["llama-tiny (untied)", fixturePath("llama-tiny")],
])("expanded %s", (_name, dir) => {
  let checkpoint: Checkpoint;
  let base: CausalLM;
  beforeAll(async () => {
    await useBackend("cpu");
    checkpoint = await loadCheckpoint(dir);
    base = CausalLM.fromCheckpoint(checkpoint);
  });
  afterAll(() => base.dispose());

  it.each([
    ["one copy of every id", (n: number) => defaultReasoningMap(n, n)],
    ["copies of the first ten ids", (n: number) => defaultReasoningMap(n, 10)],
    ["repeated sources", (n: number) => new ReasoningTokenMap(n, Int32Array.from([7, 3, 7, 7, n - 1]))],
  ])("gives every copy its source's logits (%s)", (_what, makeMap) => {
    const n = checkpoint.config.vocabSize;
    const map = makeMap(n);
    const expanded = CausalLM.fromCheckpoint(expandCheckpoint(checkpoint, map));
    try {
      expect(expanded.config.vocabSize).toBe(n + map.reasoningSize);
      expect(expanded.config.tieWordEmbeddings).toBe(checkpoint.config.tieWordEmbeddings);
      // A prompt of standard ids, and the same text written with copies: same hidden states.
      const standard = [1, 5, 9, 7, 3, 2];
      const copies = standard.map((id) => {
        const i = map.sourceIds.indexOf(id);
        return i >= 0 ? n + i : id;
      });
      const baseLogits = allLogits(base, standard);
      for (const ids of [standard, copies]) {
        const logits = allLogits(expanded, ids);
        const vocab = map.totalSize;
        for (let pos = 0; pos < standard.length; pos++) {
          for (let id = 0; id < vocab; id++) {
            expect(logits[pos * vocab + id]).toBe(baseLogits[pos * n + map.source(id)]);
          }
        }
      }
    } finally {
      expanded.dispose();
    }
  });

  it("free mode, one copy of each id: the mapped distribution is the base's and logprob = base − ln 2", async () => {
    const n = checkpoint.config.vocabSize;
    const map = defaultReasoningMap(n, n);
    const expanded = CausalLM.fromCheckpoint(expandCheckpoint(checkpoint, map));
    const vocab = new ReasoningVocabulary(map, { start: "", end: "", startIds: [11], endIds: [12] }, "free");
    try {
      const prompt = [3, 8, 1, 4];
      const [sampled] = await generate(expanded, [prompt], {
        maxNewTokens: 12,
        seed: 7,
        temperature: 1,
        stopTokenIds: [],
        reasoning: { vocab, mode: "free" },
      });
      const tokens = sampled!.tokenIds;
      expect(tokens.some((t) => t >= n)).toBe(true); // it did use copies
      expect(tokens.some((t) => t < n)).toBe(true);
      // The base model reads the mapped sequence.
      const mapped = [...prompt, ...tokens.map((t) => map.source(t))];
      const baseRows = logSoftmaxRows(allLogits(base, mapped), n);
      const expandedRows = logSoftmaxRows(allLogits(expanded, [...prompt, ...tokens]), map.totalSize);
      tokens.forEach((token, t) => {
        const baseRow = baseRows[prompt.length - 1 + t]!;
        expect(Math.abs(sampled!.logprobs[t]! - (baseRow[map.source(token)]! - Math.LN2))).toBeLessThan(1e-5);
        // Each id's mass over itself and its copy is the base's probability of it.
        const mappedMass = new Float64Array(n);
        expandedRows[prompt.length - 1 + t]!.forEach((lp, id) => {
          mappedMass[map.source(id)]! += Math.exp(lp);
        });
        mappedMass.forEach((p, id) => expect(Math.abs(p - Math.exp(baseRow[id]!))).toBeLessThan(1e-6));
      });
    } finally {
      expanded.dispose();
    }
  });

  it("free mode, uneven copies: an id with k copies weighs (k + 1) times its base weight", () => {
    const n = checkpoint.config.vocabSize;
    const map = new ReasoningTokenMap(n, Int32Array.from([7, 3, 7, 7])); // 7 has three copies, 3 one, the rest none
    const expanded = CausalLM.fromCheckpoint(expandCheckpoint(checkpoint, map));
    try {
      const prompt = [3, 8, 1, 4];
      const baseRow = logSoftmaxRows(allLogits(base, prompt), n).at(-1)!;
      const row = logSoftmaxRows(allLogits(expanded, prompt), map.totalSize).at(-1)!;
      const weights = Array.from(baseRow, (lp, id) => Math.exp(lp) * (1 + map.copiesOf(id)));
      const total = weights.reduce((a, b) => a + b, 0);
      row.forEach((lp, id) => {
        const source = map.source(id);
        expect(Math.abs(Math.exp(lp) - weights[source]! / (1 + map.copiesOf(source)) / total)).toBeLessThan(1e-6);
      });
    } finally {
      expanded.dispose();
    }
  });

  describe("sampler and learner", () => {
    let expanded: CausalLM;
    let adapter: LoraAdapter;
    let vocab: ReasoningVocabulary;
    const n = () => checkpoint.config.vocabSize;
    beforeAll(() => {
      const map = defaultReasoningMap(n(), n());
      expanded = CausalLM.fromCheckpoint(expandCheckpoint(checkpoint, map));
      // Trained-looking rows: copies plus noise, so a copy no longer ties with its source.
      const rows = (m: tf.Tensor2D) =>
        tf.tidy(() => {
          const part = tf.slice(m, [n(), 0], [n(), m.shape[1]]);
          return tf.add(part, tf.randomNormal(part.shape, 0, 0.05, "float32", 3)) as tf.Tensor2D;
        });
      const embedding = rows(expanded.weights.embedding);
      const head = expanded.config.tieWordEmbeddings ? null : rows(expanded.weights.head);
      adapter = LoraAdapter.create(expanded.config, LORA, 5, { start: n(), embedding, head });
      embedding.dispose();
      head?.dispose();
      // LoRA's B is zero at creation: move it so the linears matter too.
      for (const v of adapter.variables()) if (v.name.endsWith("lora_B")) v.assign(tf.randomNormal(v.shape, 0, 0.05, "float32", 4));
    });
    // Markers that occur: the base model's most frequent sampled ids after these prompts.
    const prompts = [
      [3, 8, 1, 4],
      [5, 6],
      [4, 10, 3],
      [2, 2, 7],
    ];
    beforeAll(async () => {
      const counts = new Map<number, number>();
      for (const { tokenIds } of await generate(base, prompts, { maxNewTokens: 24, seed: 1, stopTokenIds: [] })) {
        for (const id of tokenIds) counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      const [first, second] = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id);
      vocab = new ReasoningVocabulary(
        defaultReasoningMap(n(), n()),
        { start: "", end: "", startIds: [first!], endIds: [second!] },
        "gated",
      );
    });
    afterAll(() => {
      adapter.dispose();
      expanded.dispose();
    });

    it.each(
      REASONING_MASK_MODES.flatMap((mode) => [
        [mode, { temperature: 1, topK: 0, topP: 1 }],
        [mode, { temperature: 0.7, topK: 40, topP: 0.9 }],
      ]) as Array<[ReasoningMaskMode, { temperature: number; topK: number; topP: number }]>,
    )("agree under %s (%o)", async (mode, sampling) => {
      const reasoning = { vocab, mode };
      const completions = await generate(expanded, prompts, {
        maxNewTokens: 24,
        seed: 11,
        ...sampling,
        stopTokenIds: [],
        adapter,
        reasoning,
      });
      const sequences = prompts.map((promptIds, i) => ({ promptIds, completionIds: completions[i]!.tokenIds }));
      const scores = await scoreCompletions(expanded, sequences, { ...sampling, adapter, reasoning });
      let inside = 0;
      sequences.forEach(({ completionIds }, i) => {
        const states = blockStates(completionIds, vocab);
        completionIds.forEach((id, t) => {
          expect(isAllowed(id, states[t]!, mode, vocab), `token ${t} (${id}) in ${states[t]}`).toBe(true);
          if (states[t] === "inside") inside++;
          expect(Math.abs(scores.logprobs[i]![t]! - completions[i]!.logprobs[t]!)).toBeLessThan(1e-5);
        });
      });
      expect(inside).toBeGreaterThan(0); // the mask's inside state was exercised
      if (mode !== "free") {
        const outside = sequences.flatMap(({ completionIds }) =>
          completionIds.filter((id, t) => blockStates(completionIds, vocab)[t] !== "inside" && id >= n()),
        );
        expect(outside).toEqual([]);
      }
    });

    it("stops at a copy of a stop token", async () => {
      const stop = vocab.markers.endIds[0]!; // a frequent id
      const found = await generate(expanded, [[3, 8, 1, 4]], {
        maxNewTokens: 40,
        seed: 2,
        stopTokenIds: [stop],
        adapter,
        reasoning: { vocab, mode: "free" },
        temperature: 3, // flat enough that the copy comes up
      });
      const last = found[0]!.tokenIds.at(-1)!;
      if (found[0]!.finishReason === "stop") expect(vocab.source(last)).toBe(stop);
      expect(found[0]!.tokenIds.slice(0, -1).every((id) => vocab.source(id) !== stop)).toBe(true);
    });

    it("trains the token rows and exports them as PEFT trainable tokens", async () => {
      const sequences = [{ promptIds: [3, 8, 1, 4], completionIds: [vocab.markers.startIds[0]!, n() + 5, 7, n() + 2, 9] }];
      const { value, grads } = lossGradients(() => {
        const { logprobs } = completionLogprobs(expanded, sequences, { adapter, reasoning: { vocab, mode: "gated" } });
        return tf.neg(tf.sum(logprobs)) as tf.Scalar;
      }, adapter.variables());
      const rowsGrad = grads[adapter.tokenRows!.embedding.name]!;
      expect(rowsGrad.shape).toEqual([n(), expanded.config.hiddenSize]);
      const norms = tf.tidy(() => tf.norm(rowsGrad, 2, 1).dataSync());
      expect(norms[5]).toBeGreaterThan(0); // the input copy n_s + 5 has a gradient
      if (adapter.tokenRows!.head) expect(grads[adapter.tokenRows!.head.name]).toBeDefined();
      tf.dispose([value, ...Object.values(grads)]);

      const files = exportPeftAdapter(adapter, { baseModel: "expanded" });
      const config = JSON.parse(new TextDecoder().decode(files["adapter_config.json"]));
      const ids = Array.from({ length: n() }, (_, i) => n() + i);
      expect(config.trainable_token_indices).toEqual(
        expanded.config.tieWordEmbeddings ? { embed_tokens: ids } : { embed_tokens: ids, lm_head: ids },
      );
      const weights = await SafetensorsFile.fromBytes(files["adapter_model.safetensors"], "adapter");
      expect(weights.tensors.get(TOKEN_ROWS_KEYS.embedding)?.shape).toEqual([n(), expanded.config.hiddenSize]);
      expect(weights.tensors.has(TOKEN_ROWS_KEYS.head)).toBe(!expanded.config.tieWordEmbeddings);
      const back = await importPeftAdapter(files, expanded.config);
      try {
        const a = await scoreCompletions(expanded, sequences, { adapter });
        const b = await scoreCompletions(expanded, sequences, { adapter: back });
        expect(b.logprobs).toEqual(a.logprobs);
      } finally {
        back.dispose();
      }
      // The base (no adapter) still says what the unexpanded model says.
      const original = await scoreCompletions(base, [
        { promptIds: [3, 8, 1, 4], completionIds: sequences[0]!.completionIds.map((id) => vocab.source(id)) },
      ]);
      const copies = await scoreCompletions(expanded, sequences);
      copies.logprobs[0]!.forEach((lp, t) => {
        const k = 1; // one copy of each id
        expect(Math.abs(lp - (original.logprobs[0]![t]! - Math.log(1 + k)))).toBeLessThan(1e-5);
      });
    });
  });
});

describe("arith-tiny's markers", () => {
  it("the start and end markers are single standard ids", async () => {
    const tokenizer = await ModelTokenizer.load(ARITH);
    expect(tokenizer.encode(":", { addSpecialTokens: false })).toEqual([27]);
    expect(tokenizer.encode("\\boxed{", { addSpecialTokens: false })).toEqual([114]);
  });
});
