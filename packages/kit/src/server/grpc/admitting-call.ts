// The kit's call admission on grpc-js, as a server interceptor: it decides when the
// request headers arrive, before the handler starts and so before any of the body is
// read. A refused call is answered at once; an admitted one holds its slot until it
// ends, gets the default deadline when the client sent none, and has its
// HandlerContext made here, so that a cancel reaches the handler's work.
//
// One object per call serves as the intercepting call and as the listener grpc-js
// reports to: classes, not closures, since this runs for every call.
import {
  type Metadata,
  type ServerInterceptingCall,
  type ServerInterceptingCallInterface,
  type ServerInterceptor,
  status,
} from "@grpc/grpc-js";
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import type { Admission, Admitted } from "../calls/call-admission.js";
import type { CallRoute } from "../calls/call-routes.js";
import { GrpcCallContext } from "./grpc-call-context.js";
import { grpcStatusOf, metadataValue } from "./grpc-status.js";

/** What grpc-js reports a call's progress to (its type is not exported by name). */
type InterceptingServerListener = Parameters<ServerInterceptingCallInterface["start"]>[0];

/** A method served, with what the admission needs to know of it. */
export interface GrpcRoute extends CallRoute {
  serviceDesc: DescService;
  methodDesc: DescMethod;
}

export interface GrpcCallGateOptions {
  routes: ReadonlyMap<string, GrpcRoute>;
  admission: Admission;
  maxTimeoutMs: number;
  /** An admitted call opened or ended on a connection (for the connection registry). */
  onCallOpened(connection: string): void;
  onCallEnded(connection: string): void;
}

/**
 * Where an admitted call's context rides to its handler: on the request Metadata, which
 * grpc-js hands on to the handler unchanged (a property, not a WeakMap: a WeakMap entry
 * per call costs the garbage collector more than the call's own work).
 */
const kCallContext = Symbol("lean-grpo call context");
type CarryingMetadata = Metadata & { [kCallContext]?: GrpcCallContext };

export class GrpcCallGate {
  /** Calls in progress, so that a shutdown past its grace period can abort their work. */
  readonly liveCalls = new Set<GrpcCallContext>();

  constructor(readonly options: GrpcCallGateOptions) {}

  // grpc-js types an interceptor's result as its own class; it only ever calls the interface's methods.
  readonly interceptor: ServerInterceptor = (descriptor, call) =>
    new AdmittingCall(call, this, this.options.routes.get(descriptor.path)) as unknown as ServerInterceptingCall;

  contextOf(metadata: Metadata): GrpcCallContext | undefined {
    return (metadata as CarryingMetadata)[kCallContext];
  }

  opened(metadata: Metadata, ctx: GrpcCallContext, connection: string) {
    (metadata as CarryingMetadata)[kCallContext] = ctx;
    this.liveCalls.add(ctx);
    this.options.onCallOpened(connection);
  }

  ended(ctx: GrpcCallContext, connection: string) {
    this.liveCalls.delete(ctx);
    this.options.onCallEnded(connection);
  }
}

/**
 * The intercepting call of one call: it implements grpc-js's interface directly and
 * forwards to the call beneath (grpc-js's own ServerInterceptingCall would add a
 * responder object and a listener wrapper per call, for the asynchronous interceptors
 * this one is not).
 */
class AdmittingCall implements ServerInterceptingCallInterface, InterceptingServerListener {
  private listener: InterceptingServerListener | undefined;
  private admitted: Admitted | undefined;
  private ctx: GrpcCallContext | undefined;
  private connection = "";
  private deadlineTimer: NodeJS.Timeout | undefined;
  /** Whether the call's stream has closed and the gate was told. */
  private closed = false;

  constructor(
    private readonly call: ServerInterceptingCallInterface,
    private readonly gate: GrpcCallGate,
    private readonly route: GrpcRoute | undefined,
  ) {}

  start(listener: InterceptingServerListener): void {
    this.listener = listener;
    this.call.start(this);
  }

  onReceiveMetadata(metadata: Metadata): void {
    const route = this.route;
    if (route === undefined) {
      this.listener!.onReceiveMetadata(metadata);
      return;
    }
    const info = this.call.getConnectionInfo();
    this.connection = `${info.remoteAddress}|${info.remotePort}`;
    const decision = this.gate.options.admission({
      route,
      authorization: metadataValue(metadata, "authorization"),
      connection: this.connection,
    });
    if (decision instanceof ConnectError) {
      this.call.sendStatus(grpcStatusOf(decision));
      return;
    }
    const deadline = this.call.getDeadline();
    let deadlineAt = typeof deadline === "number" ? (Number.isFinite(deadline) ? deadline : undefined) : deadline.getTime();
    if (deadlineAt !== undefined && deadlineAt - Date.now() > this.gate.options.maxTimeoutMs) {
      decision.release();
      this.call.sendStatus({
        code: status.INVALID_ARGUMENT,
        details: `timeout ${deadlineAt - Date.now()}ms must be <= ${this.gate.options.maxTimeoutMs} (server.limits.max_timeout_ms)`,
      });
      return;
    }
    if (deadlineAt === undefined && decision.defaultTimeoutMs !== undefined) {
      deadlineAt = Date.now() + decision.defaultTimeoutMs;
      this.deadlineTimer = setTimeout(expire, decision.defaultTimeoutMs, this.call);
    }
    this.admitted = decision;
    this.ctx = new GrpcCallContext(route.serviceDesc, route.methodDesc, deadlineAt, metadata);
    this.gate.opened(metadata, this.ctx, this.connection);
    this.listener!.onReceiveMetadata(metadata);
  }

  onReceiveMessage(message: unknown): void {
    this.listener!.onReceiveMessage(message);
  }

  onReceiveHalfClose(): void {
    this.listener!.onReceiveHalfClose();
  }

  /** grpc-js reports the end of every call here, answered or not, once its stream has closed. */
  onCancel(): void {
    this.finish();
    // Only now is the answer's last byte written: until then the connection is not idle, so
    // neither a shutdown nor an eviction at the connection cap cuts it short.
    if (this.ctx !== undefined && !this.closed) {
      this.closed = true;
      this.gate.ended(this.ctx, this.connection);
    }
    this.listener!.onCancel();
  }

  sendMetadata(metadata: Metadata): void {
    this.call.sendMetadata(metadata);
  }

  sendMessage(message: unknown, callback: () => void): void {
    this.call.sendMessage(message, callback);
  }

  sendStatus(statusObject: Parameters<ServerInterceptingCallInterface["sendStatus"]>[0]): void {
    this.finish();
    this.call.sendStatus(statusObject);
  }

  startRead(): void {
    this.call.startRead();
  }

  getPeer() {
    return this.call.getPeer();
  }

  getDeadline() {
    return this.call.getDeadline();
  }

  getHost() {
    return this.call.getHost();
  }

  getAuthContext() {
    return this.call.getAuthContext();
  }

  getConnectionInfo() {
    return this.call.getConnectionInfo();
  }

  getMetricsRecorder() {
    return this.call.getMetricsRecorder();
  }

  /** The call is answered (or gone): its slot is free for the next, and its work is cancelled if unanswered. */
  private finish() {
    if (this.admitted === undefined) return;
    clearTimeout(this.deadlineTimer);
    this.admitted.release();
    this.admitted = undefined;
    this.ctx!.cancelIfUnanswered();
  }
}

function expire(call: ServerInterceptingCallInterface) {
  call.sendStatus({ code: status.DEADLINE_EXCEEDED, details: "the operation timed out" });
}
