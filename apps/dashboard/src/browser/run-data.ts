// What the page knows of one run: GetRun's details and every step event seen so far
// (replayed, then live), its log lines, and whether a watch is open.
import type { GetRunResponse, Run, StepEvent, WatchRunResponse } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";

export class RunData {
  run: Run | undefined;
  details: GetRunResponse | undefined;
  readonly steps: StepEvent[] = [];
  readonly logs: string[] = [];
  watching = false;
  /** Why the watch or GetRun failed, when it did. */
  problem = "";

  constructor(readonly id: string) {}

  /** Folds one WatchRun event in; true when it changed what is drawn. */
  apply(event: WatchRunResponse): boolean {
    const e = event.event;
    if (e.case === "step") {
      // A replay after a reconnect repeats steps: keep one event per step, the latest.
      const at = this.steps.findIndex((s) => s.step === e.value.step);
      if (at >= 0) this.steps[at] = e.value;
      else this.steps.push(e.value);
      this.steps.sort((a, b) => Number(a.step - b.step));
      return true;
    }
    if (e.case === "stateChange") {
      this.run = e.value;
      return true;
    }
    if (e.case === "log") {
      this.logs.push(e.value);
      return true;
    }
    return false;
  }

  /** One metric over the steps, as [steps, values] with null where a step lacks it. */
  series(key: string): [number[], (number | null)[]] {
    const xs = this.steps.map((s) => Number(s.step));
    const ys = this.steps.map((s) => {
      const v = key.startsWith("time.") ? timing(s, key.slice(5)) : s.metrics[key];
      return v === undefined || !Number.isFinite(v) ? null : v;
    });
    return [xs, ys];
  }

  /** Held-out accuracy from GetRun's evaluations (step 0 included), else from the steps' metrics. */
  heldout(): [number[], (number | null)[]] {
    const evaluations = this.details?.evaluations ?? [];
    const fromSteps = this.series("heldout_accuracy");
    const points = new Map<number, number>();
    for (const e of evaluations) points.set(Number(e.step), e.accuracy);
    fromSteps[0].forEach((x, i) => {
      const y = fromSteps[1][i];
      if (y !== null && y !== undefined) points.set(x, y);
    });
    const xs = [...points.keys()].sort((a, b) => a - b);
    return [xs, xs.map((x) => points.get(x)!)];
  }
}

function timing(step: StepEvent, key: string): number | undefined {
  const t = step.timings;
  if (!t) return undefined;
  return (t as unknown as Record<string, number>)[key];
}
