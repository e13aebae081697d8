// The HandlerContext a service sees when the kit's gRPC engine serves a call: the
// interface connect-node gives its handlers, built lazily. Most calls never look at
// their headers, their values or even their signal, and on the gRPC path each of those
// objects (a fetch Headers, an AbortController) would otherwise cost more than the call.
// An engine subclasses it with the way its requests hold headers.
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type ContextValues, type HandlerContext } from "@connectrpc/connect";

/** A client's reset this close to its deadline is the deadline, not a cancel (its timer starts before ours). */
const DEADLINE_SLACK_MS = 25;

export abstract class CallContext implements HandlerContext {
  readonly requestMethod = "POST";
  /** Set by the engine once the call's answer (its response, or its error) is on its way. */
  answered = false;
  private controller: AbortController | undefined;
  private abortedWith: { reason: unknown } | undefined;
  private lazyRequestHeader: Headers | undefined;
  private lazyResponseHeader: Headers | undefined;
  private lazyResponseTrailer: Headers | undefined;
  private lazyValues: ContextValues | undefined;

  constructor(
    readonly service: DescService,
    readonly method: DescMethod,
    readonly protocolName: string,
    /** When the call's deadline passes (epoch ms), if it has one. */
    readonly deadlineAt: number | undefined,
  ) {}

  /** Time left before the deadline, ms; undefined when the call has none. */
  timeoutMs(): number | undefined {
    return this.deadlineAt === undefined ? undefined : this.deadlineAt - Date.now();
  }

  /** One request header by its lower-case name, as a fetch Headers would give it, without building one. */
  abstract header(name: string): string | undefined;

  /** Every request header, for a handler that asks for `requestHeader`. */
  protected abstract headerEntries(): Iterable<[string, string]>;

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortedWith !== undefined) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  /** Ends the call's work: its signal fires with `reason` (the first reason wins). */
  abort(reason: unknown): void {
    if (this.abortedWith !== undefined) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
  }

  /** The call ended without an answer from its handler: a deadline if it was due, else the client's cancel. */
  cancelIfUnanswered(): void {
    if (this.answered || this.abortedWith !== undefined) return;
    const due = this.deadlineAt !== undefined && this.deadlineAt - Date.now() <= DEADLINE_SLACK_MS;
    this.abort(
      due
        ? new ConnectError("the operation timed out", Code.DeadlineExceeded)
        : new ConnectError("the client cancelled the call", Code.Canceled),
    );
  }

  get url(): string {
    return `/${this.service.typeName}/${this.method.name}`;
  }

  get requestHeader(): Headers {
    if (this.lazyRequestHeader === undefined) {
      const headers = new Headers();
      for (const [name, value] of this.headerEntries()) headers.append(name, value);
      this.lazyRequestHeader = headers;
    }
    return this.lazyRequestHeader;
  }

  get responseHeader(): Headers {
    this.lazyResponseHeader ??= new Headers();
    return this.lazyResponseHeader;
  }

  get responseTrailer(): Headers {
    this.lazyResponseTrailer ??= new Headers();
    return this.lazyResponseTrailer;
  }

  /** The response headers a handler set, if it touched them at all. */
  get responseHeaderIfAny(): Headers | undefined {
    return this.lazyResponseHeader;
  }

  get responseTrailerIfAny(): Headers | undefined {
    return this.lazyResponseTrailer;
  }

  get values(): ContextValues {
    this.lazyValues ??= createContextValues();
    return this.lazyValues;
  }
}

/** One header of any handler's context: the cheap lookup on the kit's own, the Headers otherwise. */
export function requestHeaderOf(context: HandlerContext, name: string): string | undefined {
  if (context instanceof CallContext) return context.header(name);
  return context.requestHeader.get(name) ?? undefined;
}
