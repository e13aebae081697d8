// Shared-secret auth: `authorization: Bearer <token>` on every call to a service.
// The server decides it in its call admission (server/calls/call-admission.ts), on the
// request headers; health and reflection stay open there. This file holds the token
// comparison and the client side.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Interceptor } from "@connectrpc/connect";

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
