// Repair trajectories of one problem (training.mode "repair", and the held-out evaluation's
// repair turns): turn 1 Generates n whole proofs (or math answers) and ScoreGroup scores
// them, exactly as whole-proof mode does. Each trajectory whose attempt is not solved gets
// the checker's feedback (repair-feedback.ts) as an environment turn of the chat template and
// writes a new attempt, continuing its own token ids (repair-turn-tokens.ts), up to max_turns;
// the new attempts are scored through the same ScoreGroup verdict path. One span per turn.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Completion, SamplingParamsSchema, Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { RewardResult } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import type { MeshClients } from "../mesh-clients.js";
import { buildPrompt, promptText } from "./prompts.js";
import { feedbackText, fillFeedback } from "./repair-feedback.js";
import { type EnvironmentTurn, EnvironmentTurnTokenizer } from "./repair-turn-tokens.js";
import type { RunConfig } from "../config/run-config.js";
import { scoreGroup } from "./score-group.js";
import { turnSeed } from "./tactic-rollout.js";
import type { Attributes, Span } from "@opentelemetry/api";
import { inSpan } from "../outputs/tracing.js";

export interface RepairAttempt {
  /** The ids the model was given before this attempt (turn 1: the prompt; later: all the trajectory so far). */
  contextIds: number[];
  completion: Completion;
  result: RewardResult;
  /** The environment turn that followed this attempt (absent after the last one). */
  feedback?: EnvironmentTurn & { message: string };
}

export interface RepairTrajectory {
  index: number;
  attempts: RepairAttempt[];
  /** The last attempt's verdict. */
  solved: boolean;
}

export interface RepairRollout {
  /** Turn 1's prompt ids. */
  promptTokenIds: number[];
  trajectories: RepairTrajectory[];
  generateS: number;
  /** ScoreGroup wall time, all turns. */
  scoreS: number;
  /** Inside ScoreGroup, the longest verification of each turn, summed over turns. */
  verifyS: number;
}

export interface RepairRequest {
  clients: Pick<MeshClients, "inference" | "reward" | "withRetry">;
  config: RunConfig;
  theorem: Theorem;
  chatPrompts: boolean;
  adapter: string;
  n: number;
  maxTurns: number;
  sampling: MessageInitShape<typeof SamplingParamsSchema>;
  /** Seed of turn 1's Generate; later turns derive theirs per trajectory (turnSeed). */
  seed: number;
  requestId: string;
  groupId: string;
  /** Span attributes (run, step, theorem). */
  attributes: Attributes;
  signal?: AbortSignal;
}

export async function rollRepairTrajectories(request: RepairRequest): Promise<RepairRollout> {
  const { clients, theorem, signal } = request;
  const tokenizer = new EnvironmentTurnTokenizer(clients, request.chatPrompts, signal);
  const problem = promptText(theorem, request.config.prompt);
  const timing = { generateS: 0, scoreS: 0, verifyS: 0 };
  const timed = async <T>(phase: "generateS", work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      timing[phase] += (performance.now() - started) / 1000;
    }
  };
  const generate = (prompt: Parameters<typeof clients.inference.generate>[0]["prompt"], n: number, seed: number, id: string) =>
    timed("generateS", () =>
      clients.withRetry(
        "inference",
        () =>
          clients.inference.generate(
            { prompt, n, adapter: request.adapter, requestId: id, sampling: { ...request.sampling, seed: BigInt(seed) } },
            { signal },
          ),
        signal,
      ),
    );
  const score = async (completions: Completion[], turn: number): Promise<RewardResult[]> => {
    const groupId = turn === 0 ? request.groupId : `${request.groupId}/turn${turn + 1}`;
    const scored = await scoreGroup({ clients, config: request.config, signal }, { theorem, completions, groupId }, request.attributes);
    timing.scoreS += scored.seconds;
    timing.verifyS += scored.verifyS;
    return scored.scored.results;
  };
  const turnSpan = <T>(turn: number, open: number, work: (span: Span) => Promise<T>) =>
    inSpan(
      "rollout.turn",
      { ...request.attributes, "leangrpo.group_id": request.groupId, "leangrpo.turn": turn + 1, "leangrpo.open_trajectories": open },
      work,
    );

  // Turn 1: the whole-proof prompt, n attempts in one call.
  const first = await turnSpan(0, request.n, async (span) => {
    const generated = await generate(
      buildPrompt(theorem, request.config.prompt, request.chatPrompts),
      request.n,
      request.seed,
      request.requestId,
    );
    const results = await score(generated.completions, 0);
    span.setAttribute("leangrpo.solved", results.filter((r) => r.solved).length);
    return { generated, results };
  });
  const promptTokenIds = first.generated.promptTokenIds;
  const trajectories: RepairTrajectory[] = first.generated.completions.map((completion, index) => {
    const result = first.results[index]!;
    return { index, attempts: [{ contextIds: promptTokenIds, completion, result }], solved: result.solved };
  });

  for (let turn = 1; turn < request.maxTurns; turn++) {
    const open = trajectories.filter((t) => !t.solved);
    if (open.length === 0) break;
    await turnSpan(turn, open.length, async (span) => {
      const completions = await Promise.all(
        open.map(async (trajectory) => {
          const last = trajectory.attempts.at(-1)!;
          const feedback = await boundedFeedback(tokenizer, request, problem, last);
          last.feedback = feedback;
          const contextIds = [...last.contextIds, ...last.completion.tokenIds, ...feedback.ids];
          const generated = await generate(
            { kind: { case: "tokenIds", value: { ids: contextIds } } },
            1,
            turnSeed(request.seed, trajectory.index, turn),
            `${request.requestId}/t${trajectory.index}/turn${turn + 1}`,
          );
          const completion = generated.completions[0];
          if (!completion) throw new Error(`Generate returned no completion for ${request.requestId}/t${trajectory.index}/turn${turn + 1}`);
          return { trajectory, contextIds, completion };
        }),
      );
      // The open trajectories' new attempts are scored together, as the turn's group.
      const results = await score(
        completions.map((c) => c.completion),
        turn,
      );
      completions.forEach(({ trajectory, contextIds, completion }, i) => {
        const result = results[i]!;
        trajectory.attempts.push({ contextIds, completion, result });
        trajectory.solved = result.solved;
      });
      span.setAttribute("leangrpo.solved", results.filter((r) => r.solved).length);
    });
  }
  return { promptTokenIds, trajectories, ...timing };
}

/** The feedback turn after `attempt`, its text cut until the turn fits rollout.max_feedback_tokens. */
async function boundedFeedback(
  tokenizer: EnvironmentTurnTokenizer,
  request: RepairRequest,
  problem: string,
  attempt: RepairAttempt,
): Promise<EnvironmentTurn & { message: string }> {
  const bound = request.config.rollout.max_feedback_tokens;
  let message = feedbackText(request.theorem, attempt.result);
  for (let tries = 0; ; tries++) {
    const turn = await tokenizer.turn(
      problem,
      fillFeedback(request.config.prompt.feedback_template, message, problem),
      attempt.completion.tokenIds,
    );
    if (turn.ids.length <= bound) return { ...turn, message };
    if (tries >= 6 || message.length <= 1) {
      throw new Error(
        `the feedback turn is ${turn.ids.length} tokens even with its message cut to ${message.length} characters; ` +
          `rollout.max_feedback_tokens (${bound}) must leave room for prompt.feedback_template and the chat markers`,
      );
    }
    // Cut in proportion to the excess (characters per token vary), keeping the first errors.
    const keep = Math.max(1, Math.floor(message.length * Math.min(0.9, bound / turn.ids.length)) - 1);
    message = `${message.slice(0, keep)}…`;
  }
}
