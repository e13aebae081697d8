import { describe, expect, it } from "vitest";
import { digest, tokensEqual } from "./bearer-auth.js";
import { agreedMeshToken, AUTH_TOKEN_ENV, envAuthToken, isLoopbackHost, requireAuthBeyondLoopback } from "./mesh-token.js";

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
    requireAuthBeyondLoopback(configured, {});
    expect(configured.auth.token).toBe("own");
    const same = { host: "10.0.0.7", auth: { token: "from-env" } };
    requireAuthBeyondLoopback(same, { [AUTH_TOKEN_ENV]: "from-env" });
    expect(same.auth.token).toBe("from-env");
    const local = { host: "127.0.0.1", auth: {} as { token?: string } };
    requireAuthBeyondLoopback(local, {});
    expect(local.auth.token).toBeUndefined();
  });
});

describe("a token given both ways", () => {
  it("must agree: LEANGRPO_AUTH_TOKEN and a config key that set different tokens are refused, naming both", () => {
    const differs = { host: "127.0.0.1", auth: { token: "own" } };
    expect(() => requireAuthBeyondLoopback(differs, { [AUTH_TOKEN_ENV]: "from-env" })).toThrow(
      "server.auth.token and LEANGRPO_AUTH_TOKEN give different tokens; the mesh has one token: set it once (LEANGRPO_AUTH_TOKEN) or give both the same value",
    );
    expect(differs.auth.token).toBe("own");
  });

  it("is the variable's, else the one the keys agree on, never echoing a token in the error", () => {
    const keys = (a?: string, b?: string) => [
      { key: "reward.server.auth.token", token: a },
      { key: "orchestrator.services.token", token: b },
    ];
    expect(agreedMeshToken(keys(), {})).toBeUndefined();
    expect(agreedMeshToken(keys(), { [AUTH_TOKEN_ENV]: "e" })).toBe("e");
    expect(agreedMeshToken(keys("e", "e"), { [AUTH_TOKEN_ENV]: "e" })).toBe("e");
    expect(agreedMeshToken(keys(undefined, "k"), {})).toBe("k");
    expect(() => agreedMeshToken(keys("secret-a", "secret-b"), {})).toThrow(
      /^orchestrator\.services\.token and reward\.server\.auth\.token give different tokens/,
    );
    const error = (() => {
      try {
        agreedMeshToken(keys("secret-a"), { [AUTH_TOKEN_ENV]: "secret-env" });
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(error).toContain("reward.server.auth.token and LEANGRPO_AUTH_TOKEN");
    expect(error).not.toMatch(/secret-/);
  });
});
