// One group in tactic mode: `num_generations` trajectories of one theorem, run
// concurrently. A trajectory opens a proof (StartProof), then up to max_proof_steps
// times Generates one tactic from the current goals and the tactics so far and runs
// it (ApplyTactic), until the goals are closed, a tactic fails or the steps run out;
// then EndProof. ApplyTactic's "completed" is not the verdict (tactic mode has had
// false positives): the tactics are assembled into a `by` block and the group is
// scored through ScoreGroup exactly as whole-proof completions are, so Verify in
// command mode and the configured reward decide.
//
// Training samples: one per generated turn, with that turn's own prompt ids and the
// trajectory's reward, all under the group's id. The learner normalises rewards over a
// group's samples, so every turn of a trajectory shares the trajectory's advantage (a
// longer trajectory weighs a little more in the group's mean); the header sends
// num_generations = 0 since groups no longer have a fixed size.
//
// A session lives in the verifier replica that answered StartProof, so its ApplyTactic and
// EndProof calls are pinned there (ReplicaAffinity). When that replica is lost (it cannot be
// reached, or answers ABORTED: it restarted and never held the session) the mesh failed, not
// the model: the trajectory starts again from StartProof on a replica that answers, and after
// MAX_SESSION_RESTARTS the step fails naming the cause.
import { create } from "@bufbuild/protobuf";
import { reasoningMaskOf } from "../config/reasoning-mask.js";
import { Code, ConnectError } from "@connectrpc/connect";
import { CompletionSchema, FinishReason, type Completion, type Prompt, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { TacticStatus } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { createLogger, isReplicaUnreachable, ReplicaAffinity } from "@lean-grpo/kit";
import { countReplayRefusals } from "../outputs/replay-refusals.js";
import type { RolloutContext, RolloutGroup, RolloutSample } from "./rollout.js";
import { promptText } from "./prompts.js";
import { buildTacticPrompt, proofBlock, tacticOf } from "./tactic-prompt.js";
import { scoreGroup } from "./score-group.js";
import { inSpan, recordedSpan, runAttributes } from "../outputs/tracing.js";

const log = createLogger("orchestrator");

/** How a trajectory ended. */
export type TrajectoryEnd = "completed" | "tactic_error" | "empty_tactic" | "max_steps" | "not_started";

export interface Turn {
  /** The prompt as sent to Generate: what the kept samples record for the turn. */
  prompt: Prompt;
  promptTokenIds: number[];
  completion: Completion;
  /** ApplyTactic's answer; absent when the tactic was not applied (empty, or it broke the session). */
  status?: TacticStatus;
}

export interface Trajectory {
  index: number;
  turns: Turn[];
  /** The tactics ApplyTactic accepted, in order: the proof that is re-checked. */
  tactics: string[];
  /** ApplyTactic calls, the failed one included. */
  proofSteps: number;
  end: TrajectoryEnd;
  generateS: number;
  /** StartProof, ApplyTactic and EndProof. */
  leanS: number;
  /** Times the trajectory started again because its session's verifier replica was lost. */
  sessionRestarts: number;
}

/** Fresh starts of one trajectory after lost replicas before its step fails. */
export const MAX_SESSION_RESTARTS = 3;

/** The sampler seed of one turn: a function of the group's seed, the trajectory and the turn. */
export function turnSeed(groupSeed: number, trajectory: number, turn: number): number {
  return (Math.imul(groupSeed ^ 0x9e3779b9, 0x85ebca6b) + trajectory * 1_000_003 + turn * 4_099) >>> 0;
}

/**
 * Verifier answers that mean the model's tactic broke its session, not the mesh: it ran past
 * the time limit or crashed the REPL (the worker restarts and the session is lost), or the
 * session is gone. (A tactic Lean refuses, or one with a banned token, is a TacticStatus.ERROR answer.)
 */
const TACTIC_FAILURES = new Set([Code.DeadlineExceeded, Code.FailedPrecondition, Code.NotFound]);
/**
 * A session lost with its replica: the pinned call could not reach it, or the replica answered
 * ABORTED (another verifier process holds the session: it restarted since StartProof).
 */
function sessionReplicaLost(error: unknown, signal: AbortSignal | undefined): error is ConnectError {
  if (signal?.aborted || !(error instanceof ConnectError)) return false;
  return error.code === Code.Aborted || isReplicaUnreachable(error);
}

/** The trajectory's session went with its replica: start it again. */
class SessionReplicaLost extends Error {
  constructor(readonly lost: ConnectError) {
    super(lost.rawMessage);
  }
}

/** StartProof answers that mean this theorem cannot be opened (its statement does not elaborate in time). */
const START_FAILURES = new Set([Code.InvalidArgument, Code.DeadlineExceeded]);

function failedWith(error: unknown, codes: ReadonlySet<Code>, signal: AbortSignal | undefined): boolean {
  return !signal?.aborted && error instanceof ConnectError && codes.has(error.code);
}

/** The proof a trajectory assembled, as a completion to score: its tactics under `by`, all its tokens. */
export function proofCompletion(trajectory: Trajectory, adapter: string): Completion {
  const completions = trajectory.turns.map((t) => t.completion);
  return create(CompletionSchema, {
    index: trajectory.index,
    text: trajectory.tactics.length > 0 ? `by\n${proofBlock(trajectory.tactics).trimEnd()}` : "",
    tokenIds: completions.flatMap((c) => c.tokenIds),
    logprobs: completions.flatMap((c) => c.logprobs),
    finishReason: FinishReason.STOP,
    adapter,
    policyVersion: completions[0]?.policyVersion ?? 0n,
  });
}

async function runTrajectory(
  ctx: RolloutContext,
  theorem: Theorem,
  groupId: string,
  groupSeed: number,
  index: number,
): Promise<Trajectory> {
  const verifierClient = ctx.clients.verifier;
  if (!verifierClient) throw new Error("tactic mode needs the verifier: set services.verifier in the orchestrator's config");
  const verifier = verifierClient;
  const training = ctx.config.training;
  const attributes = { ...runAttributes(ctx.runId, ctx.step, theorem.id), "leangrpo.group_id": groupId, "leangrpo.trajectory": index };
  const trajectory: Trajectory = {
    index,
    turns: [],
    tactics: [],
    proofSteps: 0,
    end: "max_steps",
    generateS: 0,
    leanS: 0,
    sessionRestarts: 0,
  };
  const timed = async <T>(phase: "generateS" | "leanS", work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      trajectory[phase] += (performance.now() - started) / 1000;
    }
  };

  return inSpan("rollout.trajectory", attributes, async (span) => {
    for (;;) {
      try {
        await attempt(new ReplicaAffinity());
        break;
      } catch (error) {
        if (!(error instanceof SessionReplicaLost)) throw error;
        if (trajectory.sessionRestarts >= MAX_SESSION_RESTARTS) {
          throw new ConnectError(
            `tactic trajectory ${groupId}/t${index} of theorem ${theorem.id} lost its verifier session ${MAX_SESSION_RESTARTS + 1} times ` +
              `(last: ${error.lost.rawMessage}); the verifier replicas keep failing`,
            Code.Unavailable,
          );
        }
        trajectory.sessionRestarts++;
        log.warn(
          { run: ctx.runId, theorem: theorem.id, trajectory: index, reason: error.lost.rawMessage },
          "the verifier replica holding a tactic session was lost; the trajectory starts again from StartProof",
        );
        // What the lost session produced is dropped: the trajectory is run again whole.
        Object.assign(trajectory, { turns: [], tactics: [], proofSteps: 0, end: "max_steps" });
      }
    }
    span.setAttributes({
      "leangrpo.trajectory_end": trajectory.end,
      "leangrpo.proof_steps": trajectory.proofSteps,
      "leangrpo.session_restarts": trajectory.sessionRestarts,
    });
    return trajectory;
  });

  async function attempt(affinity: ReplicaAffinity): Promise<void> {
    const start = await timed("leanS", () =>
      inSpan("rollout.start_proof", attributes, () =>
        ctx.clients.withRetry("verifier", () => verifier.startProof({ theorem }, affinity.open({ signal: ctx.signal })), ctx.signal),
      ),
    ).catch((error: unknown) => {
      if (!failedWith(error, START_FAILURES, ctx.signal)) throw error;
      if (index === 0)
        log.warn(
          { run: ctx.runId, theorem: theorem.id, reason: (error as ConnectError).rawMessage },
          "StartProof refused the theorem; its trajectories score an empty proof",
        );
      return undefined;
    });
    if (!start) {
      trajectory.end = "not_started";
      return;
    }
    try {
      let proofState = start.proofState;
      let goals = start.goals;
      for (let turn = 0; turn < training.max_proof_steps; turn++) {
        const turnAttributes = { ...attributes, "leangrpo.turn": turn };
        const prompt = buildTacticPrompt(theorem, ctx.config.prompt, ctx.chatPrompts, trajectory.tactics, goals);
        const generated = await timed("generateS", () =>
          inSpan("rollout.generate", turnAttributes, () =>
            ctx.clients.withRetry(
              "inference",
              () =>
                ctx.clients.inference.generate(
                  {
                    prompt,
                    n: 1,
                    adapter: ctx.adapter,
                    requestId: `${ctx.runId}/${groupId}/t${index}/${turn}`,
                    // One tactic per turn: the line ends it.
                    sampling: {
                      maxTokens: training.max_tokens,
                      temperature: training.temperature,
                      topP: training.top_p,
                      topK: training.top_k,
                      reasoningMask: reasoningMaskOf(ctx.config),
                      seed: BigInt(turnSeed(groupSeed, index, turn)),
                      stop: ["\n"],
                    },
                  },
                  { signal: ctx.signal },
                ),
              ctx.signal,
            ),
          ),
        );
        const completion = generated.completions[0];
        if (!completion) throw new Error(`Generate returned no completion for ${ctx.runId}/${groupId}/t${index}/${turn}`);
        const current: Turn = { prompt, promptTokenIds: generated.promptTokenIds, completion };
        trajectory.turns.push(current);
        const tactic = tacticOf(completion.text);
        if (tactic === "") {
          trajectory.end = "empty_tactic";
          break;
        }
        trajectory.proofSteps++;
        let applied;
        try {
          applied = await timed("leanS", () =>
            inSpan("rollout.apply_tactic", turnAttributes, async (tacticSpan) => {
              // Pinned, not retried: no other replica holds the session.
              const response = await verifier.applyTactic(
                { sessionId: start.sessionId, proofState, tactic },
                affinity.pinned({ signal: ctx.signal }),
              );
              tacticSpan.setAttribute("leangrpo.tactic_status", TacticStatus[response.status]);
              return response;
            }),
          );
        } catch (error) {
          if (sessionReplicaLost(error, ctx.signal)) throw new SessionReplicaLost(error);
          if (!failedWith(error, TACTIC_FAILURES, ctx.signal)) throw error;
          applied = undefined;
        }
        if (applied) current.status = applied.status;
        if (!applied || applied.status === TacticStatus.ERROR || applied.proofState === undefined) {
          trajectory.end = "tactic_error";
          break;
        }
        trajectory.tactics.push(tactic);
        proofState = applied.proofState;
        goals = applied.goals;
        if (applied.status === TacticStatus.COMPLETED) {
          trajectory.end = "completed";
          break;
        }
      }
    } finally {
      // Frees the session's proof states even when the step is being cancelled: not on ctx.signal.
      await timed("leanS", () => verifier.endProof({ sessionId: start.sessionId }, affinity.pinned({ timeoutMs: 10_000 }))).catch(() => {});
    }
  }
}

export function tacticRolloutGroup(ctx: RolloutContext, theorem: Theorem, groupId: string, seed: number): Promise<RolloutGroup> {
  const attributes = runAttributes(ctx.runId, ctx.step, theorem.id);
  return inSpan("rollout.group", { ...attributes, "leangrpo.group_id": groupId, "leangrpo.mode": "tactic" }, async (span) => {
    const startedAt = Date.now();
    const trajectories = await Promise.all(
      Array.from({ length: ctx.config.training.num_generations }, (_, i) => runTrajectory(ctx, theorem, groupId, seed, i)),
    );
    const completions = trajectories.map((t) => proofCompletion(t, ctx.adapter));
    // The assembled proofs are re-checked whole by the reward service (recheckS of its time).
    const { scored, seconds: scoreGroupS, verifyS: recheckS } = await scoreGroup(ctx, { theorem, completions, groupId }, attributes);
    const rewards = scored.results.map((r) => r.reward);
    const solved = scored.results.map((r) => r.solved);
    trajectories.forEach((t, i) => {
      recordedSpan(
        "rollout.completion",
        {
          ...attributes,
          "leangrpo.completion_index": i,
          "leangrpo.reward": rewards[i] ?? 0,
          "leangrpo.solved": solved[i] ?? false,
          "leangrpo.proof_steps": t.proofSteps,
          "leangrpo.trajectory_end": t.end,
        },
        startedAt,
        Date.now(),
      );
    });
    span.setAttributes({ "leangrpo.reward_mean": scored.rewardMean, "leangrpo.pass_rate": scored.passRate });
    // A turn that sampled no token has nothing to train on (the learner refuses empty completions).
    const samples: RolloutSample[] = trajectories.flatMap((t, i) =>
      t.turns
        .map((turn, n) => ({
          sampleId: `${groupId}/${t.index}.${n}`,
          promptTokenIds: turn.promptTokenIds,
          completion: turn.completion,
          reward: rewards[i] ?? 0,
        }))
        .filter((sample) => sample.completion.tokenIds.length > 0),
    );
    const mean = (f: (t: Trajectory) => number) => trajectories.reduce((a, t) => a + f(t), 0) / Math.max(1, trajectories.length);
    return {
      groupId,
      theorem,
      samples,
      rewards,
      solved,
      replayRefusals: countReplayRefusals(scored.results),
      rewardStd: scored.rewardStd,
      // To read: the proofs the trajectories assembled, and each turn with the prompt it was sampled from.
      readable: {
        groupId,
        theoremId: theorem.id,
        prompt: promptText(theorem, ctx.config.prompt),
        ...(trajectories[0]?.turns[0] ? { sampled: trajectories[0].turns[0].prompt } : {}),
        completions,
        results: scored.results,
        turns: trajectories.map((t) =>
          t.turns.map((turn) => ({
            completion: turn.completion,
            prompt: turn.prompt,
            ...(turn.status !== undefined ? { tacticStatus: TacticStatus[turn.status] ?? "UNSPECIFIED" } : {}),
          })),
        ),
      },
      proofSteps: trajectories.map((t) => t.proofSteps),
      unstarted: trajectories.filter((t) => t.end === "not_started").length,
      sessionRestarts: trajectories.reduce((n, t) => n + t.sessionRestarts, 0),
      // Trajectories run concurrently: each phase's share of one trajectory, on average.
      generateS: mean((t) => t.generateS),
      verifyS: mean((t) => t.leanS) + recheckS,
      scoreS: scoreGroupS - recheckS,
    };
  });
}
