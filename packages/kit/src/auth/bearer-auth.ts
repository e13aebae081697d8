// Optional shared-secret auth: `authorization: Bearer <token>` on every call.
// Health and reflection stay open by default so probes and grpcurl work.
import { timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

export interface BearerAuthOptions {
  token: string;
  /** Services callable without a token. */
  openServices?: ReadonlySet<string>;
}

export function bearerAuth(options: BearerAuthOptions): Interceptor {
  if (options.token.length === 0) throw new Error("bearerAuth needs a non-empty token");
  const expected = Buffer.from(options.token);
  return (next) => async (req) => {
    if (options.openServices?.has(req.service.typeName)) return next(req);
    const header = req.header.get("authorization") ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match) {
      throw new ConnectError('missing credentials: send the header "authorization: Bearer <token>"', Code.Unauthenticated);
    }
    const given = Buffer.from(match[1]!);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new ConnectError("invalid bearer token", Code.Unauthenticated);
    }
    return next(req);
  };
}

/** Client side: adds the bearer token to every call. */
export function bearerToken(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}
