// One specification of bad input for both learners: each case is a request a learner must
// refuse, with the status code and the field path its message must name. Paths are those
// of the request message: `sequences[0].completion_token_ids[1]` in ComputeLogprobs; in
// TrainStep's stream, `header.<field>` for the header and `samples[i].<field>` for the i-th
// sample message. A refused TrainStep changes nothing. Run against the TypeScript learner
// (in-process) and the PyTorch learner (child process; skipped, saying why, without torch).
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { type BatchSample, readConformanceFixture, START_CHECKPOINT_NAME } from "./conformance-fixtures.js";
import { conformanceConfig } from "./learner-conformance.js";
import { failure, type LearnerClient, learnerClient, type StepHeader, trainStepStream } from "./learner-calls.js";
import type { LearnerUnderTest, RunningLearner } from "./learner-under-test.js";
import { torchUnavailable } from "./python-torch.js";
import { torchLearner } from "./torch-learner-under-test.js";
import { tsLearner } from "./ts-learner-under-test.js";

const { samples, modelDir } = await readConformanceFixture();
const model = JSON.parse(await readFile(path.join(modelDir, "config.json"), "utf8")) as {
  vocab_size: number;
  max_position_embeddings: number;
};
const VOCAB = model.vocab_size;
const CONTEXT = model.max_position_embeddings;

interface BadInput {
  /** What is wrong, as the test name says it. */
  what: string;
  code: Code;
  /** The field path the message must name. */
  path: string;
  /** Further words of the message: what was given or what is accepted. */
  says?: RegExp[];
  call(client: LearnerClient): Promise<unknown>;
}

/** One ComputeLogprobs sequence of the fixture batch, changed by `spoil`. */
function logprobsOf(client: LearnerClient, spoil: (sequences: { promptTokenIds: number[]; completionTokenIds: number[] }[]) => void) {
  const sequences = samples
    .slice(0, 2)
    .map((s) => ({ promptTokenIds: [...s.promptTokenIds], completionTokenIds: [...s.completionTokenIds] }));
  spoil(sequences);
  return client.computeLogprobs({ sequences });
}

function step(client: LearnerClient, spoil?: (s: BatchSample[]) => void, header: Partial<StepHeader> = {}) {
  return client.trainStep(trainStepStream({ algorithm: "grpo", ...header }, samples, spoil));
}

const CASES: BadInput[] = [
  // ComputeLogprobs
  {
    what: "ComputeLogprobs with no sequences",
    code: Code.InvalidArgument,
    path: "sequences",
    says: [/empty/],
    call: (c) => c.computeLogprobs({ sequences: [] }),
  },
  {
    what: "ComputeLogprobs with an out-of-vocabulary completion id",
    code: Code.InvalidArgument,
    path: "sequences[0].completion_token_ids[1]",
    says: [new RegExp(`\\b${VOCAB + 3}\\b`), new RegExp(`\\[0, ${VOCAB}\\)`)],
    call: (c) => logprobsOf(c, (s) => (s[0]!.completionTokenIds[1] = VOCAB + 3)),
  },
  {
    what: "ComputeLogprobs with an out-of-vocabulary prompt id in the second sequence",
    code: Code.InvalidArgument,
    path: "sequences[1].prompt_token_ids[2]",
    says: [new RegExp(`\\[0, ${VOCAB}\\)`)],
    call: (c) => logprobsOf(c, (s) => (s[1]!.promptTokenIds[2] = VOCAB)),
  },
  {
    what: "ComputeLogprobs with an empty prompt",
    code: Code.InvalidArgument,
    path: "sequences[1].prompt_token_ids",
    says: [/empty/],
    call: (c) => logprobsOf(c, (s) => (s[1]!.promptTokenIds = [])),
  },
  {
    what: "ComputeLogprobs with an empty completion",
    code: Code.InvalidArgument,
    path: "sequences[0].completion_token_ids",
    says: [/empty/],
    call: (c) => logprobsOf(c, (s) => (s[0]!.completionTokenIds = [])),
  },
  {
    what: "ComputeLogprobs with a sequence longer than the model's context",
    code: Code.InvalidArgument,
    path: "sequences[1]",
    says: [new RegExp(`\\b${CONTEXT + 1} tokens`), new RegExp(`max_position_embeddings\\)? is ${CONTEXT}`)],
    call: (c) => logprobsOf(c, (s) => (s[1]!.completionTokenIds = new Array(CONTEXT + 1 - s[1]!.promptTokenIds.length).fill(1))),
  },
  // TrainStep: the stream
  {
    what: "TrainStep whose first message is a sample (no header)",
    code: Code.InvalidArgument,
    path: "header",
    says: [/first/],
    call: (c) =>
      c.trainStep(
        (async function* () {
          for await (const message of trainStepStream({ algorithm: "grpo" }, samples)) if (message.part.case === "sample") yield message;
        })(),
      ),
  },
  {
    what: "TrainStep with fewer samples than header.expected_samples",
    code: Code.InvalidArgument,
    path: "header.expected_samples",
    says: [/\b10\b/, /\b9\b/],
    call: (c) => step(c, undefined, { expectedSamples: 10 }),
  },
  // TrainStep: the header
  {
    what: "TrainStep with an unknown algorithm",
    code: Code.InvalidArgument,
    path: "header.algorithm",
    says: [/"ppo"/, /grpo/, /dapo/],
    call: (c) => step(c, undefined, { algorithm: "ppo" }),
  },
  {
    what: "TrainStep with an unknown algorithm_config key",
    code: Code.InvalidArgument,
    path: "header.algorithm_config.target_group_size",
    says: [/beta/],
    call: (c) => step(c, undefined, { algorithm: "gspo", algorithmConfig: { target_group_size: 8 } }),
  },
  {
    what: "TrainStep with an algorithm_config value of the wrong type",
    code: Code.InvalidArgument,
    path: "header.algorithm_config.beta",
    says: [/"high"/],
    call: (c) => step(c, undefined, { algorithmConfig: { beta: "high" } }),
  },
  {
    what: "TrainStep whose groups do not have header.num_generations samples",
    code: Code.InvalidArgument,
    path: "header.num_generations",
    says: [/"g0"/, /\b4\b/],
    call: (c) => step(c, undefined, { numGenerations: 3 }),
  },
  {
    what: "TrainStep with header.step out of order",
    code: Code.FailedPrecondition,
    path: "header.step",
    says: [/\b9\b/, /\b1\b/],
    call: (c) => step(c, undefined, { step: 9n }),
  },
  // TrainStep: the samples
  {
    what: "TrainStep with an out-of-vocabulary completion id",
    code: Code.InvalidArgument,
    path: "samples[4].completion_token_ids[1]",
    says: [/"s4"/, new RegExp(`\\[0, ${VOCAB}\\)`)],
    call: (c) => step(c, (s) => (s[4]!.completionTokenIds[1] = VOCAB + 7)),
  },
  {
    what: "TrainStep with an out-of-vocabulary prompt id",
    code: Code.InvalidArgument,
    path: "samples[0].prompt_token_ids[0]",
    says: [/"s0"/, new RegExp(`\\[0, ${VOCAB}\\)`)],
    call: (c) => step(c, (s) => (s[0]!.promptTokenIds[0] = VOCAB)),
  },
  {
    what: "TrainStep with an empty completion",
    code: Code.InvalidArgument,
    path: "samples[2].completion_token_ids",
    says: [/"s2"/, /empty/],
    call: (c) => step(c, (s) => (s[2]!.completionTokenIds = [])),
  },
  {
    what: "TrainStep with a sample longer than the model's context",
    code: Code.InvalidArgument,
    path: "samples[1]",
    says: [/"s1"/, new RegExp(`max_position_embeddings\\)? is ${CONTEXT}`)],
    call: (c) => step(c, (s) => (s[1]!.completionTokenIds = new Array(CONTEXT).fill(1))),
  },
  {
    what: "TrainStep with fewer sampler_logprobs than completion tokens",
    code: Code.InvalidArgument,
    path: "samples[2].sampler_logprobs",
    says: [/"s2"/, /\b6\b/, /\b7\b/],
    call: (c) => step(c, (s) => (s[2]!.samplerLogprobs = s[2]!.samplerLogprobs.slice(0, 6))),
  },
  {
    what: "TrainStep with a positive sampler logprob",
    code: Code.InvalidArgument,
    path: "samples[5].sampler_logprobs[1]",
    says: [/"s5"/, /\b0\.5\b/, /<= 0/],
    // A new array: trainStepStream copies the id lists only, not sampler_logprobs.
    call: (c) => step(c, (s) => (s[5]!.samplerLogprobs = s[5]!.samplerLogprobs.map((lp, i) => (i === 1 ? 0.5 : lp)))),
  },
  {
    what: "TrainStep with a NaN reward",
    code: Code.InvalidArgument,
    path: "samples[5].reward",
    says: [/"s5"/, /NaN/, /finite/],
    call: (c) => step(c, (s) => (s[5]!.reward = Number.NaN)),
  },
  {
    what: "TrainStep with an infinite reward",
    code: Code.InvalidArgument,
    path: "samples[7].reward",
    says: [/"s7"/, /Infinity/, /finite/],
    call: (c) => step(c, (s) => (s[7]!.reward = Number.NEGATIVE_INFINITY)),
  },
  {
    what: "TrainStep with a completion_mask of another length than the completion",
    code: Code.InvalidArgument,
    path: "samples[4].completion_mask",
    says: [/"s4"/, /\b2 values\b/, /\b3\b/, /one per completion token/],
    call: (c) => step(c, (s) => Object.assign(s[4]!, { completionMask: [true, false] })),
  },
  {
    what: "TrainStep with a completion_mask that marks no token the model's",
    code: Code.InvalidArgument,
    path: "samples[5].completion_mask",
    says: [/"s5"/, /no true value/],
    call: (c) => step(c, (s) => Object.assign(s[5]!, { completionMask: [false, false, false, false] })),
  },
  {
    what: "TrainStep with an empty group_id",
    code: Code.InvalidArgument,
    path: "samples[3].group_id",
    says: [/"s3"/, /empty/],
    call: (c) => step(c, (s) => (s[3]!.groupId = "")),
  },
];

/** The path as a whole: not the start of a longer path (samples[5].reward_x, samples[1].group_id). */
function namesPath(message: string, fieldPath: string): boolean {
  const escaped = fieldPath.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\w.\\]])${escaped}(?![\\w.\\[])`).test(message);
}

function describeBadInput(learner: LearnerUnderTest): void {
  describe(`bad input to the ${learner.name} learner`, () => {
    let running: RunningLearner;
    let client: LearnerClient;
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), `bad-input-${learner.name}-`));
      running = await learner.start(conformanceConfig(dir));
      client = learnerClient(running.url);
      const loaded = await client.loadCheckpoint({ path: START_CHECKPOINT_NAME });
      expect([loaded.step, loaded.adapterVersion]).toEqual([0n, 0n]);
    }, 240_000);
    afterAll(async () => {
      await running?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it.each(CASES.map((c) => [c.what, c] as const))("%s", async (_what, bad) => {
      const message = await failure(bad.call(client), bad.code);
      expect(namesPath(message, bad.path), `"${message}" names ${bad.path}`).toBe(true);
      for (const words of bad.says ?? []) expect(message).toMatch(words);
      // Nothing of a refused call is applied.
      const status = await client.getStatus({});
      expect([status.step, status.adapterVersion]).toEqual([0n, 0n]);
    });
  });
}

describeBadInput(tsLearner);
const unavailable = torchUnavailable();
if (unavailable) console.warn(`skipping the PyTorch learner's bad-input cases: ${unavailable}`);
describe.skipIf(unavailable !== null)("PyTorch learner (services/learner-torch)", () => describeBadInput(torchLearner()));
