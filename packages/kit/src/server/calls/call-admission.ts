// What every call passes before its body is read, whichever engine serves it: auth
// decided on the request headers, then a slot in its budget for as long as it is open,
// and the deadline it gets when it sends none. Synchronous, so that an engine can
// decide before it reads a byte of the body.
//
// Budgets: each service has its own slots (server.limits.max_concurrent_calls), taken
// only by calls that passed auth; beyond them a call fails fast with RESOURCE_EXHAUSTED
// instead of queueing, so callers and their balancers can back off or try another
// replica. Health and reflection, open without a token, draw on small budgets of their
// own (server.limits.open_services): a few calls per connection, a cap on watches and
// on reflection streams in all. So no anonymous client can take what authenticated
// calls need, and held Health/Watch streams never stop Health/Check.
import { Code, ConnectError } from "@connectrpc/connect";
import { digest, tokensEqual } from "../../auth/bearer-auth.js";
import type { ServerLimits } from "../server-config.js";
import type { CallBudget, CallRoute } from "./call-routes.js";

export interface AdmissionRequest {
  route: CallRoute;
  /** The request's `authorization` header. */
  authorization: string | undefined;
  /** Identifies the connection the call came on (for the per-connection budgets). */
  connection: string;
}

export interface Admitted {
  /** Gives the slot back; idempotent. */
  release(): void;
  /** The deadline to apply when the client sent none, ms; undefined = none. */
  readonly defaultTimeoutMs: number | undefined;
}

export type Admission = ((request: AdmissionRequest) => Admitted | ConnectError) & { inFlight(): number };

export interface CallAdmissionOptions {
  /** The bearer token every call to a service must present; undefined = no auth. */
  token: string | undefined;
  limits: ServerLimits;
}

export function createCallAdmission(options: CallAdmissionOptions): Admission {
  const budgets = new Budgets(options.limits);
  const expected = options.token === undefined ? undefined : digest(options.token);
  const admit = (request: AdmissionRequest): Admitted | ConnectError => {
    if (request.route.budget === "service" && expected !== undefined) {
      const refused = authenticate(request.authorization, expected);
      if (refused) return refused;
    }
    return budgets.take(request.route, request.connection);
  };
  return Object.assign(admit, { inFlight: () => budgets.inFlight });
}

/** The counts behind the budgets; one slot per admitted call (a class, not closures: this runs for every call). */
class Budgets {
  inFlight = 0;
  private readonly perService = new Map<string, number>();
  private readonly openPerConnection = new Map<string, number>();
  private watches = 0;
  private reflectionStreams = 0;
  private readonly defaultUnaryMs: number | undefined;
  private readonly defaultStreamMs: number | undefined;

  constructor(private readonly limits: ServerLimits) {
    this.defaultUnaryMs = positive(limits.default_timeout_ms ?? limits.max_timeout_ms);
    this.defaultStreamMs = positive(limits.default_stream_timeout_ms ?? 0);
  }

  take(route: CallRoute, connection: string): Slot | ConnectError {
    if (route.budget === "service") {
      const current = this.perService.get(route.service) ?? 0;
      const max = this.limits.max_concurrent_calls;
      if (max > 0 && current >= max) {
        return new ConnectError(
          `${route.service} is running its maximum of ${max} concurrent calls (server.limits.max_concurrent_calls); retry later or on another replica`,
          Code.ResourceExhausted,
        );
      }
      this.perService.set(route.service, current + 1);
      this.inFlight++;
      return new Slot(this, route, connection, route.streaming ? this.defaultStreamMs : this.defaultUnaryMs);
    }
    const open = this.limits.open_services;
    const held = this.openPerConnection.get(connection) ?? 0;
    if (held >= open.calls_per_connection) {
      return new ConnectError(
        `this connection has ${held} health or reflection calls open, its maximum (server.limits.open_services.calls_per_connection); finish one first`,
        Code.ResourceExhausted,
      );
    }
    if (route.budget === "health-watch" && this.watches >= open.max_watches) {
      return new ConnectError(
        `${open.max_watches} Health.Watch streams are open, the maximum (server.limits.open_services.max_watches); use Health.Check, or retry later`,
        Code.ResourceExhausted,
      );
    }
    if (route.budget === "reflection" && this.reflectionStreams >= open.max_reflection_streams) {
      return new ConnectError(
        `${open.max_reflection_streams} reflection streams are open, the maximum (server.limits.open_services.max_reflection_streams); retry later`,
        Code.ResourceExhausted,
      );
    }
    this.openPerConnection.set(connection, held + 1);
    if (route.budget === "health-watch") this.watches++;
    if (route.budget === "reflection") this.reflectionStreams++;
    this.inFlight++;
    // A watch follows the status for as long as it is wanted; checks and reflection are quick.
    return new Slot(this, route, connection, route.budget === "health-watch" ? this.defaultStreamMs : positive(open.timeout_ms));
  }

  giveBack(route: CallRoute, connection: string) {
    this.inFlight--;
    if (route.budget === "service") {
      this.perService.set(route.service, (this.perService.get(route.service) ?? 1) - 1);
      return;
    }
    const now = (this.openPerConnection.get(connection) ?? 1) - 1;
    if (now === 0) this.openPerConnection.delete(connection);
    else this.openPerConnection.set(connection, now);
    const budget: CallBudget = route.budget;
    if (budget === "health-watch") this.watches--;
    if (budget === "reflection") this.reflectionStreams--;
  }
}

class Slot implements Admitted {
  private released = false;

  constructor(
    private readonly budgets: Budgets,
    private readonly route: CallRoute,
    private readonly connection: string,
    readonly defaultTimeoutMs: number | undefined,
  ) {}

  release(): void {
    if (this.released) return;
    this.released = true;
    this.budgets.giveBack(this.route, this.connection);
  }
}

function positive(ms: number): number | undefined {
  return ms > 0 ? ms : undefined;
}

function authenticate(header: string | undefined, expected: Buffer): ConnectError | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? "");
  if (!match) return new ConnectError('missing credentials: send the header "authorization: Bearer <token>"', Code.Unauthenticated);
  if (!tokensEqual(match[1]!, expected)) return new ConnectError("invalid bearer token", Code.Unauthenticated);
  return undefined;
}
