// The run's spans (DESIGN §6): rollout.step, rollout.group, rollout.completion,
// learner.step, adapter.sync, with leangrpo.run_id / step / theorem_id attributes.
// Recorded only when the process has a tracer provider (setupTracing with an endpoint).
import { SpanStatusCode, trace, type Attributes, type Span } from "@opentelemetry/api";

const tracer = trace.getTracer("lean-grpo-orchestrator");

export function runAttributes(runId: string, step: number, theoremId?: string): Attributes {
  return { "leangrpo.run_id": runId, "leangrpo.step": step, ...(theoremId === undefined ? {} : { "leangrpo.theorem_id": theoremId }) };
}

/** Runs `work` inside a new active span, ending it with the outcome. */
export function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A span for work already done (one completion's generate-to-score), as a child of the active span. */
export function recordedSpan(name: string, attributes: Attributes, startTime: number, endTime: number): void {
  tracer.startSpan(name, { attributes, startTime }).end(endTime);
}
