// training.async: the next step's rollouts, started before this step trains and taken
// when the next step begins. The handle owns their cancellation, so a run that stops or
// fails between the two never leaves generation running behind it.
import { setMaxListeners } from "node:events";
import type { StepRollouts } from "./step-rollouts.js";
import type { StepSpan } from "../outputs/step-span.js";

export class PrefetchedRollouts {
  private readonly controller = new AbortController();
  private readonly result: Promise<StepRollouts>;

  constructor(
    readonly step: number,
    /** The span of the step these rollouts belong to; ended by the step, or here on cancel. */
    readonly span: StepSpan,
    roll: (signal: AbortSignal) => Promise<StepRollouts>,
    runSignal?: AbortSignal,
  ) {
    const signal = runSignal ? AbortSignal.any([runSignal, this.controller.signal]) : this.controller.signal;
    // Every Generate of the step's groups listens on it (as on the run's own signal).
    setMaxListeners(256, signal);
    this.result = span.run(() => roll(signal));
    // Awaited by take() or cancel(); a failure meanwhile is held for them, not unhandled.
    this.result.catch(() => {});
  }

  take(): Promise<StepRollouts> {
    return this.result;
  }

  /** Aborts the rollouts' calls and waits for them to settle. */
  async cancel(): Promise<void> {
    this.controller.abort(new Error(`step ${this.step}'s prefetched rollouts were cancelled: the run is stopping`));
    await this.result.catch(() => {});
    this.span.end({ cancelled: true });
  }
}
