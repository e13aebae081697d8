// The `rollout.step` span of one step. With training.async a step's rollouts start while
// the previous step trains, so its span is opened then and ended when the step is
// recorded: overlapping step spans are what happened. Work run through `run` nests under it.
// Each step is a trace of its own (a run of 1,000 steps in one trace is unreadable in any
// backend), linked to the span that started the run (StartRun) so the two still connect.
import { context, SpanStatusCode, trace, type Context, type Span } from "@opentelemetry/api";
import { runAttributes } from "./tracing.js";

const tracer = trace.getTracer("lean-grpo-orchestrator");

export class StepSpan {
  private constructor(
    private readonly span: Span,
    private readonly inside: Context,
  ) {}

  /** Opens the span as a new trace linked to `parent`'s span (the loop's context, not whichever step happens to be active). */
  static start(parent: Context, runId: string, step: number): StepSpan {
    const started = trace.getSpanContext(parent);
    const span = tracer.startSpan(
      "rollout.step",
      { root: true, attributes: runAttributes(runId, step), links: started ? [{ context: started }] : [] },
      parent,
    );
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
