// How `lean-grpo train` shows a run while it trains: a progress bar with the latest
// reward, pass rate and held-out accuracy on a TTY; one JSON line per step otherwise
// (logs a collector can parse). Run log lines go to stderr either way.
import { toJson } from "@bufbuild/protobuf";
import { StepTimingsSchema, type StepEvent } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import cliProgress from "cli-progress";

export interface RunProgress {
  step(event: StepEvent): void;
  log(line: string): void;
  stop(): void;
}

const percent = (x: number | undefined) => (x === undefined ? "-" : `${(100 * x).toFixed(1)}%`);

export function runProgress(runId: string, totalSteps: number, startStep: number, tty: boolean): RunProgress {
  if (!tty) {
    return {
      step: (s) =>
        process.stdout.write(
          `${JSON.stringify({ run: runId, step: Number(s.step), metrics: s.metrics, timings: s.timings ? toJson(StepTimingsSchema, s.timings) : {} })}\n`,
        ),
      log: (line) => process.stderr.write(`${line}\n`),
      stop: () => {},
    };
  }
  // A MultiBar of one: its log() prints a line above the bar and redraws it.
  const bars = new cliProgress.MultiBar(
    {
      format: "{bar} step {value}/{total} | reward {reward} | pass {pass} | held-out {heldout} | {seconds}s/step | eta {eta_formatted}",
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  let heldout: number | undefined;
  const bar = bars.create(totalSteps, startStep, { reward: "-", pass: "-", heldout: "-", seconds: "-" });
  return {
    step(s) {
      heldout = s.metrics.heldout_accuracy ?? heldout;
      bar.update(Number(s.step), {
        reward: s.metrics.reward_mean?.toFixed(3) ?? "-",
        pass: percent(s.metrics.pass_rate),
        heldout: percent(heldout),
        seconds: s.timings?.totalS.toFixed(2) ?? "-",
      });
    },
    log: (line) => bars.log(`${line}\n`),
    stop: () => bars.stop(),
  };
}
