// The table `lean-grpo train` prints when a run ends: where it stopped, its outputs, the
// first and last reward, pass rate and held-out accuracy, and where the step time went.
import { RunState, type Run } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import Table from "cli-table3";
import type { EvalRecord, StepRecord } from "@lean-grpo/orchestrator";

const percent = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? "-" : `${(100 * x).toFixed(1)}%`);

/** first → last of a metric over the recorded steps. */
function trend(steps: readonly StepRecord[], key: string, format: (x: number | undefined) => string): string {
  const values = steps.map((s) => s.metrics[key]).filter((v): v is number => Number.isFinite(v));
  return values.length === 0 ? "-" : `${format(values[0])} -> ${format(values[values.length - 1])}`;
}

/** First → last held-out accuracy, and the best one when it is neither (the report has the whole curve). */
function heldoutTrend(evals: readonly EvalRecord[], evalConfigured: boolean, note?: string): string {
  if (evals.length === 0 && note !== undefined) return note;
  if (evals.length === 0) return evalConfigured ? "- (no evaluation finished)" : "- (no eval section)";
  const [first, last] = [evals[0]!, evals[evals.length - 1]!];
  const best = evals.reduce((a, e) => (e.heldout_accuracy > a.heldout_accuracy ? e : a));
  const bestNote = best !== first && best !== last ? `, best ${percent(best.heldout_accuracy)} after step ${best.step}` : "";
  return (
    `${percent(first.heldout_accuracy)} after step ${first.step} -> ${percent(last.heldout_accuracy)} after step ${last.step}` +
    ` (${last.samples ? `pass@1 of ${last.samples} samples` : "greedy"}, ${first.problems} problems, ${evals.length} evaluations${bestNote})`
  );
}

/** A sampled evaluation's pass@k, first → last, one row per k (eval.samples > 1). */
function heldoutPassAtK(evals: readonly EvalRecord[]): Record<string, string>[] {
  const sampled = evals.filter((e) => e.pass_at !== undefined);
  if (sampled.length === 0) return [];
  const [first, last] = [sampled[0]!, sampled[sampled.length - 1]!];
  return Object.keys(last.pass_at!)
    .sort((a, b) => Number(a) - Number(b))
    .map((k) => ({
      [`  pass@${k}`]: `${percent(first.pass_at![k])} after step ${first.step} -> ${percent(last.pass_at![k])} after step ${last.step} (${last.samples} samples per problem)`,
    }));
}

/** How the greedy answers changed, first → last evaluation (math problems): right number, form, accuracy per form, length. */
function heldoutForms(evals: readonly EvalRecord[]): Record<string, string>[] {
  const withForms = evals.filter((e) => e.forms !== undefined);
  if (withForms.length === 0) return [];
  const [first, last] = [withForms[0]!.forms!, withForms[withForms.length - 1]!.forms!];
  const pair = (f: (x: NonNullable<EvalRecord["forms"]>) => string) => `${f(first)} -> ${f(last)}`;
  return [
    { "  right number": `${pair((x) => percent(x.right_number))} (last number written is the answer, boxed or not)` },
    { "  worked out": `${pair((x) => percent(x.worked_share))} of answers` },
    {
      "  accuracy by form": `worked ${pair((x) => percent(x.accuracy_worked ?? undefined))}, direct ${pair((x) => percent(x.accuracy_direct ?? undefined))}`,
    },
    { "  length": `${pair((x) => x.completion_tokens.toFixed(1))} tokens (cut by max_tokens: ${pair((x) => percent(x.truncated))})` },
  ];
}

export interface SummaryContext {
  /** Whether the run's config has an eval section (eval.data). */
  evalConfigured: boolean;
  /** Said in the held-out row when the evaluations cannot be read here (a run on a remote orchestrator). */
  heldoutNote?: string;
  /** What to do next, for a run that did not complete (run-advice.ts). */
  advice?: string;
  /** Columns to fit in; the terminal's width on a TTY. */
  width?: number;
}

const KEY_WIDTH = 18;

export function runSummaryTable(run: Run, steps: readonly StepRecord[], evals: readonly EvalRecord[], context: SummaryContext): string {
  // Long values (an error, a path) wrap inside their cell instead of widening the table.
  const valueWidth = Math.max(40, Math.min(100, (context.width ?? 100) - KEY_WIDTH - 3));
  const table = new Table({
    style: { head: [], border: [] },
    colWidths: [KEY_WIDTH, valueWidth],
    wordWrap: true,
    // Words stay whole ("11 evaluati | ons" read badly); a word longer than the column still breaks.
    wrapOnWordBoundary: true,
  });
  table.push(
    { run: run.id },
    { state: RunState[run.state] },
    { steps: `${run.step}/${run.totalSteps} (last checkpoint ${run.lastCheckpointStep})` },
    { reward: trend(steps, "reward_mean", (x) => x?.toFixed(3) ?? "-") },
    { "pass rate": trend(steps, "pass_rate", percent) },
    { "held-out": heldoutTrend(evals, context.evalConfigured, context.heldoutNote) },
    ...heldoutPassAtK(evals),
    ...heldoutForms(evals),
    ...mismatchRows(steps),
    ...timeRows(steps, evals),
    { outputs: run.outputDir },
    { report: `${run.outputDir}/report.html` },
  );
  if (run.error) table.push({ error: run.error });
  if (context.advice) table.push({ next: context.advice });
  return table.toString();
}

/**
 * Where the time went. A step's total_s is its own wall time, split by phase; with
 * training.async the next step's rollouts sample while a step trains, and that generation,
 * hidden behind training, is not in any step's total: it is shown beside the split, not in it.
 */
function timeRows(steps: readonly StepRecord[], evals: readonly EvalRecord[]): Record<string, string>[] {
  const total = (key: string) => steps.reduce((a, s) => a + (s.timings[key] ?? 0), 0);
  const wall = total("total_s");
  const share = (key: string) => (wall > 0 ? `${total(key).toFixed(1)} s (${((100 * total(key)) / wall).toFixed(1)}%)` : "-");
  const hidden = total("rollout_overlap_s");
  const perStep = steps.length > 0 ? `, ${(wall / steps.length).toFixed(2)} s a step` : "";
  const rows: Record<string, string>[] = [
    { "step time": `${wall.toFixed(1)} s over ${steps.length} steps${perStep} (wall time, each phase below a part of it)` },
    { "  generate": `${share("generate_s")}${hidden > 0 ? " waiting for rollouts" : ""}` },
    { "  verify + score": `${share("verify_s")} + ${share("score_s")}` },
    { "  train + sync": `${share("train_s")} + ${share("sync_s")}` },
    { "  other": share("other_s") },
  ];
  if (hidden > 0) {
    rows.push({
      "  overlapped": `generation hidden behind training: ${hidden.toFixed(1)} s (the next step's rollouts sampled while a step trained, training.async; not in the step time)`,
    });
  }
  if (evals.length > 0) {
    const seconds = evals.reduce((a, e) => a + e.seconds, 0);
    rows.push({
      "held-out eval": `${seconds.toFixed(1)} s over ${evals.length} evaluation${evals.length === 1 ? "" : "s"}, ${(seconds / evals.length).toFixed(1)} s each (not in the step time)`,
    });
  }
  return rows;
}

/**
 * The sampler against the learner, first → last step (verl's rollout_corr metrics): k3 KL and
 * χ² of the importance weights, their effective sample size and what the correction masked,
 * and the largest difference the adapter check saw after a sync.
 */
function mismatchRows(steps: readonly StepRecord[]): Record<string, string>[] {
  if (!steps.some((s) => s.metrics.rollout_corr_k3_kl !== undefined)) return [];
  const exp = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? "-" : x.toExponential(2));
  const rows: Record<string, string>[] = [
    {
      "sampler/learner": `k3 KL ${trend(steps, "rollout_corr_k3_kl", exp)}, χ² seq ${trend(steps, "rollout_corr_chi2_seq", exp)}`,
    },
    {
      "  IS weights": `ESS ${trend(steps, "rollout_corr_rollout_is_eff_sample_size", percent)}, masked ${trend(steps, "rollout_corr_rollout_rs_masked_fraction", percent)}`,
    },
  ];
  const checks = steps.map((s) => s.metrics.adapter_check_logp_difference).filter((v): v is number => Number.isFinite(v));
  if (checks.length > 0) rows.push({ "  adapter check": `max mean |Δ logp| ${exp(Math.max(...checks))} over ${checks.length} syncs` });
  return rows;
}
