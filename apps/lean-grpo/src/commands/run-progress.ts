// How `lean-grpo train` shows a run while it trains: a progress bar with the latest reward,
// pass rate and held-out accuracy, what the run is doing now, the time left and where the
// last step's time went on a TTY; one JSON
// line per step otherwise (logs a collector can parse). Run log lines (held-out accuracy)
// print above the bar, or to stderr without a TTY.
//
// The ETA is wall time per step so far (evaluations included, since they are part of the
// wait) times the steps left; before the first step there is nothing to measure, so it says
// so rather than "0s". A one-second timer redraws the bar so the elapsed time and the current
// phase move during a long evaluation.
import { toJson } from "@bufbuild/protobuf";
import { StepTimingsSchema, type Run, type StepEvent, type StepTimings } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import cliProgress from "cli-progress";

export interface RunProgress {
  step(event: StepEvent): void;
  log(line: string): void;
  stop(): void;
}

export interface ProgressPlan {
  runId: string;
  totalSteps: number;
  startStep: number;
  /** Whether a held-out evaluation runs after `step` (0: before the first step). */
  evaluatesAt(step: number): boolean;
}

const percent = (x: number | undefined) => (x === undefined ? "-" : `${(100 * x).toFixed(1)}%`);

/** 75 -> "1m15s"; the units a person reads at a glance. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** Time left: seconds per step so far (evaluations included) times the steps left; undefined before a step is done. */
export function estimateRemaining(elapsedSeconds: number, stepsDone: number, stepsLeft: number): number | undefined {
  if (stepsDone <= 0) return undefined;
  return (elapsedSeconds / stepsDone) * stepsLeft;
}

/**
 * What the run is doing now, from the last step finished. A step's evaluation runs before its
 * step event is sent, so after step N the run samples, trains and (when due) evaluates N+1.
 */
export function currentPhase(plan: ProgressPlan, lastStep: number, evaluatedBeforeFirst: boolean): string {
  if (lastStep >= plan.totalSteps) return "finishing";
  if (lastStep === 0 && plan.evaluatesAt(0) && !evaluatedBeforeFirst) return "held-out eval before step 1";
  const next = lastStep + 1;
  return plan.evaluatesAt(next) ? `step ${next} + held-out eval` : `step ${next}`;
}

/**
 * The last step's wall time and its two big parts; with training.async, the generation that
 * ran hidden behind the previous step's training is named apart (it is not in the step's
 * wall time): "step 8.8s: train 8.1s, generate 0.3s + 5.6s hidden behind training".
 */
export function stepTimeLine(t: StepTimings): string {
  const s = (x: number) => `${x.toFixed(1)}s`;
  const hidden = t.rolloutOverlapS > 0 ? ` + ${s(t.rolloutOverlapS)} hidden behind training` : "";
  return `step ${s(t.totalS)}: train ${s(t.trainS)}, generate ${s(t.generateS)}${hidden}`;
}

export function runProgress(plan: ProgressPlan, tty: boolean): RunProgress {
  if (!tty) {
    return {
      step: (s) =>
        process.stdout.write(
          `${JSON.stringify({ run: plan.runId, step: Number(s.step), metrics: s.metrics, timings: s.timings ? toJson(StepTimingsSchema, s.timings) : {} })}\n`,
        ),
      log: (line) => process.stderr.write(`${line}\n`),
      stop: () => {},
    };
  }
  // A MultiBar of one: its log() prints a line above the bar and redraws it.
  const bars = new cliProgress.MultiBar(
    {
      // What is happening and when it ends first: a narrow terminal cuts the end of the line.
      // Not {eta}: cli-progress fills that token with its own bare seconds, over the payload.
      format:
        "{bar} {value}/{total} | {phase} | {elapsed} elapsed, {remaining} | reward {reward} pass {pass} held-out {heldout} | {lastStep}",
      hideCursor: true,
      clearOnComplete: false,
      barsize: 16,
    },
    cliProgress.Presets.shades_classic,
  );
  const started = performance.now();
  let heldout: number | undefined;
  let lastStep = plan.startStep;
  // The evaluation before step 1 ends with its log line (there is no step event for it).
  let evaluated = false;
  const payload = () => {
    const elapsed = (performance.now() - started) / 1000;
    const remaining = estimateRemaining(elapsed, lastStep - plan.startStep, plan.totalSteps - lastStep);
    return {
      heldout: percent(heldout),
      phase: currentPhase(plan, lastStep, evaluated),
      elapsed: formatDuration(elapsed),
      remaining: remaining === undefined ? "time left known after the first step" : `about ${formatDuration(remaining)} left`,
    };
  };
  const bar = bars.create(plan.totalSteps, plan.startStep, { reward: "-", pass: "-", lastStep: "", ...payload() });
  const timer = setInterval(() => bar.update(payload()), 1000).unref();
  return {
    step(s) {
      heldout = s.metrics.heldout_accuracy ?? heldout;
      lastStep = Number(s.step);
      bar.update(lastStep, {
        reward: s.metrics.reward_mean?.toFixed(3) ?? "-",
        pass: percent(s.metrics.pass_rate),
        lastStep: s.timings ? stepTimeLine(s.timings) : "",
        ...payload(),
      });
    },
    log(line) {
      if (line.startsWith("held-out")) evaluated = true;
      bars.log(`${line}\n`);
      bar.update(payload());
    },
    stop() {
      clearInterval(timer);
      bars.stop();
    },
  };
}

/**
 * The progress of a run as StartRun answered it: its steps, and an evaluation where the
 * orchestrator makes one (heldout-eval.ts evaluatesAt) with the eval settings it resolved
 * (a resumed run: those it was started with).
 */
export function startedRunProgress(run: Run, evaluation: { data?: string; every?: number } | undefined, tty: boolean): RunProgress {
  const evalData = evaluation?.data ?? "";
  const every = evaluation?.every ?? 1;
  const total = Number(run.totalSteps);
  return runProgress(
    {
      runId: run.id,
      totalSteps: total,
      startStep: Number(run.step),
      evaluatesAt: (step) => evalData !== "" && (step === 0 || step % every === 0 || step === total),
    },
    tty,
  );
}
