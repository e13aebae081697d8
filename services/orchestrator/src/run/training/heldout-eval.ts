// Held-out accuracy during a run: the `eval` section's problems, one greedy completion each
// with the current adapter (or, with eval.samples > 1, that many sampled from the training
// distribution and pass@k for each eval.k), scored by the reward service. What the report's
// accuracy curve plots; the same code as `lean-grpo eval`. For math problems the record also
// says how the policy answers (eval/answer-form.ts): the right-number rate (boxed or not),
// the share worked out, accuracy per form, and length.
import { reasoningMaskOf } from "../config/reasoning-mask.js";
import { type EvalOptions, evaluate } from "../../eval/evaluate.js";
import type { RunConfig } from "../config/run-config.js";
import { evalTurns, HELDOUT_CONCURRENCY, type HeldoutContext } from "./heldout-context.js";
import { repairHeldoutAccuracy } from "./repair-heldout.js";
import type { EvalRecord } from "../outputs/eval-record.js";
import { buildPrompt } from "../rollout/prompts.js";
import { sampledPromptText } from "../rollout/sampled-prompt.js";

/** Whether the run evaluates after step `step` (0: before training). */
export function evaluatesAt(config: RunConfig, step: number): boolean {
  return config.eval.data !== "" && (step === 0 || step % config.eval.every === 0 || step === config.training.steps);
}

export async function heldoutAccuracy(ctx: HeldoutContext, step: number, adapter: string): Promise<EvalRecord> {
  // Repair turns (eval.max_turns, or repair mode's rollout.max_turns): accuracy after the first and the last attempt.
  if (evalTurns(ctx.config) > 1) return repairHeldoutAccuracy(ctx, step, adapter);
  const started = performance.now();
  const report = await evaluate({ ...heldoutOptions(ctx, adapter), ...sampledHeldout(ctx.config) });
  const sampled = !report.greedy;
  const seconds = (performance.now() - started) / 1000;
  // Every problem is framed alike: the first one's prompt, as the sampler was given it, shows how.
  const first = ctx.theorems[0];
  const prompt = first
    ? await sampledPromptText(ctx.clients, buildPrompt(first, ctx.config.prompt, ctx.chatPrompts), ctx.signal)
    : undefined;
  return {
    step,
    heldout_accuracy: report.pass_at_1,
    // Sampled: completions solved over all of them (pass@1 is that share per problem, averaged).
    solved: report.results.reduce((n, r) => n + r.solved, 0),
    problems: report.problems,
    seconds,
    ...(sampled ? { samples: report.samples, pass_at: Object.fromEntries(report.pass_at.map(({ k, value }) => [String(k), value])) } : {}),
    ...(report.forms ? { forms: report.forms } : {}),
    ...(first && prompt !== undefined ? { prompt: { theorem_id: first.id, text: prompt } } : {}),
  };
}

/** eval.samples > 1: that many completions per problem from the training distribution, pass@k for each eval.k. */
function sampledHeldout(config: RunConfig): Partial<EvalOptions> {
  const { samples, k } = config.eval;
  if (samples === 1) return {};
  const { temperature, top_p, top_k } = config.training;
  return { samples, ks: k, temperature, topP: top_p, ...(top_k > 0 ? { topK: top_k } : {}) };
}

/**
 * A held-out evaluation of `adapter` with the run's prompt and length, greedy: what a run
 * records by default, and what the Evaluate RPC runs (eval/evaluate-rpc.ts, which sets k and sampling).
 */
export function heldoutOptions(ctx: HeldoutContext, adapter: string): EvalOptions {
  return {
    clients: ctx.clients,
    theorems: ctx.theorems,
    ks: [1],
    samples: 1,
    temperature: 0,
    maxTokens: ctx.config.training.max_tokens,
    reasoningMask: reasoningMaskOf(ctx.config),
    adapter,
    prompt: ctx.config.prompt,
    chatPrompts: ctx.chatPrompts,
    seed: ctx.config.training.seed,
    // All problems in flight (bounded): the embedded sampler batches concurrent calls into
    // one decode pass (embedded.max_batch_rows, 256 by default); vLLM does the same.
    concurrency: HELDOUT_CONCURRENCY,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  };
}
