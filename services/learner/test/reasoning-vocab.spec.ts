// The learner with a reasoning vocabulary (docs/concepts/reasoning-vocabulary.md) on the shipped
// arith-tiny model, expanded with one copy of every id, markers ":" / "\boxed{", gated:
// - samples drawn by the embedded sampler under the mask are scored by the learner at the
//   sampler's logprobs (the importance ratio starts at 1);
// - a step moves the reasoning rows (and LoRA), and "frozen" leaves them at their copies;
// - the rows travel: PEFT trainable tokens in the exported adapter, the map beside them,
//   a checkpoint that resumes bit for bit, and a checkpoint of another map refused;
// - a gated request to a learner without a reasoning vocabulary is refused, naming the key.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  generate,
  loadReasoningModel,
  ModelTokenizer,
  REASONING_MAP_FILE,
  resolveModelReasoning,
  TOKEN_ROWS_KEYS,
  useBackend,
  type CausalLM,
} from "@lean-grpo/lm";
import { AlgorithmConfigError } from "../src/algorithms/algorithm-config-error.js";
import { Learner, type StepRequest } from "../src/training/learner.js";
import type { TrainingExample } from "../src/training/training-example.js";
import { learnerOptions } from "./support/learner-setup.js";
import { inCheckpointDirectory } from "./support/checkpoint-directory.js";

const ARITH = path.resolve(import.meta.dirname, "../../../models/arith-tiny");
const N_S = 147;
const settings = { size: N_S, markers: [":", "\\boxed{"] as const, mask: "gated" as const };
const GATED = 2; // ReasoningMask.REASONING_MASK_GATED

describe("learner with a reasoning vocabulary", { timeout: 600_000 }, () => {
  let model: CausalLM;
  let examples: TrainingExample[];
  let dir: string;
  const options = learnerOptions({ baseModel: "arith-tiny", reasoning: { rows: "train", mask: "free" }, microBatchTokens: 2048 });

  beforeAll(async () => {
    await useBackend("cpu");
    model = await loadReasoningModel(ARITH, await resolveModelReasoning(ARITH, settings));
    dir = await mkdtemp(path.join(tmpdir(), "learner-reasoning-"));
    const tokenizer = await ModelTokenizer.load(ARITH);
    const prompts = ["What is 27 + 45?", "What is 42 - 27?"].map((p) =>
      tokenizer.encodeChat([{ role: "user", content: p }], { addGenerationPrompt: true }),
    );
    // The block must open in some completions: the worked form ("27 + 45: 7+5=12, ...") is the model's own.
    const promptRows = prompts.flatMap((p) => [p, p, p]);
    const sampled = await generate(model, promptRows, {
      maxNewTokens: 20,
      seed: 3,
      temperature: 1,
      reasoning: { vocab: model.reasoning!, mode: "gated" },
    });
    examples = sampled.map((s, i) => ({
      sampleId: `s${i}`,
      groupId: `g${Math.floor(i / 3)}`,
      promptIds: promptRows[i]!,
      completionIds: s.tokenIds,
      samplerLogprobs: s.logprobs,
      reward: (i * 7) % 3 === 0 ? 1 : 0,
      truncated: s.finishReason === "length",
    }));
    expect(examples.some((e) => e.completionIds.some((id) => id >= N_S))).toBe(true);
  }, 600_000);
  afterAll(async () => {
    model.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  const request = (step: number, reasoningMask = GATED): StepRequest => ({
    algorithm: "grpo",
    algorithmConfig: {},
    mode: "rl",
    examples,
    step,
    expectedSamples: 0,
    numGenerations: 0,
    sampling: { temperature: 1, topK: 0, topP: 0, reasoningMask },
  });
  const rows = (learner: Learner) => learner.policy.peftTensors().find((t) => t.key === TOKEN_ROWS_KEYS.embedding)?.data;

  it("scores the sampler's tokens at the sampler's logprobs under the mask", async () => {
    const learner = new Learner(model, options);
    try {
      const scores = await learner.computeLogprobs(
        examples.map((e) => ({ promptIds: e.promptIds, completionIds: e.completionIds })),
        false,
        { temperature: 1, topK: 0, topP: 1, reasoningMask: "gated" },
      );
      examples.forEach((e, i) => e.samplerLogprobs!.forEach((lp, t) => expect(Math.abs(scores.logprobs[i]![t]! - lp)).toBeLessThan(1e-5)));
    } finally {
      learner.dispose();
    }
  });

  it("trains the rows, exports them as trainable tokens with the map, and resumes from a checkpoint bit for bit", async () => {
    const straight = new Learner(model, options);
    const stopped = new Learner(model, options);
    const restarted = new Learner(model, { ...options, seed: 99 });
    try {
      const initial = Float32Array.from(rows(straight)!);
      // The rows start as exact copies of the standard rows.
      expect(initial).toEqual(Float32Array.from(model.weights.embedding.dataSync().subarray(0, N_S * model.config.hiddenSize)));
      for (const step of [1, 2]) {
        await straight.trainStep(request(step));
        await stopped.trainStep(request(step));
      }
      expect(rows(straight)).not.toEqual(initial);

      const { files } = straight.exportAdapter(0);
      const config = JSON.parse(new TextDecoder().decode(files["adapter_config.json"]));
      expect(config.trainable_token_indices.embed_tokens).toEqual(Array.from({ length: N_S }, (_, i) => N_S + i));
      const map = JSON.parse(new TextDecoder().decode(straight.reasoningMapFile!));
      expect(map).toMatchObject({ standard_vocab_size: N_S, reasoning_vocab_size: N_S, markers: { start: ":", end: "\\boxed{" } });

      const saved = await inCheckpointDirectory(dir, "step-2", (d) => stopped.saveCheckpoint(d), true);
      expect(JSON.parse(await readFile(path.join(saved.path, "adapter", REASONING_MAP_FILE), "utf8")).sha256).toBe(model.reasoning!.sha256);
      await inCheckpointDirectory(dir, "step-2", (d) => restarted.loadCheckpoint(d));
      expect(rows(restarted)).toEqual(rows(stopped));
      const expected = await straight.trainStep(request(3));
      const got = await restarted.trainStep(request(3));
      expect(got.metrics.loss).toBe(expected.metrics.loss);
      expect(rows(restarted)).toEqual(rows(straight));
    } finally {
      for (const l of [straight, stopped, restarted]) l.dispose();
    }
  });

  it("keeps the rows at their copies with reasoning_rows frozen", async () => {
    const frozen = new Learner(model, { ...options, reasoning: { rows: "frozen", mask: "free" } });
    try {
      expect(rows(frozen)).toBeUndefined();
      await frozen.trainStep(request(1));
      const files = frozen.exportAdapter(0).files;
      expect(JSON.parse(new TextDecoder().decode(files["adapter_config.json"])).trainable_token_indices).toBeUndefined();
      // Refused: resuming a checkpoint with trained rows into a frozen learner.
      const training = new Learner(model, options);
      await inCheckpointDirectory(dir, "rows", (d) => training.saveCheckpoint(d), true);
      training.dispose();
      await expect(inCheckpointDirectory(dir, "rows", (d) => frozen.loadCheckpoint(d))).rejects.toThrow(
        /has trained reasoning rows but learner\.reasoning_rows is frozen/,
      );
    } finally {
      frozen.dispose();
    }
  });

  it("refuses a checkpoint saved with another map, and gated requests without a reasoning vocabulary", async () => {
    const other = await loadReasoningModel(ARITH, await resolveModelReasoning(ARITH, { ...settings, size: 20 }));
    const plain = await loadReasoningModel(ARITH, undefined);
    const theirs = new Learner(other, options);
    const mine = new Learner(model, options);
    const none = new Learner(plain, options);
    try {
      await inCheckpointDirectory(dir, "other-map", (d) => theirs.saveCheckpoint(d), true);
      await expect(inCheckpointDirectory(dir, "other-map", (d) => mine.loadCheckpoint(d))).rejects.toThrow(
        /was saved with another reasoning map .*model\.reasoning_vocab_size \/ model\.reasoning_map must match/,
      );
      await expect(inCheckpointDirectory(dir, "other-map", (d) => none.loadCheckpoint(d))).rejects.toThrow(
        /set model\.reasoning_vocab_size to match/,
      );
      const plainExamples = examples.map((e) => ({ ...e, completionIds: e.completionIds.map((id) => id % N_S) }));
      await expect(none.trainStep({ ...request(1), examples: plainExamples })).rejects.toThrow(AlgorithmConfigError);
      await expect(none.trainStep({ ...request(1), examples: plainExamples })).rejects.toThrow(
        /header\.sampling\.reasoning_mask is GATED but the learner's model has no reasoning vocabulary/,
      );
    } finally {
      for (const l of [theirs, mine, none]) l.dispose();
      other.dispose();
      plain.dispose();
    }
  });
});
