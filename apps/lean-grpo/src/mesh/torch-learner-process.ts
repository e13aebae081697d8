// The PyTorch learner (services/learner-torch) as a child process of the mesh: the same
// LearnerService contract on a loopback port, chosen by `services.learner.impl: torch`.
// It is a process, not a thread, because it is Python; it is started with the learner's
// resolved config (the TS learner's keys, server.tls and server.allow_plaintext among them)
// as JSON, announces its port on one stdout line, and is stopped with the mesh (SIGTERM,
// then SIGKILL once the grace period has passed).
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { AUTH_TOKEN_ENV, ConfigError, loadConfig } from "@lean-grpo/kit";
import { LearnerImplSchema, type LearnerImplSection } from "./torch-learner-config.js";
import { sectionConfigError } from "./section-error.js";

export interface TorchLearnerOptions {
  /** Python interpreter with torch, grpcio and protobuf. */
  python: string;
  /** Data-parallel ranks on this machine (torch.distributed.run); null: one plain process. */
  torchrun: { nproc_per_node: number } | null;
  /** The PyTorch learner's own `torch` config section (device, threads, blas_threads, ...), checked by it. */
  torchSection: Record<string, unknown> | null;
  /** Directory put on PYTHONPATH so `-m leangrpo_learner` resolves. */
  packageDir: string;
  /** How long to wait for the `listening on` line. */
  startTimeoutMs: number;
  /** How long SIGTERM may take before SIGKILL. */
  graceMs: number;
}

export interface TorchLearnerProcess {
  url: string;
  pid: number;
  /** SIGTERM, then SIGKILL after the grace period; resolves once the process has exited. */
  shutdown(): Promise<void>;
  /** The last lines the process wrote to stderr (its logs). */
  stderrTail(): string;
}

/** services/learner-torch of this checkout. */
export const TORCH_LEARNER_PACKAGE_DIR = fileURLToPath(new URL("../../../../services/learner-torch", import.meta.url));

const DEFAULTS: Omit<TorchLearnerOptions, "torchrun" | "torchSection"> = {
  python: "/usr/bin/python3",
  packageDir: TORCH_LEARNER_PACKAGE_DIR,
  startTimeoutMs: 180_000,
  graceMs: 10_000,
};
const TAIL_LINES = 40;
const LISTENING = /^listening on (\S+):(\d+)\s*$/;

/**
 * Splits a `services.learner` section into the learner's own config (the TS learner's schema,
 * which knows nothing of implementations) and, for `impl: torch`, how to start the Python one.
 * The implementation keys are checked by their schema (torch-learner-config.ts), naming the key.
 */
export function splitLearnerSection(
  service: string,
  section: Record<string, unknown> | undefined,
): { config: Record<string, unknown>; torch: TorchLearnerOptions | null } {
  if (service !== "learner") return { config: section ?? {}, torch: null };
  const { impl, python, torchrun, torch: torchSection, ...config } = section ?? {};
  const given = Object.fromEntries(Object.entries({ impl, python, torchrun, torch: torchSection }).filter(([, v]) => v !== undefined));
  let keys: LearnerImplSection;
  try {
    keys = loadConfig(LearnerImplSchema, { flags: given });
  } catch (error) {
    throw error instanceof ConfigError ? sectionConfigError(error, "services.learner") : error;
  }
  if (keys.impl === "ts") {
    for (const key of ["python", "torchrun", "torch"]) {
      if (given[key] !== undefined) throw new Error(`services.learner.${key} applies only to impl: torch (impl is ts)`);
    }
    return { config, torch: null };
  }
  return {
    config,
    torch: {
      ...DEFAULTS,
      python: keys.python,
      torchrun: keys.torchrun ? { nproc_per_node: keys.torchrun.nproc_per_node } : null,
      // As given: the PyTorch learner fills its own defaults (the schema's are the same, tested).
      torchSection: (torchSection as Record<string, unknown> | undefined) ?? null,
    },
  };
}

type TorchLearnerConfig = {
  server: { host: string; port: number; auth?: { token?: string }; tls?: { cert_file: string; key_file: string } };
};

/**
 * The command line: `python -m leangrpo_learner serve …`, under torch.distributed.run when ranks
 * are asked for. The token stays off it (any local user can read a command line): the child
 * gets it as LEANGRPO_AUTH_TOKEN (startTorchLearner).
 */
export function torchLearnerCommand(config: TorchLearnerConfig, options: TorchLearnerOptions): string[] {
  const serve = ["-m", "leangrpo_learner", "serve", "--host", config.server.host, "--port", String(config.server.port)];
  const launcher = options.torchrun
    ? // --standalone: a local rendezvous on a free port; the underscore spelling is the one torch 1.13 and 2.x both accept.
      ["-m", "torch.distributed.run", "--standalone", `--nproc_per_node=${options.torchrun.nproc_per_node}`]
    : [];
  const { auth: _auth, ...server } = config.server;
  const withoutToken = { ...config, server };
  const json = options.torchSection ? { ...withoutToken, torch: options.torchSection } : withoutToken;
  return [options.python, ...launcher, ...serve, "--config-json", JSON.stringify(json)];
}

export async function startTorchLearner(config: TorchLearnerConfig, options: TorchLearnerOptions): Promise<TorchLearnerProcess> {
  const [command, ...args] = torchLearnerCommand(config, options);
  const pythonPath = [options.packageDir, process.env.PYTHONPATH].filter(Boolean).join(":");
  // The mesh token as the learner reads it; without one, none (a parent's variable is the mesh's token, decided by the caller).
  const { [AUTH_TOKEN_ENV]: _inherited, ...env } = process.env;
  const token = config.server.auth?.token;
  const child = spawn(command!, args, {
    env: { ...env, ...(token === undefined ? {} : { [AUTH_TOKEN_ENV]: token }), PYTHONPATH: pythonPath, PYTHONUNBUFFERED: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const tail: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (line) => {
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
  });
  const stderrTail = () => tail.join("\n");
  // A mesh that dies without shutdown() must not leave the learner holding its port.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));

  let url: string;
  try {
    url = await listeningUrl(child, options, stderrTail, config.server.tls ? "https" : "http");
  } catch (error) {
    await stop(child, exited, options.graceMs);
    process.removeListener("exit", killOnExit);
    throw error;
  }
  return {
    url,
    pid: child.pid!,
    stderrTail,
    async shutdown() {
      await stop(child, exited, options.graceMs);
      process.removeListener("exit", killOnExit);
    },
  };
}

/** The URL its callers dial: https where server.tls is given (the learner serves TLS on the announced port). */
function listeningUrl(
  child: ChildProcess,
  options: TorchLearnerOptions,
  stderrTail: () => string,
  scheme: "http" | "https",
): Promise<string> {
  const what = `the PyTorch learner (${options.python} -m leangrpo_learner, PYTHONPATH ${options.packageDir})`;
  return new Promise<string>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      const logs = stderrTail();
      reject(new Error(`${what} ${why}${logs ? `; its stderr ended with:\n${logs}` : "; it wrote nothing to stderr"}`));
    };
    const timer = setTimeout(
      () => fail(`did not print "listening on <host>:<port>" within ${options.startTimeoutMs / 1000} s`),
      options.startTimeoutMs,
    );
    child.once("error", (error) => fail(`could not be started: ${error.message}`));
    child.once("exit", (code, signal) => fail(`exited with ${signal ?? `code ${code}`} before listening`));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const match = LISTENING.exec(line);
      if (!match) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      const host = match[1]!.includes(":") ? `[${match[1]}]` : match[1]!;
      resolve(`${scheme}://${host}:${match[2]}`);
    });
  });
}

async function stop(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.pid === undefined) return; // never started (e.g. no such interpreter)
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}
