// Auth for what `lean-grpo serve`, `train` and `eval` start: one token for the mesh, on whenever
// a service binds beyond loopback or a token is given. The token is, in order: LEANGRPO_AUTH_TOKEN;
// the token the config sets (server.auth.token, services.token, verifier.token: one value, the
// variable's where both are given, else refused); or, when a service binds beyond
// loopback and none is given, the one in the token file, created there (random, mode 0600)
// if absent, so that every process started in the same directory (a topology's replicas, a
// restart) shares it. Each service then requires it, and the clients inside the mesh (the
// orchestrator's, the reward service's) present it.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { agreedMeshToken, AUTH_TOKEN_ENV, envAuthToken, isLoopbackHost, type ConfiguredToken } from "@lean-grpo/kit";

/** Where a generated token is kept, relative to the working directory. */
export const DEFAULT_TOKEN_FILE = path.join(".lean-grpo", "auth-token");

export interface MeshAuth {
  /** The token every service requires; undefined: auth is off (every service on loopback, none set). */
  token?: string;
  /** Where it came from, for the operator. */
  source: "env" | "config" | "file" | "none";
  /** The token file, when the token is in it. */
  file?: string;
}

type ServiceConfigs = Record<string, unknown>;
interface WithServer {
  server: { host: string; auth: { token?: string } };
}

export function applyMeshAuth(configs: ServiceConfigs, options: { env?: NodeJS.ProcessEnv; tokenFile?: string } = {}): MeshAuth {
  const env = options.env ?? process.env;
  const services = Object.entries(configs).filter((entry): entry is [string, WithServer] => hasServer(entry[1]));
  const orchestrator = configs.orchestrator as { services?: { token?: string } } | undefined;
  const reward = configs.reward as { verifier?: { token?: string } } | undefined;
  // Every key that sets a token, servers' and clients' alike: they and LEANGRPO_AUTH_TOKEN must agree.
  const configured: ConfiguredToken[] = [
    ...services.map(([name, c]) => ({ key: `${name}.server.auth.token`, token: c.server.auth.token })),
    { key: "orchestrator.services.token", token: orchestrator?.services?.token },
    { key: "reward.verifier.token", token: reward?.verifier?.token },
  ];
  const agreed = agreedMeshToken(configured, env);
  let auth: MeshAuth = { source: "none" };
  if (envAuthToken(env) !== undefined) auth = { token: agreed, source: "env" };
  else if (agreed !== undefined) auth = { token: agreed, source: "config" };
  else if (services.some(([, c]) => !isLoopbackHost(c.server.host))) {
    const file = path.resolve(options.tokenFile ?? DEFAULT_TOKEN_FILE);
    auth = { token: readOrCreateToken(file), source: "file", file };
  }
  if (auth.token === undefined) return auth;
  for (const [, config] of services) config.server.auth.token ??= auth.token;
  if (orchestrator?.services) orchestrator.services.token ??= auth.token;
  if (reward?.verifier) reward.verifier.token ??= auth.token;
  return auth;
}

/**
 * The mesh token for a client of a mesh started elsewhere (the dashboard's relay):
 * LEANGRPO_AUTH_TOKEN, else the token file `serve` generated in this directory, if there is one.
 */
export function findMeshToken(options: { env?: NodeJS.ProcessEnv; tokenFile?: string } = {}): MeshAuth {
  const token = envAuthToken(options.env ?? process.env);
  if (token !== undefined) return { token, source: "env" };
  const file = path.resolve(options.tokenFile ?? DEFAULT_TOKEN_FILE);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { source: "none" };
    throw new Error(`cannot read the mesh token file ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const fromFile = text.trim();
  return fromFile ? { token: fromFile, source: "file", file } : { source: "none" };
}

/** What the operator is told: whether auth is on and where the token is. */
export function describeMeshAuth(auth: MeshAuth): string {
  if (auth.token === undefined) return "auth   off (every service on loopback; set LEANGRPO_AUTH_TOKEN to require a token)";
  const where =
    auth.source === "file"
      ? `the token is in ${auth.file} (clients: export ${AUTH_TOKEN_ENV}="$(cat ${auth.file})")`
      : auth.source === "env"
        ? `the token is ${AUTH_TOKEN_ENV}`
        : "the token is the configured server.auth.token";
  return `auth   on: every call but health and reflection needs "authorization: Bearer <token>"; ${where}`;
}

function readOrCreateToken(file: string): string {
  try {
    const token = readFileSync(file, "utf8").trim();
    if (token) return token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString("base64url");
  try {
    // wx: of two processes starting together, one writes and the other reads what it wrote.
    writeFileSync(file, `${token}\n`, { mode: 0o600, flag: "wx" });
    return token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return readFileSync(file, "utf8").trim();
  }
}

function hasServer(config: unknown): config is WithServer {
  const server = (config as { server?: { host?: unknown; auth?: unknown } } | undefined)?.server;
  return typeof server?.host === "string" && typeof server.auth === "object" && server.auth !== null;
}
