// One member of the pool: a REPL process and what lives in it (elaborated headers,
// tactic-mode proof states). Each incarnation of the process is a `generation`;
// when the process ends for any reason everything it held is gone, the pool is told
// why, and a new incarnation starts (at once, or after a growing delay when the
// REPL keeps dying before answering anything).
import { mkdtempSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "../logger.js";
import type { ReplMessage, ReplRequest, ReplResponse } from "../repl/protocol.js";
import { ReplFailure, ReplUnavailable, type EndKind } from "../repl/repl-failure.js";
import type { ProcessExit, ReplProcess, SendOptions } from "../repl/repl-process.js";
import type { TokenTable } from "@lean-grpo/lean";
import { readTokenTableAnswer, TOKEN_TABLE_QUERY } from "../repl/token-table-query.js";
import { HeaderCache } from "./header-cache.js";
import type { TokenTables } from "./token-tables.js";

export type WorkerState = "starting" | "idle" | "busy" | "restarting" | "stopped";

/** What a job gets while it holds a worker: the header's env and the REPL. */
export interface WorkerLease {
  /** The env of the job's header; undefined for a job without one (a tactic on an existing proof state). */
  readonly headerEnv: number | undefined;
  /** The token table of the job's header as Lean reported it (or the fallback), for the screen. */
  readonly tokenTable: TokenTable;
  send(request: ReplRequest, options?: SendOptions): Promise<ReplResponse>;
}

export interface WorkerJob<T> {
  /** The import header the job runs on top of; elaborated first unless this worker has it cached. */
  header?: string;
  signal?: AbortSignal;
  run(lease: WorkerLease): Promise<T>;
}

/**
 * Lean refused a header (its elaboration reported errors); the worker itself is fine.
 * The message is fixed: Lean's own words about a header go to the log only, since a
 * header's text chooses what they quote (a file's contents, an environment variable).
 */
export class HeaderRejected extends Error {
  override name = "HeaderRejected";
  constructor(
    readonly header: string,
    /** Lean's messages: for the log, never for the client. */
    readonly messages: ReplMessage[],
  ) {
    super(
      "Lean could not elaborate the header; check that every imported module exists in the verifier's Lean project (details are in the verifier's log)",
    );
  }
}

export interface WorkerOptions {
  id: number;
  /** Starts a REPL process whose temporary directory is `tmpDir`. */
  spawn(tmpDir: string): ReplProcess;
  warmHeaders: readonly string[];
  headerTimeoutMs: number;
  headerCacheSize: number;
  /** Shared by the pool: each header's token table, read by the first worker that warms it. */
  tokenTables: TokenTables;
  logger: Logger;
  /** The worker can take work (after a start or restart). */
  onReady(worker: ReplWorker): void;
  /** Its process ended; headers and proof states of that generation are gone. */
  onEnded(worker: ReplWorker, kind: EndKind, detail: string): void;
}

/** A REPL that dies before answering this many starts in a row is reported as unable to start. */
const FAILED_STARTS_BEFORE_UNAVAILABLE = 3;
/** Generations whose end a worker remembers for calls pinned to them. */
const REMEMBERED_ENDS = 8;

/** Workers' temporary directories, removed if this process exits without stopping its pools. */
const liveTmpDirs = new Set<string>();
let exitHookInstalled = false;

function trackTmpDir(dir: string): void {
  liveTmpDirs.add(dir);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const live of liveTmpDirs) rmSync(live, { recursive: true, force: true });
  });
}

export class ReplWorker {
  readonly id: number;
  state: WorkerState = "restarting";
  generation = 0;
  /** How recent generations ended (endOf). */
  private readonly ends = new Map<number, EndKind>();
  /** Requests served by this generation (headers not counted). */
  requests = 0;
  lastUsed = 0;
  rssBytes = 0;
  /** Why the REPL cannot be started, after repeated failed starts; cleared by the next answer. */
  startError: string | undefined;
  private repl: ReplProcess | undefined;
  private readonly headers: HeaderCache;
  private failedStarts = 0;
  private respawnTimer: NodeJS.Timeout | undefined;
  /** Settles once the current process has ended and its temporary directory is gone. */
  private cleanedUp: Promise<void> = Promise.resolve();

  constructor(private readonly options: WorkerOptions) {
    this.id = options.id;
    this.headers = new HeaderCache(options.headerCacheSize);
  }

  /** The process group to watch and kill (the leader's pid, as it is spawned detached). */
  get processGroup(): number | undefined {
    return this.repl?.pid;
  }

  get alive(): boolean {
    return this.repl !== undefined && !this.repl.ended;
  }

  hasHeader(header: string | undefined): boolean {
    return header !== undefined && this.headers.has(header);
  }

  /** How `generation` ended, for a call pinned to it that comes after (tactic sessions); "crash" when not remembered. */
  endOf(generation: number): EndKind {
    return this.ends.get(generation) ?? "crash";
  }

  cachedHeaders(): string[] {
    return this.headers.headers();
  }

  start(): void {
    if (this.state === "stopped") return;
    this.generation++;
    this.requests = 0;
    this.rssBytes = 0;
    this.headers.clear();
    this.state = "starting";
    let tmpDir: string;
    try {
      tmpDir = mkdtempSync(join(tmpdir(), `lean-grpo-repl-${this.id}-`));
    } catch (error) {
      // No private temporary directory, no worker: retried like a command that cannot start.
      const reason = `the worker's temporary directory could not be created: ${(error as Error).message}`;
      this.markUnstartable(reason);
      this.state = "restarting";
      this.ended("crash", reason);
      this.scheduleStart();
      return;
    }
    trackTmpDir(tmpDir);
    const repl = this.options.spawn(tmpDir);
    this.repl = repl;
    this.cleanedUp = repl.exited.then(async (exit) => {
      this.onExit(repl, exit);
      await rm(tmpDir, { recursive: true, force: true }).catch(() => {});
      liveTmpDirs.delete(tmpDir);
    });
    // No pid: the spawn failed, and `exited` reports why.
    if (repl.pid !== undefined) void this.warm(repl);
  }

  /** Runs a job: elaborates its header unless cached, then the job itself. */
  async execute<T>(job: WorkerJob<T>): Promise<{ value: T; headerMs: number }> {
    const repl = this.repl;
    if (!repl) throw new ReplFailure("crash", "the worker has no REPL process");
    let headerMs = 0;
    let headerEnv = job.header === undefined ? undefined : this.headers.get(job.header);
    if (job.header !== undefined && headerEnv === undefined) {
      const started = performance.now();
      headerEnv = await this.elaborateHeader(repl, job.header);
      headerMs = performance.now() - started;
    }
    // The header is not cancelled with the call (it passed the header screen, so it is
    // only imports, `open`s and bounded options, and it warms the worker for the next
    // request); the proof is.
    job.signal?.throwIfAborted();
    const tokenTable = this.options.tokenTables.get(job.header);
    const value = await job.run({ headerEnv, tokenTable, send: (request, options) => repl.send(request, options) });
    this.requests++;
    return { value, headerMs };
  }

  /** Ends the current process with `kind` (e.g. over its memory cap); a new one starts. */
  recycle(kind: EndKind, detail: string): void {
    this.repl?.kill(new ReplFailure(kind, detail));
  }

  async stop(): Promise<void> {
    this.state = "stopped";
    if (this.respawnTimer) clearTimeout(this.respawnTimer);
    this.repl?.kill(new ReplFailure("shutdown", "the verifier is shutting down"));
    await this.cleanedUp;
  }

  private async warm(repl: ReplProcess): Promise<void> {
    for (const header of this.options.warmHeaders) {
      try {
        await this.elaborateHeader(repl, header);
      } catch (error) {
        if (repl.ended) return; // onExit takes over
        this.options.logger.error({ worker: this.id, header, err: error }, "a warm header did not elaborate");
      }
    }
    if (this.repl === repl && !repl.ended && this.state === "starting") {
      this.state = "idle";
      this.options.onReady(this);
    }
  }

  private async elaborateHeader(repl: ReplProcess, header: string): Promise<number> {
    let response: ReplResponse;
    try {
      response = await repl.send({ cmd: header }, { deadline: Date.now() + this.options.headerTimeoutMs });
    } catch (error) {
      if (error instanceof ReplFailure && error.kind === "crash" && repl.responses === 0) {
        throw new ReplUnavailable(`the REPL died before answering its first request: ${error.message}`);
      }
      if (error instanceof ReplFailure && error.kind === "timeout") {
        throw new ReplFailure("timeout", `elaborating the header ran past ${this.options.headerTimeoutMs} ms (repl.header_timeout_ms)`);
      }
      throw error;
    }
    this.failedStarts = 0;
    this.startError = undefined;
    const rejected = (messages: ReplMessage[]): HeaderRejected => {
      this.options.logger.warn({ worker: this.id, header, messages }, "Lean refused a header");
      return new HeaderRejected(header, messages);
    };
    if (response.kind === "error") throw rejected([{ severity: "error", pos: { line: 0, column: 0 }, data: response.response.message }]);
    if (response.kind !== "command") throw rejected([]);
    const errors = (response.response.messages ?? []).filter((message) => message.severity === "error");
    if (errors.length > 0) throw rejected(errors);
    this.headers.set(header, response.response.env);
    if (!this.options.tokenTables.has(header)) await this.readTokenTable(repl, header, response.response.env);
    return response.response.env;
  }

  /** Asks Lean for the header's token table (the service's own query, before any proof runs on this env). */
  private async readTokenTable(repl: ReplProcess, header: string, env: number): Promise<void> {
    let answer: ReplResponse;
    try {
      answer = await repl.send({ cmd: TOKEN_TABLE_QUERY, env }, { deadline: Date.now() + this.options.headerTimeoutMs });
    } catch (error) {
      this.options.tokenTables.useFallback(header, error instanceof Error ? error.message : String(error));
      throw error;
    }
    const read = readTokenTableAnswer(answer);
    if (read.ok) this.options.tokenTables.set(header, read.table);
    else this.options.tokenTables.useFallback(header, read.reason);
  }

  private onExit(repl: ReplProcess, exit: ProcessExit): void {
    if (this.repl !== repl) return;
    this.repl = undefined;
    if (this.state === "stopped") return;
    const kind: EndKind = exit.failure instanceof ReplFailure ? exit.failure.kind : "crash";
    if (exit.responses > 0) this.failedStarts = 0;
    // A command that cannot be spawned will not start on a retry either.
    else if (exit.failure instanceof ReplUnavailable) this.markUnstartable(exit.failure.message);
    else this.failedStarts++;
    if (this.failedStarts >= FAILED_STARTS_BEFORE_UNAVAILABLE) this.startError = exit.failure.message;
    this.state = "restarting";
    this.ended(kind, exit.failure.message);
    this.scheduleStart();
  }

  private ended(kind: EndKind, detail: string): void {
    this.ends.set(this.generation, kind);
    // Pinned calls come within a tactic's time of the end: a few generations are plenty.
    if (this.ends.size > REMEMBERED_ENDS) this.ends.delete(this.ends.keys().next().value!);
    this.options.onEnded(this, kind, detail);
  }

  /** A start that cannot succeed as things are; the pool answers UNAVAILABLE while every worker is so. */
  private markUnstartable(reason: string): void {
    this.failedStarts = Math.max(this.failedStarts + 1, FAILED_STARTS_BEFORE_UNAVAILABLE);
    this.startError = reason;
  }

  /** Starts again at once after a process that worked, later and later after ones that did not. */
  private scheduleStart(): void {
    const delay = this.failedStarts === 0 ? 0 : Math.min(30_000, 250 * 2 ** (this.failedStarts - 1));
    this.respawnTimer = setTimeout(() => this.start(), delay);
    this.respawnTimer.unref();
  }
}
