// What confines a REPL worker. Proofs can run code at elaboration time (`#eval`,
// `run_tac`, ... are rejected before Lean runs, but the REPL's output is still
// treated as untrusted), so each worker gets, where the host allows:
//  - no network: a fresh network namespace (`unshare --net`, or with a user
//    namespace when not root); where neither is permitted the worker runs with the
//    host network and a warning is logged;
//  - resource limits (`prlimit`): no core dumps, a file-size cap, optionally an
//    address-space cap and a process cap;
//  - an environment holding only what Lean and Lake need (no secrets), with its
//    own temporary directory (created per worker incarnation by the worker).
// Read-only toolchain and Mathlib, a non-root user and cgroup limits come from the
// deployment (deploy/docker/lean-verifier.Dockerfile).
import { spawn } from "node:child_process";
import type { Logger } from "../logger.js";

export interface SandboxConfig {
  network: "isolate" | "allow";
  limits: {
    /** RLIMIT_AS in MiB; 0 = none. Counts mmapped .olean files: Mathlib needs >= 9-12 GiB. */
    address_space_mb: number;
    /** RLIMIT_FSIZE in MiB; 0 = none. */
    file_size_mb: number;
    /** RLIMIT_NPROC; 0 = none. Counts every process of the user, so set it only for a dedicated user. */
    processes: number;
  };
}

export interface Sandbox {
  /** The argv that runs `command` inside the sandbox. */
  wrap(command: readonly string[]): string[];
  /** What is enforced, for the start-up log and PoolStats readers. */
  enforced: string[];
}

/** Variables passed to workers; everything else in the service's environment stays out. */
const PASSED_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "ELAN_HOME",
  "ELAN_TOOLCHAIN",
  "LEAN_PATH",
  "LEAN_SRC_PATH",
  "LAKE_HOME",
];

/** A worker's environment: the passed variables, the configured extras, and its private temporary directory. */
export function workerEnvironment(
  source: NodeJS.ProcessEnv,
  extra: Readonly<Record<string, string>>,
  tmpDir: string | undefined,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of PASSED_ENV) if (source[name] !== undefined) env[name] = source[name];
  Object.assign(env, extra);
  if (tmpDir !== undefined) env.TMPDIR = env.TMP = env.TEMP = tmpDir;
  return env;
}

/** Ways to get a network namespace, most direct first. */
const NETWORK_NAMESPACE_FLAGS: readonly (readonly string[])[] = [
  ["--net"],
  ["--user", "--map-current-user", "--net"],
  ["--user", "--map-root-user", "--net"],
];

export type CommandRunner = (argv: readonly string[]) => Promise<boolean>;

/** Runs argv and says whether it exited 0 (false when it could not start). */
export const runQuietly: CommandRunner = (argv) =>
  new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: "ignore" });
    child.once("error", () => resolve(false));
    child.once("close", (code) => resolve(code === 0));
  });

/** Probes what this host permits and returns the sandbox; logs what could not be enforced. */
export async function prepareSandbox(
  config: SandboxConfig,
  logger: Pick<Logger, "warn">,
  run: CommandRunner = runQuietly,
): Promise<Sandbox> {
  const enforced: string[] = [];
  const prefix: string[] = [];

  const limits = ["--core=0"];
  if (config.limits.file_size_mb > 0) limits.push(`--fsize=${config.limits.file_size_mb * 1024 * 1024}`);
  if (config.limits.address_space_mb > 0) limits.push(`--as=${config.limits.address_space_mb * 1024 * 1024}`);
  if (config.limits.processes > 0) limits.push(`--nproc=${config.limits.processes}`);
  if (await run(["prlimit", ...limits, "--", "true"])) {
    prefix.push("prlimit", ...limits, "--");
    enforced.push(`resource limits (${limits.join(" ")})`);
  } else {
    logger.warn({ limits }, "prlimit is not available: REPL workers run without resource limits (core dumps, file size, address space)");
  }

  if (config.network === "isolate") {
    let flags: readonly string[] | undefined;
    for (const candidate of NETWORK_NAMESPACE_FLAGS) {
      if (await run(["unshare", ...candidate, "--", "true"])) {
        flags = candidate;
        break;
      }
    }
    if (flags) {
      prefix.push("unshare", ...flags, "--");
      enforced.push(`no network (unshare ${flags.join(" ")})`);
    } else {
      logger.warn(
        "this host does not permit network namespaces (unshare --net): REPL workers run WITH network access; run the verifier in a container without network (see deploy/docker/lean-verifier.Dockerfile)",
      );
    }
  }
  return { wrap: (command) => [...prefix, ...command], enforced };
}
