// The shipped model (models/arith-tiny): loads through the learner core, its tokenizer
// round-trips the arithmetic prompts, its chat template renders ChatML, and greedy
// decoding answers held-out problems in a \boxed{...}.
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CausalLM, ModelTokenizer, useBackend } from "@lean-grpo/lm";
import { greedyAccuracy, type ArithRecord } from "../../scripts/arith/greedy-accuracy.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const modelDir = path.join(root, "models/arith-tiny");

function jsonl(file: string): ArithRecord[] {
  return readFileSync(path.join(root, file), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as ArithRecord);
}

describe("models/arith-tiny", () => {
  let tokenizer: ModelTokenizer;
  let model: CausalLM;

  beforeAll(async () => {
    await useBackend("cpu");
    tokenizer = await ModelTokenizer.load(modelDir);
    model = await CausalLM.load(modelDir);
  });
  afterAll(() => model?.dispose());

  it("is a tied-embedding qwen2 whose vocabulary is the tokenizer's, within 20 MB", () => {
    expect(model.config.modelType).toBe("qwen2");
    expect(model.config.tieWordEmbeddings).toBe(true);
    expect(model.config.vocabSize).toBe(tokenizer.vocabularySize);
    expect(model.config.eosTokenIds).toEqual([tokenizer.tokenId("<|im_end|>")]);
    expect(statSync(path.join(modelDir, "model.safetensors")).size).toBeLessThanOrEqual(20 * 1024 * 1024);
  });

  it("round-trips every prompt and answer of the example sets", () => {
    for (const { problem, answer } of [...jsonl("examples/arith.jsonl"), ...jsonl("examples/arith-heldout.jsonl")]) {
      const text = `${problem} = \\boxed{${answer}}`;
      expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
    }
    expect(tokenizer.decode(tokenizer.encode("12 × 3 ÷ 4 − 1 (x, y) <think>ok</think>"))).toBe("12 × 3 ÷ 4 − 1 (x, y) <think>ok</think>");
  });

  it("encodes the special tokens as single ids and the listed words as one token each", () => {
    for (const special of ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]) {
      expect(tokenizer.encode(special)).toEqual([tokenizer.tokenId(special)]);
    }
    expect(tokenizer.encode("What is 7?").map((id) => tokenizer.decode([id]))).toEqual(["What", " is", " ", "7", "?"]);
    expect(tokenizer.encode("\\boxed{12}").map((id) => tokenizer.decode([id]))).toEqual(["\\boxed{", "1", "2", "}"]);
  });

  it("renders ChatML as Qwen's template does", () => {
    const rendered = tokenizer.applyChatTemplate(
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: "What is 2 + 2?" },
      ],
      { addGenerationPrompt: true },
    );
    expect(rendered).toBe("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n");
    expect(tokenizer.specialTokens.eos_token).toBe("<|im_end|>");
    expect(tokenizer.specialTokens.pad_token).toBe("<|endoftext|>");
  });

  it("answers held-out problems greedily: the question's expression, then a boxed number, worked out or direct (as its warm start wrote them)", async () => {
    const records = jsonl("examples/arith-heldout.jsonl").slice(0, 16);
    const result = await greedyAccuracy(model, tokenizer, records, { maxNewTokens: 32 });
    result.completions.forEach((completion, i) => {
      const expression = /^What is (.*)\?$/.exec(records[i]!.problem)![1]!;
      expect(completion.startsWith(expression), `${records[i]!.problem} -> ${completion}`).toBe(true);
      expect(completion, records[i]!.problem).toMatch(/(\\boxed\{-?\d+\}|= -?\d+)$/);
    });
    expect(result.boxed).toBeGreaterThan(0);
  });
});
