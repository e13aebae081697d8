// What every call passes before its body is read, whichever engine serves it: auth
// decided on the request headers, then a slot in its budget for as long as it is open,
// and the deadline it gets when it sends none. Synchronous, so that an engine can
// decide before it reads a byte of the body.
//
// Budgets: each service has its own slots (server.limits.max_concurrent_calls), taken
// only by calls that passed auth. Health and reflection, open without a token, draw on
// small budgets of their own (server.limits.open_services): a few calls per connection,
// a cap on watches and on reflection streams in all. So no anonymous client can take
// what authenticated calls need, and held Health/Watch streams never stop Health/Check.
import { Code, ConnectError } from "@connectrpc/connect";
import { digest, tokensEqual } from "../../auth/bearer-auth.js";
import { createConcurrencyLimit } from "../../limits/concurrency-limit.js";
import type { ServerLimits } from "../server-config.js";
import type { CallRoute } from "./call-routes.js";

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
  defaultTimeoutMs: number | undefined;
}

export type Admission = (request: AdmissionRequest) => Admitted | ConnectError;

export interface CallAdmissionOptions {
  /** The bearer token every call to a service must present; undefined = no auth. */
  token: string | undefined;
  limits: ServerLimits;
}

export function createCallAdmission(options: CallAdmissionOptions): Admission & { inFlight(): number } {
  const expected = options.token === undefined ? undefined : digest(options.token);
  const { limits } = options;
  const open = limits.open_services;
  const serviceSlots = createConcurrencyLimit({ maxConcurrentCalls: limits.max_concurrent_calls });
  const openPerConnection = new Map<string, number>();
  const totals = { "health-watch": 0, reflection: 0 };
  let inFlight = 0;

  const defaults = {
    unary: limits.default_timeout_ms ?? limits.max_timeout_ms,
    stream: limits.default_stream_timeout_ms ?? 0,
  };

  function admit(request: AdmissionRequest): Admitted | ConnectError {
    const { route } = request;
    if (route.budget === "service") {
      if (expected !== undefined) {
        const refused = authenticate(request.authorization, expected);
        if (refused) return refused;
      }
      const slot = serviceSlots.acquire(route.service);
      if ("error" in slot) return slot.error;
      inFlight++;
      return admitted(slot.release, route.streaming ? defaults.stream : defaults.unary);
    }

    const held = openPerConnection.get(request.connection) ?? 0;
    if (held >= open.calls_per_connection) {
      return new ConnectError(
        `this connection has ${held} health or reflection calls open, its maximum (server.limits.open_services.calls_per_connection); finish one first`,
        Code.ResourceExhausted,
      );
    }
    if (route.budget === "health-watch" && totals["health-watch"] >= open.max_watches) {
      return new ConnectError(
        `${open.max_watches} Health.Watch streams are open, the maximum (server.limits.open_services.max_watches); use Health.Check, or retry later`,
        Code.ResourceExhausted,
      );
    }
    if (route.budget === "reflection" && totals.reflection >= open.max_reflection_streams) {
      return new ConnectError(
        `${open.max_reflection_streams} reflection streams are open, the maximum (server.limits.open_services.max_reflection_streams); retry later`,
        Code.ResourceExhausted,
      );
    }
    openPerConnection.set(request.connection, held + 1);
    const budget = route.budget;
    if (budget !== "health-check") totals[budget]++;
    inFlight++;
    const release = () => {
      const now = (openPerConnection.get(request.connection) ?? 1) - 1;
      if (now === 0) openPerConnection.delete(request.connection);
      else openPerConnection.set(request.connection, now);
      if (budget !== "health-check") totals[budget]--;
    };
    // A watch follows the status for as long as it is wanted; checks and reflection are quick.
    return admitted(release, budget === "health-watch" ? defaults.stream : open.timeout_ms);
  }

  function admitted(giveBack: () => void, defaultTimeoutMs: number): Admitted {
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        inFlight--;
        giveBack();
      },
      defaultTimeoutMs: defaultTimeoutMs > 0 ? defaultTimeoutMs : undefined,
    };
  }

  return Object.assign(admit, { inFlight: () => inFlight });
}

function authenticate(header: string | undefined, expected: Buffer): ConnectError | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? "");
  if (!match) return new ConnectError('missing credentials: send the header "authorization: Bearer <token>"', Code.Unauthenticated);
  if (!tokensEqual(match[1]!, expected)) return new ConnectError("invalid bearer token", Code.Unauthenticated);
  return undefined;
}
