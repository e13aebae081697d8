// The LearnerService conformance suite's expanded-vocabulary case (docs/concepts/reasoning-vocabulary.md),
// run against every implementation (ts-learner-reasoning.spec.ts, torch-learner-reasoning.spec.ts),
// over gRPC only. The shipped arith-tiny model (n_s = 147, tied) with model.reasoning_vocab_size 147
// (one copy of every id) and markers ":" / "\boxed{" (ids 27 and 114):
// - GetStatus describes the vocabulary; its map hash is the SHA-256 of "147:0,1,...,146" (hashlib);
// - reference logprobs (the expanded base, no adapter) against the same learner code on the
//   unexpanded model: free = base − ln 2 for standard ids and copies alike; gated = base outside
//   the block (the copies are masked there) and base − ln 2 inside; strict = base outside, and
//   inside a copy x gets base(x) − ln(1 + p_base(end marker));
// - a gated TrainStep trains the reasoning rows as PEFT trainable tokens: the exported adapter
//   holds trainable_token_indices [147..293], their rows under PEFT's key, moved off the copies,
//   and reasoning_token_map.json with the hash; a checkpoint restores them;
// - a gated request to a learner without a reasoning vocabulary is INVALID_ARGUMENT naming reasoning_mask.
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { ReasoningMask } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { failure, type LearnerClient, learnerClient, trainStepStream } from "./learner-calls.js";
import type { LearnerUnderTest, RunningLearner } from "./learner-under-test.js";
import { readF32Safetensors } from "./peft-tensors.js";
import { END, MAP_SHA256, MIXED, MODEL, N_S, PROMPT, R, REASONING, STANDARD, START, TOKEN_ROWS_KEY } from "./reasoning-vocab-case.js";

const TOLERANCE = 1e-5;

function config(checkpointDir: string, reasoning: Record<string, unknown> | null) {
  return {
    model: { dir: MODEL, name: "arith-tiny", ...(reasoning ?? {}) },
    lora: { rank: 4, alpha: 8, target_modules: ["q_proj", "v_proj"] },
    optimizer: { learning_rate: 0.01, max_grad_norm: 1, lr_schedule: "constant", warmup_steps: 0 },
    checkpoint_dir: checkpointDir,
    seed: 0,
  };
}

async function referenceLogprobs(client: LearnerClient, completion: number[], mask: ReasoningMask): Promise<number[]> {
  const res = await client.computeLogprobs({
    sequences: [{ promptTokenIds: PROMPT, completionTokenIds: completion }],
    reference: true,
    sampling: { temperature: 1, topK: 0, topP: 1, reasoningMask: mask },
  });
  return res.sequences[0]!.logprobs;
}

async function exportedFiles(client: LearnerClient): Promise<Map<string, Buffer>> {
  const parts = new Map<string, Buffer[]>();
  for await (const message of client.exportAdapter({ version: 0n, chunkSize: 0 })) {
    if (message.part.case === "chunk") {
      const chunk = message.part.value;
      parts.set(chunk.path, [...(parts.get(chunk.path) ?? []), Buffer.from(chunk.data)]);
    }
  }
  return new Map([...parts].map(([p, chunks]) => [p, Buffer.concat(chunks)]));
}

export function describeReasoningVocabConformance(implementation: LearnerUnderTest): void {
  describe(`${implementation.name} learner: expanded vocabulary (model.reasoning_vocab_size)`, { timeout: 300_000 }, () => {
    let dir: string;
    let expanded: RunningLearner;
    let plain: RunningLearner;
    let client: LearnerClient;
    let base: LearnerClient;
    let baseLogprobs: number[];
    let endMarkerLogprob: number[];
    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), "conformance-reasoning-"));
      expanded = await implementation.start(config(path.join(dir, "expanded"), REASONING));
      plain = await implementation.start(config(path.join(dir, "plain"), null));
      client = learnerClient(expanded.url);
      base = learnerClient(plain.url);
      baseLogprobs = await referenceLogprobs(base, STANDARD, ReasoningMask.FREE);
      // The base's log p of the end marker at every position: what strict moves onto the copies.
      const ends = await Promise.all(STANDARD.map((_, t) => referenceLogprobs(base, [...STANDARD.slice(0, t), END], ReasoningMask.FREE)));
      endMarkerLogprob = ends.map((lps) => lps.at(-1)!);
    }, 300_000);
    afterAll(async () => {
      await expanded?.stop();
      await plain?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it("describes the vocabulary in GetStatus (once the model is loaded)", async () => {
      await referenceLogprobs(client, STANDARD, ReasoningMask.FREE);
      const status = await client.getStatus({});
      expect(status.reasoningVocabulary).toMatchObject({
        standardSize: N_S,
        reasoningSize: N_S,
        mapSha256: MAP_SHA256,
        startMarker: ":",
        endMarker: "\\boxed{",
        startMarkerIds: [START],
        endMarkerIds: [END],
      });
      expect((await base.getStatus({})).reasoningVocabulary).toBeUndefined();
    });

    it("free: every token, standard or copy, has the base's logprob minus ln 2", async () => {
      for (const completion of [STANDARD, MIXED]) {
        const got = await referenceLogprobs(client, completion, ReasoningMask.FREE);
        got.forEach((lp, t) => expect(Math.abs(lp - (baseLogprobs[t]! - Math.LN2)), `token ${t}`).toBeLessThanOrEqual(TOLERANCE));
      }
    });

    it("gated: the base's logprob outside the block, minus ln 2 inside it", async () => {
      const got = await referenceLogprobs(client, MIXED, ReasoningMask.GATED);
      got.forEach((lp, t) => {
        // Token t is sampled inside from the token after ":" (8) through the end marker (26).
        const inside = t > 7 && t <= 26;
        expect(Math.abs(lp - (baseLogprobs[t]! - (inside ? Math.LN2 : 0))), `token ${t}`).toBeLessThanOrEqual(TOLERANCE);
      });
    });

    it("strict: the base's logprob outside; inside, a copy shares its mass only with the other copies and the end marker", async () => {
      // Strict allows only copies and the end marker inside: the block's spaces are written as copies too.
      const strict = STANDARD.map((id, t) => (t > 7 && t < 26 ? R(id) : id));
      const got = await referenceLogprobs(client, strict, ReasoningMask.STRICT);
      got.forEach((lp, t) => {
        const inside = t > 7 && t <= 26;
        const expected = inside
          ? baseLogprobs[t]! - Math.log1p(Math.exp(t === 26 ? baseLogprobs[t]! : endMarkerLogprob[t]!))
          : baseLogprobs[t]!;
        expect(Math.abs(lp - expected), `token ${t}`).toBeLessThanOrEqual(TOLERANCE);
      });
    });

    it("trains the reasoning rows as PEFT trainable tokens, exports them with the map, and restores them from a checkpoint", async () => {
      // The standard completions win and the mixed ones lose: equal completions with opposite
      // rewards ([1, 0, 1, 0]) would cancel, and the rows would move only by optimizer noise.
      const rewards = [1, 0, 0, 1];
      const samples = [STANDARD, MIXED, MIXED, STANDARD].map((completion, i) => ({
        sampleId: `r${i}`,
        groupId: "g0",
        promptTokenIds: PROMPT,
        completionTokenIds: completion,
        samplerLogprobs: [] as number[],
        reward: rewards[i]!,
        truncated: false,
      }));
      const before = await exportedFiles(client);
      // The mask travels in the header's sampling distribution.
      await client.trainStep(
        trainStepStream(
          { algorithm: "grpo", step: 1n, numGenerations: 4, expectedSamples: 4, temperature: 1, reasoningMask: ReasoningMask.GATED },
          samples,
        ),
      );
      const files = await exportedFiles(client);
      expect([...files.keys()].sort()).toEqual(["adapter_config.json", "adapter_model.safetensors", "reasoning_token_map.json"]);
      const adapterConfig = JSON.parse(files.get("adapter_config.json")!.toString("utf8"));
      const ids = Array.from({ length: N_S }, (_, i) => N_S + i);
      expect(adapterConfig.trainable_token_indices).toEqual({ embed_tokens: ids });
      const map = JSON.parse(files.get("reasoning_token_map.json")!.toString("utf8"));
      expect(map).toMatchObject({
        format: "lean-grpo.reasoning-token-map/1",
        standard_vocab_size: N_S,
        reasoning_vocab_size: N_S,
        sha256: MAP_SHA256,
      });
      expect(
        createHash("sha256")
          .update(`${N_S}:${map.source_ids.join(",")}`)
          .digest("hex"),
      ).toBe(MAP_SHA256);
      const rows = readF32Safetensors(files.get("adapter_model.safetensors")!, "adapter").get(TOKEN_ROWS_KEY)!;
      const startRows = readF32Safetensors(before.get("adapter_model.safetensors")!, "adapter").get(TOKEN_ROWS_KEY)!;
      expect(rows.shape).toEqual([N_S, 128]);
      // Before training the rows are the standard rows' copies; the step moved them.
      expect(Array.from(rows.data).some((v, i) => v !== startRows.data[i])).toBe(true);
      // Rows of copies the batch used moved: row of the copy of "5" (id 22).
      const row = (data: Float32Array, id: number) => Array.from(data.subarray(id * 128, (id + 1) * 128));
      expect(row(rows.data, 22)).not.toEqual(row(startRows.data, 22));

      const trained = await referenceLogprobs(client, MIXED, ReasoningMask.GATED);
      const policy = await client.computeLogprobs({
        sequences: [{ promptTokenIds: PROMPT, completionTokenIds: MIXED }],
        reference: false,
        sampling: { temperature: 1, topK: 0, topP: 1, reasoningMask: ReasoningMask.GATED },
      });
      const saved = await client.saveCheckpoint({ path: "ckpt" });
      const savedMap = JSON.parse(
        await readFile(path.resolve(dir, "expanded", saved.path, "reasoning_token_map.json"), "utf8").catch(() =>
          readFile(path.resolve(dir, "expanded", saved.path, "adapter", "reasoning_token_map.json"), "utf8"),
        ),
      );
      expect(savedMap.sha256).toBe(MAP_SHA256);
      // A fresh learner with the same checkpoint_dir (checkpoint paths are relative to it).
      const fresh = await implementation.start(config(path.join(dir, "expanded"), REASONING));
      try {
        const restored = learnerClient(fresh.url);
        await restored.loadCheckpoint({ path: "ckpt" });
        const again = await restored.computeLogprobs({
          sequences: [{ promptTokenIds: PROMPT, completionTokenIds: MIXED }],
          reference: false,
          sampling: { temperature: 1, topK: 0, topP: 1, reasoningMask: ReasoningMask.GATED },
        });
        again.sequences[0]!.logprobs.forEach((lp, t) =>
          expect(Math.abs(lp - policy.sequences[0]!.logprobs[t]!)).toBeLessThanOrEqual(TOLERANCE),
        );
        // The reference is still the expanded base: training did not touch it.
        expect(trained.every((lp, t) => Math.abs(lp - (baseLogprobs[t]! - (t > 7 && t <= 26 ? Math.LN2 : 0))) <= TOLERANCE)).toBe(true);
      } finally {
        await fresh.stop();
      }
    });

    it("refuses a gated request without a reasoning vocabulary, naming reasoning_mask", async () => {
      const message = await failure(referenceLogprobs(base, STANDARD, ReasoningMask.GATED), Code.InvalidArgument);
      expect(message).toMatch(/reasoning_mask/);
    });
  });
}
