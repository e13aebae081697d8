// The LearnerService conformance suite's masked multi-turn batch (TrainingSample.completion_mask),
// run against every implementation (ts-learner-masked.spec.ts, torch-learner-masked.spec.ts): a
// trajectory of prompt, model turn, environment feedback, model turn is one sample whose
// environment tokens condition the model but are not trained on. Checked over gRPC against the
// independent reference (fixtures/masked-conformance.json, reference/make_masked_conformance_fixtures.py)
// for every algorithm case, with three invariants and the bad-mask errors.
import { readFile } from "node:fs/promises";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import {
  type BatchSample,
  type ConformanceCase,
  expectedAdapter,
  FIXTURES,
  readConformanceFixture,
  START_CHECKPOINT_NAME,
  startAdapter,
} from "./conformance-fixtures.js";
import { conformanceConfig } from "./learner-conformance.js";
import {
  caseStepStream,
  exportedAdapter,
  failure,
  type LearnerClient,
  learnerClient,
  trainStepStream,
  updateError,
} from "./learner-calls.js";
import type { LearnerUnderTest, RunningLearner } from "./learner-under-test.js";

interface MaskedSample extends BatchSample {
  /** Empty: every completion token is the model's. */
  completionMask: boolean[];
}

interface MaskedFixture {
  temperature: number;
  samples: Array<{
    group_id: string;
    prompt: number[];
    completion: number[];
    mask: boolean[];
    reward: number;
    truncated: boolean;
    sampler: number[];
  }>;
  batch: {
    reward_mean: number;
    completion_length_mean: number;
    completion_length_min: number;
    completion_length_max: number;
    zero_std_groups: string[];
  };
  cases: ConformanceCase[];
}

const masked = JSON.parse(await readFile(`${FIXTURES}masked-conformance.json`, "utf8")) as MaskedFixture;
const maskedSamples: MaskedSample[] = masked.samples.map((s, i) => ({
  sampleId: `m${i}`,
  groupId: s.group_id,
  promptTokenIds: s.prompt,
  completionTokenIds: s.completion,
  completionMask: s.mask,
  samplerLogprobs: s.sampler,
  reward: s.reward,
  truncated: s.truncated,
}));
const unmasked = await readConformanceFixture();
const METRIC_RELATIVE = 1e-4;
const UPDATE_RELATIVE = 1e-3;

/** Fresh copies (trainStepStream copies only the id arrays), changed by `change`. */
function variant<T extends BatchSample>(samples: readonly T[], change: (s: T[]) => void = () => {}): T[] {
  const copies = samples.map((s) => structuredClone(s));
  change(copies);
  return copies;
}

function caseNamed(cases: readonly ConformanceCase[], name: string): ConformanceCase {
  const found = cases.find((c) => c.name === name);
  if (!found) throw new Error(`the fixture has no case ${name}`);
  return found;
}

export function describeMaskedBatchConformance(learner: LearnerUnderTest): void {
  describe(`LearnerService conformance, masked multi-turn batch: ${learner.name} learner`, () => {
    let running: RunningLearner;
    let client: LearnerClient;
    let dir: string;

    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), `conformance-masked-${learner.name}-`));
      running = await learner.start(conformanceConfig(dir));
      client = learnerClient(running.url);
    }, 240_000);
    afterAll(async () => {
      await running?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    /** One TrainStep from the start checkpoint; its metrics and adapter must be the reference's. */
    async function expectReferenceStep(c: ConformanceCase, samples: readonly BatchSample[], lengths?: MaskedFixture["batch"]) {
      const loaded = await client.loadCheckpoint({ path: START_CHECKPOINT_NAME });
      expect([loaded.step, loaded.adapterVersion]).toEqual([0n, 0n]);
      const response = await client.trainStep(caseStepStream(c, samples));
      const metrics = {
        ...c.metrics,
        ...(lengths && {
          completion_length_mean: lengths.completion_length_mean,
          completion_length_min: lengths.completion_length_min,
          completion_length_max: lengths.completion_length_max,
        }),
      };
      for (const [key, want] of Object.entries(metrics)) {
        const got = response.metrics[key];
        expect(got, `${key} is reported`).toBeTypeOf("number");
        expect(Math.abs(got! - want), `${key}: ${got} vs the reference's ${want}`).toBeLessThanOrEqual(
          METRIC_RELATIVE * Math.abs(want) + 1e-7,
        );
      }
      if (c.mode === "rl" && lengths) expect(response.zeroStdGroups).toEqual(lengths.zero_std_groups);
      const start = await startAdapter(unmasked.fixture);
      const { tensors } = await exportedAdapter(client);
      for (const [key, want] of await expectedAdapter(c)) {
        const { error, scale } = updateError(start.get(key)!.data, tensors.get(key)!.data, want.data);
        expect(scale, `${key}: the reference update is zero`).toBeGreaterThan(0);
        expect(error, `${key}: update error relative to the update`).toBeLessThan(UPDATE_RELATIVE);
      }
    }

    it.each(masked.cases.map((c) => [c.name, c] as const))(
      "%s: the masked batch gives the reference's loss, metrics (lengths count the model's tokens) and adapter",
      async (_name, c) => {
        await expectReferenceStep(c, maskedSamples, masked.batch);
      },
    );

    it("the environment tokens' sampler logprobs change nothing (sequence-level rollout correction)", async () => {
      const spoiled = variant(maskedSamples, (s) => {
        for (const sample of s) {
          if (sample.samplerLogprobs.length === 0) continue;
          sample.samplerLogprobs = sample.samplerLogprobs.map((lp, t) => (sample.completionMask[t] === false ? -9.5 : lp));
        }
      });
      expect(spoiled.some((s, i) => s.samplerLogprobs.some((lp, t) => lp !== maskedSamples[i]!.samplerLogprobs[t]))).toBe(true);
      await expectReferenceStep(caseNamed(masked.cases, "grpo-rollout-sequence-mask"), spoiled, masked.batch);
    });

    it("environment tokens after the model's last token are inert: dropping them gives the same step", async () => {
      const trailing = variant(maskedSamples, (s) => {
        for (const sample of s) {
          const last = sample.completionMask.lastIndexOf(true);
          if (sample.completionMask.length === 0 || last === sample.completionMask.length - 1) continue;
          sample.completionTokenIds = sample.completionTokenIds.slice(0, last + 1);
          sample.completionMask = sample.completionMask.slice(0, last + 1);
          if (sample.samplerLogprobs.length > 0) sample.samplerLogprobs = sample.samplerLogprobs.slice(0, last + 1);
        }
      });
      expect(trailing.some((s, i) => s.completionTokenIds.length < maskedSamples[i]!.completionTokenIds.length)).toBe(true);
      await expectReferenceStep(caseNamed(masked.cases, "gspo"), trailing, masked.batch);
    });

    it("an all-true mask is no mask: the unmasked batch's reference step", async () => {
      const allTrue = variant(unmasked.samples, (s) => {
        for (const sample of s) Object.assign(sample, { completionMask: sample.completionTokenIds.map(() => true) });
      });
      await expectReferenceStep(caseNamed(unmasked.fixture.cases, "grpo-rollout-token-mask-min"), allTrue);
    });

    it.each([
      [
        "a completion_mask longer than the completion",
        (s: MaskedSample[]) => {
          s[4]!.completionMask = [...s[4]!.completionMask, true];
        },
        4,
        [/completion_mask has 7 values but samples\[4\]\.completion_token_ids has 6/, /one per completion token/, /or none/],
      ],
      [
        "a completion_mask with no model token",
        (s: MaskedSample[]) => {
          s[5]!.completionMask = [false, false, false];
        },
        5,
        [/completion_mask has no true value among its 3/, /at least one completion token must be the model's/],
      ],
    ] as const)(
      "refuses %s as INVALID_ARGUMENT naming the sample, field and lengths; nothing is applied",
      async (_what, spoil, index, patterns) => {
        await client.loadCheckpoint({ path: START_CHECKPOINT_NAME });
        const message = await failure(
          client.trainStep(trainStepStream({ algorithm: "grpo" }, variant(maskedSamples, spoil))),
          Code.InvalidArgument,
        );
        expect(message).toMatch(new RegExp(`^samples\\[${index}\\]\\.completion_mask .*\\(sample_id "m${index}"\\); `));
        for (const pattern of patterns) expect(message).toMatch(pattern);
        const status = await client.getStatus({});
        expect([status.step, status.adapterVersion]).toEqual([0n, 0n]);
      },
    );
  });
}
