// The one token a mesh shares: every service requires it of its callers once auth is on,
// and every client inside the mesh presents it. LEANGRPO_AUTH_TOKEN is its one name in the
// environment (compose, Kubernetes Secrets, a shell): each service takes it as its
// server.auth.token and as the token it sends, unless the config sets those itself.
import type { Interceptor } from "@connectrpc/connect";
import { bearerToken } from "./bearer-auth.js";

export const AUTH_TOKEN_ENV = "LEANGRPO_AUTH_TOKEN";

/** The mesh token from the environment, if set (an empty value counts as unset). */
export function envAuthToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const token = env[AUTH_TOKEN_ENV];
  return token ? token : undefined;
}

/** The interceptors a client adds to present `token` (none without one). */
export function callerAuth(token: string | undefined): Interceptor[] {
  return token ? [bearerToken(token)] : [];
}

/** Whether a bind address reaches only this machine: 127.0.0.0/8, ::1 or localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) || bare === "::ffff:127.0.0.1";
}

/**
 * A service process's own rule (run-service.ts): LEANGRPO_AUTH_TOKEN is its server.auth.token
 * unless the config sets one, and a service that binds beyond loopback without any token
 * does not start: anyone who can reach the port could otherwise call it.
 */
export function requireAuthBeyondLoopback(server: { host: string; auth: { token?: string } }, env: NodeJS.ProcessEnv = process.env): void {
  server.auth.token ??= envAuthToken(env);
  if (server.auth.token === undefined && !isLoopbackHost(server.host))
    throw new Error(
      `server.host "${server.host}" is beyond loopback and no token is set: set ${AUTH_TOKEN_ENV} (or server.auth.token), which every caller then presents as "authorization: Bearer <token>"`,
    );
}
