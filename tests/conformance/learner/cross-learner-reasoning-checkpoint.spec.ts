// A checkpoint with a reasoning vocabulary (docs/concepts/reasoning-vocabulary.md) moves between the
// TS and the PyTorch learner: each loads the other's adapter, trained reasoning rows included,
// exactly; saved again, the AdamW moments (the rows' in their own [rows, hidden] layout) are the
// same bytes; and the next gated step computes the same gradient (its global norm, loss, KL and
// entropy agree). The adapters after that step are not compared element by element: on this tiny
// model AdamW turns near-zero gradients into steps of about ±lr, so those elements carry float
// noise (torch 1.13 and 2.x disagree there as much as the two learners do).
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReasoningMask } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { REPO_ROOT } from "./conformance-fixtures.js";
import { type LearnerClient, learnerClient, trainStepStream } from "./learner-calls.js";
import type { LearnerUnderTest, RunningLearner } from "./learner-under-test.js";
import { readF32Safetensors } from "./peft-tensors.js";
import { torchUnavailable } from "./python-torch.js";
import { torchLearner } from "./torch-learner-under-test.js";
import { tsLearner } from "./ts-learner-under-test.js";

const unavailable = torchUnavailable();
if (unavailable) console.warn(`skipping the cross-learner reasoning checkpoint test: ${unavailable}`);

const N_S = 147; // arith-tiny, tied
const TOKEN_ROWS_KEY = "base_model.model.model.embed_tokens.token_adapter.trainable_tokens_delta";
// "<|im_start|>user\nWhat is 27 + 45?<|im_end|>\n<|im_start|>assistant\n"
const PROMPT = [145, 117, 0, 101, 103, 1, 19, 24, 1, 12, 1, 21, 22, 32, 146, 0, 145, 125, 0];
// "27 + 45: 7+5=12, 2+4+1=7, \boxed{72}<|im_end|>"; ":" (27) opens the block, "\boxed{" (114) closes it.
const STANDARD = [19, 24, 1, 12, 1, 21, 22, 27, 1, 24, 12, 22, 30, 18, 19, 13, 1, 19, 12, 21, 12, 18, 30, 24, 13, 1, 114, 24, 19, 94, 146];
const MIXED = STANDARD.map((id, t) => (t > 7 && t < 26 && id !== 1 ? N_S + id : id));
const samples = [STANDARD, MIXED, MIXED, STANDARD].map((completion, i) => ({
  sampleId: `r${i}`,
  groupId: "g0",
  promptTokenIds: PROMPT,
  completionTokenIds: completion,
  samplerLogprobs: [] as number[],
  // The standard completions win and the mixed ones lose (equal completions with opposite rewards would cancel).
  reward: i === 0 || i === 3 ? 1 : 0,
  truncated: false,
}));

function config(checkpointDir: string) {
  return {
    model: {
      dir: path.join(REPO_ROOT, "models/arith-tiny"),
      name: "arith-tiny",
      reasoning_vocab_size: N_S,
      reasoning_markers: [":", "\\boxed{"],
    },
    lora: { rank: 4, alpha: 8, target_modules: ["q_proj", "v_proj"] },
    optimizer: { learning_rate: 0.01, max_grad_norm: 1, lr_schedule: "constant", warmup_steps: 0 },
    checkpoint_dir: checkpointDir,
    seed: 0,
  };
}

/** The exported adapter's tensors; with a reasoning vocabulary the export holds reasoning_token_map.json too. */
async function exportedTensors(client: LearnerClient) {
  const parts = new Map<string, Buffer[]>();
  for await (const message of client.exportAdapter({ version: 0n, chunkSize: 0 })) {
    if (message.part.case === "chunk") {
      const chunk = message.part.value;
      parts.set(chunk.path, [...(parts.get(chunk.path) ?? []), Buffer.from(chunk.data)]);
    }
  }
  expect([...parts.keys()].sort()).toEqual(["adapter_config.json", "adapter_model.safetensors", "reasoning_token_map.json"]);
  return readF32Safetensors(Buffer.concat(parts.get("adapter_model.safetensors")!), "exported adapter_model.safetensors");
}

const learners: LearnerUnderTest[] = [tsLearner, torchLearner()];
const gated = (step: bigint) => ({
  algorithm: "grpo",
  step,
  numGenerations: 4,
  expectedSamples: 4,
  temperature: 1,
  reasoningMask: ReasoningMask.GATED,
});

describe.skipIf(unavailable !== null)(
  "checkpoints with trained reasoning rows move between the TS and the PyTorch learner",
  { timeout: 300_000 },
  () => {
    const running = new Map<string, { learner: RunningLearner; client: LearnerClient }>();
    let dir: string;

    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), "cross-learner-reasoning-"));
      for (const learner of learners) {
        // One checkpoint_dir for both, as two learners sharing a volume: each reads what the other saved.
        const started = await learner.start(config(dir));
        running.set(learner.name, { learner: started, client: learnerClient(started.url) });
      }
    }, 240_000);
    afterAll(async () => {
      for (const { learner } of running.values()) await learner.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it.each([
      ["ts", "torch"],
      ["torch", "ts"],
    ])(
      "saved by the %s learner, loaded by both: rows and moments exactly, and the next gated step has the same gradient",
      async (writer, reader) => {
        const saver = running.get(writer)!.client;
        await saver.trainStep(trainStepStream(gated(0n), samples));
        const saved = await saver.saveCheckpoint({ path: `saved-by-${writer}` });
        const atSave = await exportedTensors(saver);
        expect(atSave.get(TOKEN_ROWS_KEY)?.shape).toEqual([N_S, 128]);

        const metrics = new Map<string, Record<string, number>>();
        const moments = async (checkpoint: string) =>
          readF32Safetensors(await readFile(path.join(dir, checkpoint, "optimizer.safetensors")), `${checkpoint}/optimizer.safetensors`);
        const savedMoments = await moments(saved.path);
        expect([...savedMoments.keys()]).toContain(`${TOKEN_ROWS_KEY}.exp_avg`);
        for (const name of [writer, reader]) {
          const client = running.get(name)!.client;
          await client.loadCheckpoint({ path: saved.path });
          const loaded = await exportedTensors(client);
          for (const [key, { data }] of atSave)
            expect(Array.from(loaded.get(key)!.data), `${name}'s ${key} as loaded`).toEqual(Array.from(data));
          const again = await client.saveCheckpoint({ path: `${writer}-resaved-by-${name}` });
          const resaved = await moments(again.path);
          expect([...resaved.keys()].sort()).toEqual([...savedMoments.keys()].sort());
          for (const [key, { shape, data }] of savedMoments) {
            expect(resaved.get(key)!.shape, `${name}'s ${key}`).toEqual(shape);
            expect(Array.from(resaved.get(key)!.data), `${name}'s ${key}`).toEqual(Array.from(data));
          }
          metrics.set(name, (await client.trainStep(trainStepStream(gated(0n), samples))).metrics);
        }
        for (const metric of ["grad_norm", "loss", "kl", "entropy"]) {
          const [a, b] = [metrics.get(writer)![metric]!, metrics.get(reader)![metric]!];
          expect(Math.abs(a - b), `${metric}: ${reader} ${b} vs ${writer} ${a}`).toBeLessThanOrEqual(1e-4 * Math.abs(a) + 1e-6);
        }
      },
    );
  },
);
