// The calls bench/rpc/services.ts times, one real call per service and the two server
// streams: each its method, its request messages, and a check that the answer is the work
// done (a verdict, a reward, a training step, completions, a replayed run), so that a turn
// whose calls fail or come back empty is counted as failed, not as fast.
import { create, type DescMessage, type DescMethod, type Message, type MessageInitShape } from "@bufbuild/protobuf";
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import {
  GenerateRequestSchema,
  GenerateStreamRequestSchema,
  InferenceService,
  type GenerateResponse,
  type GenerateStreamResponse,
} from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { LearnerService, TrainingMode, TrainStepRequestSchema, type TrainStepResponse } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { OrchestratorService, RunState, WatchRunRequestSchema, type WatchRunResponse } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { RewardService, ScoreRequestSchema, type ScoreResponse } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { LeanVerifierService, Verdict, VerifyRequestSchema, type VerifyResponse } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { SeededRandom } from "@lean-grpo/random";
import { BENCH_REQUEST } from "../verifier/bench-request.js";

export interface ServiceCall {
  name: string;
  method: DescMethod;
  /** What the client sends: one message, or for a client stream all of them. */
  requests: Message[];
  /** Throws, saying what is wrong, unless the responses are the call's work. */
  check(responses: Message[]): void;
}

/** What the calls need to know of the servers' setup. */
export interface CallSetup {
  /** A finished run under both orchestrators' runs_dir, and how many steps it recorded. */
  runId: string;
  runSteps: number;
}

const GROUPS = 2;
const GROUP_SIZE = 4;
const PROMPT_TOKENS = 24;
const COMPLETION_TOKENS = 16;
/** arith-tiny's vocabulary below its special tokens. */
const PLAIN_TOKENS = 144;
const GENERATIONS = 4;
const MAX_TOKENS = 32;

/** A rollout group's request on the shipped model: a problem it was trained on the form of, seeded. */
const generation = () => ({
  prompt: { kind: { case: "chat" as const, value: { messages: [{ role: "user", content: "What is 27 + 45?" }] } } },
  n: GENERATIONS,
  sampling: { maxTokens: MAX_TOKENS, temperature: 1, seed: 7n },
});

export function serviceCalls(setup: CallSetup): ServiceCall[] {
  return [
    {
      name: "Verify",
      method: LeanVerifierService.method.verify,
      requests: [message(VerifyRequestSchema, BENCH_REQUEST)],
      check: one<VerifyResponse>((r) => expect(r.verdict === Verdict.PROVED, `verdict ${Verdict[r.verdict]}, expected PROVED`)),
    },
    {
      name: "Score",
      method: RewardService.method.score,
      requests: [
        message(ScoreRequestSchema, {
          theorem: { id: "bench-frac", informalStatement: "What is 3 divided by 4?", answer: "\\frac{3}{4}", kind: TaskKind.MATH_ANSWER },
          completion: { text: "Dividing 3 by 4 gives three quarters, so the answer is \\boxed{0.75}.", tokenIds: [1, 2, 3] },
        }),
      ],
      check: one<ScoreResponse>((r) => expect(r.result?.reward === 1, `reward ${r.result?.reward}, expected 1 (a right answer)`)),
    },
    {
      name: "TrainStep",
      method: LearnerService.method.trainStep,
      requests: trainStepRequests(),
      check: one<TrainStepResponse>((r) =>
        expect(r.step > 0n && Number.isFinite(r.metrics.loss), `step ${r.step}, loss ${r.metrics.loss}: expected a step taken`),
      ),
    },
    {
      name: "Generate",
      method: InferenceService.method.generate,
      requests: [message(GenerateRequestSchema, generation())],
      check: one<GenerateResponse>((r) =>
        expect(
          r.completions.length === GENERATIONS && r.completions.every((c) => c.tokenIds.length > 0),
          `${r.completions.length} completions, expected ${GENERATIONS} with tokens`,
        ),
      ),
    },
    {
      name: "GenerateStream",
      method: InferenceService.method.generateStream,
      requests: [message(GenerateStreamRequestSchema, generation())],
      check: (responses) => {
        const deltas = responses as GenerateStreamResponse[];
        const finished = new Set(deltas.filter((d) => d.finishReason !== 0).map((d) => d.index));
        expect(
          finished.size === GENERATIONS,
          `${finished.size} completions finished in ${deltas.length} messages, expected ${GENERATIONS}`,
        );
      },
    },
    {
      name: "WatchRun",
      method: OrchestratorService.method.watchRun,
      requests: [message(WatchRunRequestSchema, { runId: setup.runId, fromStart: true })],
      check: (responses) => {
        const events = responses as WatchRunResponse[];
        const steps = events.filter((e) => e.event.case === "step").length;
        const last = events.at(-1)?.event;
        const state = last?.case === "stateChange" ? RunState[last.value.state] : "none";
        expect(
          steps === setup.runSteps && state === "COMPLETED",
          `${steps} steps then state ${state}, expected ${setup.runSteps} then COMPLETED`,
        );
      },
    },
  ];
}

/** A header and a small batch: GROUPS groups of GROUP_SIZE samples, rewards 0 and 1 in each group. */
function trainStepRequests(): Message[] {
  const random = new SeededRandom(1);
  const tokens = (count: number) => Array.from({ length: count }, () => Math.floor(random.next() * PLAIN_TOKENS));
  const samples = Array.from({ length: GROUPS * GROUP_SIZE }, (_, i) => ({
    groupId: `g${Math.floor(i / GROUP_SIZE)}`,
    sampleId: `s${i}`,
    promptTokenIds: tokens(PROMPT_TOKENS),
    completionTokenIds: tokens(COMPLETION_TOKENS),
    reward: i % 2,
  }));
  return [
    message(TrainStepRequestSchema, { part: { case: "header", value: { algorithm: "grpo", mode: TrainingMode.RL } } }),
    ...samples.map((value) => message(TrainStepRequestSchema, { part: { case: "sample", value } })),
  ];
}

function message<T extends DescMessage>(schema: T, init: MessageInitShape<T>): Message {
  return create(schema, init) as Message;
}

function one<T>(check: (response: T) => void): (responses: Message[]) => void {
  return (responses) => {
    expect(responses.length === 1, `${responses.length} responses, expected 1`);
    check(responses[0] as T);
  };
}

function expect(condition: boolean, otherwise: string): void {
  if (!condition) throw new Error(otherwise);
}
