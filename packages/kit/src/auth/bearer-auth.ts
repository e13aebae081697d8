// Optional shared-secret auth: `authorization: Bearer <token>` on every call.
// Health and reflection stay open: probes need health without a secret, and reflection
// describes only the public contract (the protos in this repository), never data.
import { createHash, timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

export interface BearerAuthOptions {
  token: string;
  /** Services callable without a token. */
  openServices?: ReadonlySet<string>;
}

export function bearerAuth(options: BearerAuthOptions): Interceptor {
  if (options.token.length === 0) throw new Error("bearerAuth needs a non-empty token");
  const expected = digest(options.token);
  return (next) => async (req) => {
    if (options.openServices?.has(req.service.typeName)) return next(req);
    const header = req.header.get("authorization") ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match) {
      throw new ConnectError('missing credentials: send the header "authorization: Bearer <token>"', Code.Unauthenticated);
    }
    if (!tokensEqual(match[1]!, expected)) throw new ConnectError("invalid bearer token", Code.Unauthenticated);
    return next(req);
  };
}

/**
 * Constant time, whatever the lengths: both sides are SHA-256 digests (32 bytes) before
 * timingSafeEqual, so neither the content nor the length of the token shows in the timing.
 */
export function tokensEqual(given: string, expectedDigest: Buffer): boolean {
  return timingSafeEqual(digest(given), expectedDigest);
}

export function digest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/** Client side: adds the bearer token to every call. */
export function bearerToken(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}
