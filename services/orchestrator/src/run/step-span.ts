// The `rollout.step` span of one step. With training.async a step's rollouts start while
// the previous step trains, so its span is opened then and ended when the step is
// recorded: overlapping step spans are what happened. Work run through `run` nests under it.
import { context, SpanStatusCode, trace, type Context, type Span } from "@opentelemetry/api";
import { runAttributes } from "./tracing.js";

const tracer = trace.getTracer("lean-grpo-orchestrator");

export class StepSpan {
  private constructor(
    private readonly span: Span,
    private readonly inside: Context,
  ) {}

  /** Opens the span under `parent` (the loop's context, not whichever step happens to be active). */
  static start(parent: Context, runId: string, step: number): StepSpan {
    const span = tracer.startSpan("rollout.step", { attributes: runAttributes(runId, step) }, parent);
    return new StepSpan(span, trace.setSpan(parent, span));
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return context.with(this.inside, work);
  }

  end(outcome?: { error?: unknown; cancelled?: boolean }): void {
    if (outcome?.cancelled) this.span.setAttribute("leangrpo.cancelled", true);
    if (outcome?.error !== undefined) {
      const error = outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error));
      this.span.recordException(error);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    this.span.end();
  }
}
