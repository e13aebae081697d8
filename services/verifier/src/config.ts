// Config of the verifier service: YAML file < LEANGRPO_VERIFIER_* env < flags < dotted overrides.
import { availableParallelism } from "node:os";
import { z } from "zod";
import { ServerConfigSchema } from "@lean-grpo/kit";
import { screenHeader } from "@lean-grpo/lean";

const MiB = 1024 * 1024;

const SandboxSchema = z
  .object({
    /**
     * "bwrap" (default): every REPL worker and every replay check runs under bubblewrap
     * (own user and PID namespaces, read-only toolchain, a private directory, no
     * network); the service does not start where bubblewrap cannot run. "none": no
     * sandbox (only the limits and, where permitted, no network), with a warning; for
     * hosts that confine the verifier otherwise, and for tests of other things.
     */
    mode: z.enum(["bwrap", "none"]).default("bwrap"),
    /** "isolate": no network for workers and checks; "allow" keeps the host's network. */
    network: z.enum(["isolate", "allow"]).default("isolate"),
    /** Absolute paths bound read-only besides the automatic ones (system, ELAN_HOME, repl.cwd, the command's absolute paths). */
    read_only: z.array(z.string().min(1)).default([]),
    /** Absolute paths bound writable into every sandbox; empty unless a tool needs one. */
    writable: z.array(z.string().min(1)).default([]),
    limits: z
      .object({
        /** RLIMIT_AS per worker, MiB; 0 = none; unset: 32768 with bwrap, none without. Mathlib maps 9-12 GiB of .olean files. */
        address_space_mb: z.number().int().min(0).optional(),
        /** RLIMIT_FSIZE per worker, MiB; 0 = none. */
        file_size_mb: z.number().int().min(0).default(1024),
        /** RLIMIT_NPROC, threads included; 0 = none; unset: 1024 with bwrap (counted per sandbox), none without (counted per user). */
        processes: z.number().int().min(0).optional(),
      })
      .strict()
      .prefault({}),
  })
  .strict();

const ReplayCheckerSchema = z
  .object({
    /**
     * argv of leanprover/comparator (the config file's path is appended), e.g.
     * [lake, env, /opt/comparator/.lake/build/bin/comparator], or one string split like
     * a shell would. Empty: the LEAN_REPLAY_CMD environment variable.
     */
    command: z.union([z.array(z.string().min(1)), z.string()]).default([]),
    /** The Lake workspace each check's project is made from (Mathlib built); default LEAN_REPLAY_WORKSPACE. */
    workspace: z.string().min(1).optional(),
    /** Extra environment variables for the checker (e.g. COMPARATOR_LANDRUN, COMPARATOR_LEAN4EXPORT). */
    env: z.record(z.string(), z.string()).default({}),
    /** Time limit of one replay (two sandboxed builds, two exports, the comparison and the kernel), ms. */
    timeout_ms: z.number().int().positive().default(600_000),
    /** Replays run at once; the rest wait (each builds against Mathlib: memory-heavy). */
    concurrency: z.number().int().min(1).default(1),
    /** Axioms a replayed proof may depend on. */
    permitted_axioms: z.array(z.string().min(1)).default(["propext", "Quot.sound", "Classical.choice"]),
  })
  .strict();

const ReplSchema = z
  .object({
    /**
     * argv of a leanprover-community/repl process, e.g. [lake, env, /opt/repl/.lake/build/bin/repl],
     * or one string split like a shell would. Empty: the LEAN_REPL_CMD environment variable, else no REPL.
     */
    command: z.union([z.array(z.string().min(1)), z.string()]).default([]),
    /** Working directory of the REPL (the Mathlib project for `lake env`); default LEAN_REPL_CWD, else the service's. */
    cwd: z.string().min(1).optional(),
    /** Extra environment variables for workers (they get only PATH, HOME, locale and Lean's own variables otherwise). */
    env: z.record(z.string(), z.string()).default({}),
    /** Worker processes; default: CPU cores - 1. */
    pool_size: z
      .number()
      .int()
      .min(1)
      .default(Math.max(1, availableParallelism() - 1)),
    /** Requests that may wait for a worker; beyond it RESOURCE_EXHAUSTED. */
    queue_capacity: z.number().int().min(0).default(256),
    /** Default time limit of one check (proof + #print axioms, or one tactic), ms. */
    timeout_ms: z.number().int().positive().default(60_000),
    /** Largest `timeout_ms` a request may ask for, ms. */
    max_timeout_ms: z.number().int().positive().default(600_000),
    /** Time limit for elaborating a header (`import Mathlib` takes seconds to minutes on a cold disk), ms. */
    header_timeout_ms: z.number().int().positive().default(300_000),
    /** Resident memory cap per worker (the process group), MiB; over it the worker is recycled. 0 = none. */
    memory_limit_mb: z.number().int().min(0).default(8192),
    /** How often busy workers' memory is sampled, ms. */
    memory_sample_ms: z.number().int().positive().default(1000),
    /** Recycle a worker after this many requests (the REPL never frees its snapshots); 0 = never. */
    max_requests_per_worker: z.number().int().min(0).default(1000),
    /** Headers each worker keeps elaborated (LRU). */
    header_cache_size: z.number().int().min(1).default(4),
    /** Headers every worker elaborates as soon as it starts, e.g. ["import Mathlib"]. */
    warm_headers: z.array(z.string()).default([]),
    /** Header for theorems that have neither `header` nor `imports`; "" = Lean core only. */
    default_header: z.string().default(""),
    /**
     * The only headers requests may use (compared after trimming), e.g. your dataset's
     * one header; empty = any header the header screen accepts (imports, `open`, a few
     * `set_option`s). Each must pass the screen itself: the list narrows, never widens.
     */
    allowed_headers: z.array(z.string()).default([]),
    /** Tactic-mode sessions idle this long are forgotten, ms. */
    session_idle_ms: z.number().int().positive().default(600_000),
    /** Ask the REPL for every tactic (`allTactics`), for the partial-progress signals. */
    all_tactics: z.boolean().default(true),
    /** Largest proof (or tactic) accepted, bytes; beyond it RESOURCE_EXHAUSTED. */
    max_proof_bytes: z
      .number()
      .int()
      .positive()
      .default(64 * 1024),
    /** Largest REPL response read, bytes; a worker that answers more is killed (output floods). */
    max_response_bytes: z
      .number()
      .int()
      .positive()
      .default(64 * MiB),
    sandbox: SandboxSchema.prefault({}),
    /**
     * The kernel replay tier: "proved" replays what the REPL would call PROVED (and only
     * a replay that agrees makes it PROVED), "always" replays every elaborated proof
     * (for audits; a REPL refusal still decides), "off" trusts the REPL's verdict.
     */
    replay: z.enum(["proved", "always", "off"]).default("proved"),
    replay_checker: ReplayCheckerSchema.prefault({}),
  })
  .strict()
  .superRefine((repl, context) => {
    // Headers the operator writes reach Lean too: the same screen as a request's.
    const headers: [string, string][] = [
      ["default_header", repl.default_header],
      ...repl.warm_headers.map((header, i): [string, string] => [`warm_headers[${i}]`, header]),
      ...repl.allowed_headers.map((header, i): [string, string] => [`allowed_headers[${i}]`, header]),
    ];
    for (const [key, header] of headers) {
      const screen = screenHeader(header);
      if (!screen.ok)
        context.addIssue({
          code: "custom",
          path: key
            .split(/[[\]]/)
            .filter(Boolean)
            .map((part) => (/^\d+$/.test(part) ? Number(part) : part)),
          message: screen.reason,
        });
    }
  });

export const VerifierConfigSchema = z
  .object({
    server: ServerConfigSchema.prefault({ port: 50052 }),
    repl: ReplSchema.prefault({}),
    metrics: z
      .object({
        /** Address of the Prometheus endpoint (plain HTTP/1.1, GET /metrics). */
        host: z.string().min(1).default("127.0.0.1"),
        /** Its port; unset = no endpoint, 0 = a free port. */
        port: z.number().int().min(0).max(65535).optional(),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type VerifierConfig = z.infer<typeof VerifierConfigSchema>;
export type ReplConfig = VerifierConfig["repl"];
