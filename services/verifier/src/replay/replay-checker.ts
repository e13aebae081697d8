// The replay tier: re-checks a proof the REPL accepted in a fresh process that the
// proof's code never ran in (reference/lean-verification.md §3: the tiers above
// `#print axioms` in Lean's manual). The tool is leanprover/comparator, the Lean
// FRO's checker for unreviewed AI proofs (why, and how the image builds it: README,
// "The verdict"). At most `concurrency` checks run at once; the rest wait.
import { tmpdir } from "node:os";
import type { Logger } from "../logger.js";
import { workerEnvironment, type Sandbox } from "../repl/sandbox.js";
import type { CheckedSource } from "../verdict/proof-source.js";
import type { TheoremTarget } from "../verdict/theorem-target.js";
import { makeCheckDirectory, CONFIG_FILE } from "./check-directory.js";
import { runChecker } from "./checker-process.js";
import { replayModules } from "./replay-modules.js";
import { readReplayOutcome, type ReplayOutcome } from "./replay-outcome.js";

export interface ReplayCheckerOptions {
  /** argv of comparator (e.g. [lake, env, /opt/comparator/.lake/build/bin/comparator]); the config file is appended. */
  argv: readonly string[];
  /** The Lake workspace template each check directory is made from; undefined: an empty directory. */
  workspace: string | undefined;
  /** Where check directories are made. */
  workDir?: string;
  env: Readonly<Record<string, string>>;
  timeoutMs: number;
  concurrency: number;
  permittedAxioms: readonly string[];
  /** What confines each check (the REPL workers' sandbox; the check directory is its private directory). */
  sandbox: Sandbox;
  logger: Logger;
}

export interface ReplayCounts {
  replays: number;
  /** Refusals of proofs the REPL had called PROVED. */
  refusals: number;
}

export class ReplayChecker {
  private running = 0;
  /** Aborts the checks under way when the service stops: each kills its checker's process group. */
  private readonly stopping = new AbortController();
  private readonly waiting: (() => void)[] = [];
  readonly counts: ReplayCounts = { replays: 0, refusals: 0 };

  constructor(private readonly options: ReplayCheckerOptions) {}

  /** Replays `source` against the challenge made from `target`. */
  async check(target: TheoremTarget, source: CheckedSource, callerSignal?: AbortSignal): Promise<ReplayOutcome> {
    const signal = callerSignal ? AbortSignal.any([callerSignal, this.stopping.signal]) : this.stopping.signal;
    await this.acquire(signal);
    try {
      const directory = makeCheckDirectory(
        this.options.workDir ?? tmpdir(),
        this.options.workspace,
        replayModules(target, source, this.options.permittedAxioms),
      );
      try {
        const env = checkerEnvironment(this.options.env, directory.path, this.options.sandbox);
        const run = await runChecker({
          argv: this.options.sandbox.wrap({
            command: [...this.options.argv, CONFIG_FILE],
            cwd: directory.path,
            privateDir: directory.path,
            env,
            // The template's Mathlib, linked from the check directory, and the paths comparator's variables name.
            readOnly: [...(this.options.workspace === undefined ? [] : [this.options.workspace]), ...absolutePaths(env)],
          }),
          cwd: directory.path,
          env,
          timeoutMs: this.options.timeoutMs,
          signal,
        });
        signal?.throwIfAborted();
        const outcome = readReplayOutcome(run);
        this.counts.replays++;
        if (outcome.kind === "failed")
          this.options.logger.error({ theorem: target.fullName, reason: outcome.reason }, "the kernel replay could not check a proof");
        return outcome;
      } finally {
        await directory.remove();
      }
    } finally {
      this.release();
    }
  }

  /** Stops every checker under way (their process groups are killed) and refuses new checks. */
  close(): void {
    this.stopping.abort(new Error("the verifier is shutting down"));
  }

  /** Counts a refusal of a proof the REPL had accepted, and raises the alarm in the log. */
  recordRefusalAfterProved(target: TheoremTarget, reason: string): void {
    this.counts.refusals++;
    this.options.logger.warn(
      { theorem: target.fullName, reason },
      "EXPLOIT CAUGHT: the kernel replay refused a proof the REPL called PROVED",
    );
  }

  /** A replay accepted what the REPL refused: the tiers disagree (the REPL's verdict stands). */
  recordDisagreement(target: TheoremTarget, replReason: string): void {
    this.options.logger.warn({ theorem: target.fullName, repl: replReason }, "the kernel replay accepted a proof the REPL refused");
  }

  private async acquire(signal?: AbortSignal): Promise<void> {
    if (this.running < this.options.concurrency) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = this.waiting.indexOf(grant);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal!.reason);
      };
      const grant = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(grant);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

/** The REPL workers' minimal environment, comparator's own variables (COMPARATOR_LANDRUN, _LEAN4EXPORT, _NANODA), and the configured ones. */
function checkerEnvironment(extra: Readonly<Record<string, string>>, checkDirectory: string, sandbox: Sandbox): NodeJS.ProcessEnv {
  const comparator = Object.fromEntries(
    Object.entries(process.env).filter(([name, value]) => name.startsWith("COMPARATOR_") && value !== undefined),
  ) as Record<string, string>;
  return workerEnvironment(process.env, { ...comparator, ...extra }, checkDirectory, sandbox.mode);
}

/** Values of the checker's own variables that are absolute paths (COMPARATOR_LANDRUN=/usr/local/bin/landrun, …): it must read them. */
function absolutePaths(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env).flatMap(([name, value]) => (name.startsWith("COMPARATOR_") && value?.startsWith("/") ? [value] : []));
}
