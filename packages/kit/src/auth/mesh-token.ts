// The one token a mesh shares: every service requires it of its callers once auth is on,
// and every client inside the mesh presents it. LEANGRPO_AUTH_TOKEN is its one name in the
// environment (compose, Kubernetes Secrets, a shell), and the rule every command follows:
// the variable is the mesh token, never a config key (config/sources.ts skips it); each
// service takes it as its server.auth.token and each client as the token it sends; a config
// that sets a token too must set the same one, or the process does not start.
import type { Interceptor } from "@connectrpc/connect";
import { bearerToken } from "./bearer-auth.js";

export const AUTH_TOKEN_ENV = "LEANGRPO_AUTH_TOKEN";

/** The mesh token from the environment, if set (an empty value counts as unset). */
export function envAuthToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const token = env[AUTH_TOKEN_ENV];
  return token ? token : undefined;
}

/** A token a config sets, with the key that sets it (named in the error). */
export interface ConfiguredToken {
  key: string;
  token: string | undefined;
}

/**
 * The mesh token: LEANGRPO_AUTH_TOKEN where it is set, else the one the config keys set;
 * undefined when none is. A key that sets a different token from the variable (or from
 * another key) is refused, naming both: a mesh whose services required one token while its
 * clients presented another would refuse every call, or keep a forgotten token alive.
 */
export function agreedMeshToken(configured: readonly ConfiguredToken[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  const given = configured.filter((c): c is { key: string; token: string } => c.token !== undefined);
  const fromEnv = envAuthToken(env);
  const reference = fromEnv === undefined ? given[0] : { key: AUTH_TOKEN_ENV, token: fromEnv };
  if (reference === undefined) return undefined;
  const other = given.find((c) => c.token !== reference.token);
  if (other)
    throw new Error(
      `${other.key} and ${reference.key} give different tokens; the mesh has one token: set it once (${AUTH_TOKEN_ENV}) or give both the same value`,
    );
  return reference.token;
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
 * (a server.auth.token set too must be the same), and a service that binds beyond loopback
 * without any token does not start: anyone who can reach the port could otherwise call it.
 */
export function requireAuthBeyondLoopback(server: { host: string; auth: { token?: string } }, env: NodeJS.ProcessEnv = process.env): void {
  const token = agreedMeshToken([{ key: "server.auth.token", token: server.auth.token }], env);
  if (token !== undefined) server.auth.token = token;
  if (server.auth.token === undefined && !isLoopbackHost(server.host)) throw new Error(noTokenBeyondLoopback(server.host));
}

/** What a server beyond loopback without a token is told. */
export function noTokenBeyondLoopback(host: string): string {
  return `server.host "${host}" is beyond loopback and no token is set: set ${AUTH_TOKEN_ENV} (or server.auth.token), which every caller then presents as "authorization: Bearer <token>"`;
}
