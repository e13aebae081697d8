// Work inside a new active span that ends with the work's outcome: an error is recorded on the
// span (exception event, status ERROR with its message) and thrown on. The one way the mesh's
// own spans (rollouts, CLI commands) are opened, so each records failures alike.
import { SpanStatusCode, type Attributes, type Span, type Tracer } from "@opentelemetry/api";

export function inActiveSpan<T>(tracer: Tracer, name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
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
