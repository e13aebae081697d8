// What confines a REPL worker and a replay check. A proof's code can run while Lean
// elaborates it (`#eval`, `run_tac`, … are refused by the screen, but the REPL's
// output is still treated as untrusted), so each one runs, with `mode: bwrap`
// (bubblewrap, the default), in:
//  - its own user, PID, IPC, UTS, cgroup and mount namespaces, as an unprivileged
//    user with no capabilities: other processes (the verifier, other workers) are not
//    visible, so neither is their /proc/<pid>/environ;
//  - a file system of read-only binds only: the system's programs and libraries, a
//    few files of /etc, the Lean toolchain (ELAN_HOME), the REPL's or the checker's
//    project, every absolute path of its command, and `read_only` extras; plus an
//    empty private /tmp, and its own private writable directory (one per worker
//    incarnation, one per replay) bound at the same path;
//  - no network (a fresh, empty network namespace) unless `network: allow`;
//  - resource limits set inside (prlimit): no core dumps, a file-size cap, an
//    address-space cap and a process cap;
//  - an environment holding only what Lean and Lake need (no secrets).
// `mode: none` runs without bubblewrap: only the limits, a network namespace where
// the host permits one, and the environment; the operator must ask for it, and the
// service says at start-up what that leaves open.
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { Logger } from "../logger.js";

export interface SandboxConfig {
  mode: "bwrap" | "none";
  network: "isolate" | "allow";
  /** Extra paths bound read-only (bwrap mode), e.g. a Mathlib project outside the REPL's working directory. */
  read_only: string[];
  /** Extra paths bound writable (bwrap mode); every sandbox shares them, so keep this empty unless a tool needs it. */
  writable: string[];
  limits: {
    /** RLIMIT_AS in MiB; 0 = none; unset = 32768 with bwrap, none without. Counts mmapped .olean files: Mathlib needs >= 9-12 GiB. */
    address_space_mb?: number | undefined;
    /** RLIMIT_FSIZE in MiB; 0 = none. */
    file_size_mb: number;
    /** RLIMIT_NPROC (threads count too); 0 = none; unset = 1024 with bwrap (per sandbox), none without (per user). */
    processes?: number | undefined;
  };
}

/** One program to run inside the sandbox. */
export interface SandboxedCommand {
  command: readonly string[];
  /** Its working directory: bound read-only (the REPL's project) unless it is `privateDir`. */
  cwd: string;
  /** Its own writable directory (TMPDIR, HOME), bound at the same path. */
  privateDir: string;
  /** The environment it gets (built by workerEnvironment). */
  env: NodeJS.ProcessEnv;
  /** More paths it needs to read (e.g. the replay workspace). */
  readOnly?: readonly string[];
}

export interface Sandbox {
  readonly mode: SandboxConfig["mode"];
  /** The argv that runs `spec.command` inside the sandbox. */
  wrap(spec: SandboxedCommand): string[];
  /** What is enforced, for the start-up log. */
  readonly enforced: readonly string[];
}

/** The sandbox cannot be set up as configured: the service does not start. */
export class SandboxUnavailable extends Error {
  override name = "SandboxUnavailable";
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

/**
 * A worker's environment: the passed variables, the configured extras, and its private
 * temporary directory. With bubblewrap HOME is the private directory too (the real one
 * is not in the sandbox) and ELAN_HOME stays where the toolchain is.
 */
export function workerEnvironment(
  source: NodeJS.ProcessEnv,
  extra: Readonly<Record<string, string>>,
  privateDir: string | undefined,
  mode: SandboxConfig["mode"] = "none",
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of PASSED_ENV) if (source[name] !== undefined) env[name] = source[name];
  if (mode === "bwrap") {
    const elan = elanHome(source);
    if (elan !== undefined) env.ELAN_HOME = elan;
    if (privateDir !== undefined) env.HOME = privateDir;
  }
  Object.assign(env, extra);
  if (privateDir !== undefined) env.TMPDIR = env.TMP = env.TEMP = privateDir;
  return env;
}

/** Where elan keeps the toolchains, if it is installed. */
function elanHome(env: NodeJS.ProcessEnv): string | undefined {
  const home = env.ELAN_HOME ?? join(env.HOME ?? homedir(), ".elan");
  return existsSync(home) ? home : undefined;
}

/** The system's programs and libraries, bound read-only (symlinks, as on merged-/usr systems, are recreated). */
const SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
/** Files of /etc programs read at start (the dynamic loader, user names, time zone); no secrets. */
const ETC_PATHS = [
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/alternatives",
  "/etc/passwd",
  "/etc/group",
  "/etc/localtime",
];

/** An unprivileged user inside the sandbox's user namespace. */
const SANDBOX_ID = "65534";

/** Ways to get a network namespace without bubblewrap, most direct first. */
const NETWORK_NAMESPACE_FLAGS: readonly (readonly string[])[] = [
  ["--net"],
  ["--user", "--map-current-user", "--net"],
  ["--user", "--map-root-user", "--net"],
];

/** Runs argv to completion: whether it exited 0, and what it wrote to stderr. */
export type CommandRunner = (argv: readonly string[]) => { ok: boolean; stderr: string };

export const runQuietly: CommandRunner = (argv) => {
  const result = spawnSync(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000, encoding: "utf8" });
  return { ok: result.status === 0, stderr: (result.stderr ?? result.error?.message ?? "").trim() };
};

/**
 * Checks what the host permits and returns the sandbox. With `mode: bwrap` a host where
 * bubblewrap cannot run is an error (SandboxUnavailable): the service refuses to start
 * rather than run proofs unconfined. `mode: none` logs what it leaves open.
 */
export function prepareSandbox(config: SandboxConfig, logger: Pick<Logger, "warn">, run: CommandRunner = runQuietly): Sandbox {
  const bwrap = config.mode === "bwrap";
  const processes = config.limits.processes ?? (bwrap ? 1024 : 0);
  const addressSpaceMb = config.limits.address_space_mb ?? (bwrap ? 32 * 1024 : 0);
  const limits = ["--core=0"];
  if (config.limits.file_size_mb > 0) limits.push(`--fsize=${config.limits.file_size_mb * 1024 * 1024}`);
  if (addressSpaceMb > 0) limits.push(`--as=${addressSpaceMb * 1024 * 1024}`);
  if (processes > 0) limits.push(`--nproc=${processes}`);
  return bwrap ? bubblewrap(config, limits, logger, run) : unconfined(config, limits, logger, run);
}

function bubblewrap(config: SandboxConfig, limits: readonly string[], logger: Pick<Logger, "warn">, run: CommandRunner): Sandbox {
  const missing = [...config.read_only, ...config.writable].filter((path) => !isAbsolute(path) || !existsSync(path));
  if (missing.length > 0) {
    throw new SandboxUnavailable(
      `repl.sandbox.read_only/writable: ${missing.join(", ")} ${missing.length === 1 ? "is not an existing absolute path" : "are not existing absolute paths"}`,
    );
  }
  const base = baseArguments(config);
  // The probe is the real thing: the same namespaces, binds and limits around `true`.
  const probe = run(["bwrap", ...base, "--", "prlimit", ...limits, "--", "true"]);
  if (!probe.ok) {
    throw new SandboxUnavailable(
      `repl.sandbox.mode is "bwrap" but bubblewrap cannot run here${probe.stderr ? ` (${probe.stderr})` : ""}: install it ` +
        "(Debian: apt-get install bubblewrap) and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; " +
        "in a container, seccomp and AppArmor profiles that permit them and an unmasked /proc: docs/guide/security.md), " +
        "or set repl.sandbox.mode: none to run Lean without the sandbox (proofs' code could then read the verifier's " +
        "environment and other workers' files)",
    );
  }
  if (process.getuid?.() === 0 && limits.some((limit) => limit.startsWith("--nproc"))) {
    logger.warn(
      "the verifier runs as root: the kernel does not apply the sandbox's process limit (RLIMIT_NPROC) to root; run it as an unprivileged user",
    );
  }
  const enforced = [
    `bubblewrap: own user, PID, IPC, UTS and mount namespaces; read-only system and toolchain; a private /tmp and directory${config.network === "isolate" ? "; no network" : ""}`,
    `resource limits (${limits.join(" ")})`,
  ];
  return {
    mode: "bwrap",
    enforced,
    wrap(spec) {
      const readOnly = [spec.cwd, ...(spec.readOnly ?? []), ...spec.command.filter((arg) => isAbsolute(arg)), ...config.read_only];
      const elan = spec.env.ELAN_HOME;
      if (elan !== undefined) readOnly.push(elan);
      const binds: string[] = [];
      for (const path of new Set(readOnly)) {
        if (path !== spec.privateDir && existsSync(path)) binds.push("--ro-bind", path, path);
      }
      for (const path of config.writable) binds.push("--bind", path, path);
      binds.push("--bind", spec.privateDir, spec.privateDir);
      return ["bwrap", ...base, ...binds, "--chdir", spec.cwd, "--", "prlimit", ...limits, "--", ...spec.command];
    },
  };
}

/** bubblewrap's arguments common to every sandbox: namespaces, identity, the system's files, /proc, /dev, /tmp. */
function baseArguments(config: SandboxConfig): string[] {
  const args = ["--unshare-all", ...(config.network === "allow" ? ["--share-net"] : []), "--uid", SANDBOX_ID, "--gid", SANDBOX_ID];
  // Killed with the worker (its process group gets SIGKILL); a fresh session so it cannot write to the verifier's terminal.
  args.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
  for (const path of [...SYSTEM_PATHS, ...ETC_PATHS]) {
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push("--symlink", readlinkSync(path), path);
    else args.push("--ro-bind", path, path);
  }
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  return args;
}

function unconfined(config: SandboxConfig, limits: readonly string[], logger: Pick<Logger, "warn">, run: CommandRunner): Sandbox {
  logger.warn(
    "repl.sandbox.mode is none: Lean runs as the verifier's user, in its file system and process namespace (a proof's code could read " +
      "the verifier's environment, other workers' and replays' files); use mode bwrap wherever proofs come from a model or a client",
  );
  const enforced: string[] = [];
  const prefix: string[] = [];
  if (run(["prlimit", ...limits, "--", "true"]).ok) {
    prefix.push("prlimit", ...limits, "--");
    enforced.push(`resource limits (${limits.join(" ")})`);
  } else {
    logger.warn({ limits }, "prlimit is not available: REPL workers run without resource limits (core dumps, file size, address space)");
  }
  if (config.network === "isolate") {
    const flags = NETWORK_NAMESPACE_FLAGS.find((candidate) => run(["unshare", ...candidate, "--", "true"]).ok);
    if (flags) {
      prefix.push("unshare", ...flags, "--");
      enforced.push(`no network (unshare ${flags.join(" ")})`);
    } else {
      logger.warn(
        "this host does not permit network namespaces (unshare --net): REPL workers run WITH network access; run the verifier in a container without network (see deploy/docker/lean-verifier.Dockerfile)",
      );
    }
  }
  return { mode: "none", enforced, wrap: (spec) => [...prefix, ...spec.command] };
}
