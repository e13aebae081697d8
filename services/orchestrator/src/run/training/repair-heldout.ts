// Held-out evaluation with repair turns (eval.max_turns > 1): one greedy repair trajectory
// per problem (repair-trajectories.ts), so the accuracy after the first attempt, which is the
// whole-mode evaluation's, and after the last attempt come from the same run of the policy.
// For math problems the first attempts' answer forms are reported as evaluate.ts reports them.
import { FinishReason, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { answerFormStats, type FormCounts, formCounts } from "../../eval/answer-form.js";
import { evalTurns, HELDOUT_CONCURRENCY, type HeldoutContext } from "./heldout-context.js";
import { isMathTask } from "../rollout/repair-feedback.js";
import { rollRepairTrajectories, type RepairTrajectory } from "../rollout/repair-trajectories.js";
import type { EvalRecord } from "../outputs/eval-record.js";

export async function repairHeldoutAccuracy(ctx: HeldoutContext, step: number, adapter: string): Promise<EvalRecord> {
  const started = performance.now();
  const maxTurns = evalTurns(ctx.config);
  const trajectories: RepairTrajectory[] = new Array(ctx.theorems.length);
  const forms: FormCounts[] = [];
  let next = 0;
  const evaluateOne = async (theorem: Theorem, index: number) => {
    const rollout = await rollRepairTrajectories({
      clients: ctx.clients,
      config: ctx.config,
      theorem,
      chatPrompts: ctx.chatPrompts,
      adapter,
      n: 1,
      maxTurns,
      sampling: { maxTokens: ctx.config.training.max_tokens, temperature: 0 },
      seed: (ctx.config.training.seed * 1_000_003 + index) >>> 0,
      requestId: `eval/${index}`,
      groupId: `eval-${index}`,
      attributes: { "leangrpo.step": step, "leangrpo.theorem_id": theorem.id },
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    const trajectory = rollout.trajectories[0]!;
    trajectories[index] = trajectory;
    const first = trajectory.attempts[0]!;
    if (isMathTask(theorem)) {
      const sample = {
        text: first.completion.text,
        tokens: first.completion.tokenIds.length,
        truncated: first.completion.finishReason === FinishReason.LENGTH,
        solved: first.result.solved,
      };
      forms.push(formCounts([sample], theorem.informalStatement, theorem.answer));
    }
  };
  const worker = async () => {
    for (let index = next++; index < ctx.theorems.length; index = next++) await evaluateOne(ctx.theorems[index]!, index);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(HELDOUT_CONCURRENCY, ctx.theorems.length)) }, worker));

  const problems = trajectories.length;
  const firstRight = trajectories.filter((t) => t.attempts[0]!.result.solved).length;
  const lastRight = trajectories.filter((t) => t.solved).length;
  const secondAttempts = trajectories.filter((t) => t.attempts.length > 1).length;
  const formStats = answerFormStats(forms);
  return {
    step,
    heldout_accuracy: problems > 0 ? firstRight / problems : 0,
    solved: firstRight,
    problems,
    seconds: (performance.now() - started) / 1000,
    ...(formStats ? { forms: formStats } : {}),
    repair: {
      max_turns: maxTurns,
      accuracy_turn1: problems > 0 ? firstRight / problems : 0,
      accuracy_last_turn: problems > 0 ? lastRight / problems : 0,
      second_attempts: secondAttempts,
      repaired: lastRight - firstRight,
    },
  };
}
