// The run's spans (DESIGN §6): rollout.step, rollout.group, rollout.completion,
// learner.step, adapter.sync, with leangrpo.run_id / step / theorem_id attributes.
// Recorded only when the process has a tracer provider (setupTracing with an endpoint).
import { trace, type Attributes, type Span } from "@opentelemetry/api";
import { inActiveSpan } from "@lean-grpo/kit";

const tracer = trace.getTracer("lean-grpo-orchestrator");

export function runAttributes(runId: string, step: number, theoremId?: string): Attributes {
  return { "leangrpo.run_id": runId, "leangrpo.step": step, ...(theoremId === undefined ? {} : { "leangrpo.theorem_id": theoremId }) };
}

/** Runs `work` inside a new active span, ending it with the outcome. */
export function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  return inActiveSpan(tracer, name, attributes, work);
}

/** A span for work already done (one completion's generate-to-score), as a child of the active span. */
export function recordedSpan(name: string, attributes: Attributes, startTime: number, endTime: number): void {
  tracer.startSpan(name, { attributes, startTime }).end(endTime);
}
