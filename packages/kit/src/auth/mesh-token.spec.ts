import { describe, expect, it } from "vitest";
import { digest, tokensEqual } from "./bearer-auth.js";
import { AUTH_TOKEN_ENV, envAuthToken, isLoopbackHost, requireAuthBeyondLoopback } from "./mesh-token.js";

describe("tokensEqual", () => {
  it("accepts the token and refuses any other, shorter, longer or of the same length, comparing digests", () => {
    const expected = digest("s3cret-token");
    expect(tokensEqual("s3cret-token", expected)).toBe(true);
    for (const other of ["", "s", "s3cret-toke", "s3cret-tokenX", "s3cret-tokeN", "ş3cret-token", "x".repeat(10_000)]) {
      expect(tokensEqual(other, expected), other.slice(0, 20)).toBe(false);
    }
    // Every comparison is of two 32-byte digests, so timingSafeEqual never sees the lengths differ.
    expect(digest("a")).toHaveLength(32);
    expect(digest("x".repeat(10_000))).toHaveLength(32);
  });
});

describe("the mesh token", () => {
  it("comes from LEANGRPO_AUTH_TOKEN, an empty value counting as unset", () => {
    expect(envAuthToken({ [AUTH_TOKEN_ENV]: "t0k" })).toBe("t0k");
    expect(envAuthToken({ [AUTH_TOKEN_ENV]: "" })).toBeUndefined();
    expect(envAuthToken({})).toBeUndefined();
  });

  it("knows which bind addresses stay on this machine", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"]) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ["0.0.0.0", "::", "10.0.0.7", "192.168.1.2", "example.com", "128.0.0.1"])
      expect(isLoopbackHost(host), host).toBe(false);
  });
});

describe("a service process beyond loopback", () => {
  it("takes LEANGRPO_AUTH_TOKEN as its token, and does not start without one", () => {
    const exposed = { host: "0.0.0.0", auth: {} as { token?: string } };
    expect(() => requireAuthBeyondLoopback(exposed, {})).toThrow(
      'server.host "0.0.0.0" is beyond loopback and no token is set: set LEANGRPO_AUTH_TOKEN (or server.auth.token)',
    );
    requireAuthBeyondLoopback(exposed, { [AUTH_TOKEN_ENV]: "from-env" });
    expect(exposed.auth.token).toBe("from-env");
    const configured = { host: "10.0.0.7", auth: { token: "own" } };
    requireAuthBeyondLoopback(configured, { [AUTH_TOKEN_ENV]: "from-env" });
    expect(configured.auth.token).toBe("own");
    const local = { host: "127.0.0.1", auth: {} as { token?: string } };
    requireAuthBeyondLoopback(local, {});
    expect(local.auth.token).toBeUndefined();
  });
});
