// The pool of REPL workers. Jobs wait in one bounded FIFO queue; a free worker takes
// the first job it can serve, preferring a worker that already holds the job's
// header. Tactic-mode jobs are pinned to the worker incarnation that holds their
// proof states. After each job the worker is checked against its memory cap and its
// request budget and recycled when over; a timer also samples the memory of busy
// workers. Every job ends with a value or an error, whatever happens to its worker.
import { existsSync } from "node:fs";
import type { Logger } from "../logger.js";
import { TokenTables } from "./token-tables.js";
import { ReplUnavailable, type EndKind } from "../repl/repl-failure.js";
import { ReplProcess } from "../repl/repl-process.js";
import { workerEnvironment, type Sandbox } from "../repl/sandbox.js";
import { ProcessGroupMemory, procAvailable } from "../repl/process-group-memory.js";
import { findExecutable } from "../repl/repl-command.js";
import { ReplWorker, type WorkerJob, type WorkerState } from "./repl-worker.js";

export interface ReplPoolOptions {
  /** argv of the REPL, e.g. ["lake", "env", "/opt/repl/.lake/build/bin/repl"]. */
  command: readonly string[];
  cwd: string;
  /** Extra environment variables for workers. */
  env: Readonly<Record<string, string>>;
  size: number;
  queueCapacity: number;
  headerTimeoutMs: number;
  headerCacheSize: number;
  warmHeaders: readonly string[];
  /** Resident memory cap per worker in bytes; 0 = none. */
  memoryLimitBytes: number;
  memorySampleMs: number;
  /** Recycle a worker after this many requests (once it holds no tactic session); 0 = never. */
  maxRequestsPerWorker: number;
  maxResponseChars: number;
  /** What confines each worker (prepared, and checked to work, by the service). */
  sandbox: Sandbox;
  logger: Logger;
}

/** A worker incarnation: where tactic-mode proof states live. */
export interface WorkerPin {
  workerId: number;
  generation: number;
}

export interface PoolJob<T> extends WorkerJob<T> {
  /** Run only on this worker incarnation (tactic mode). */
  pin?: WorkerPin;
}

export interface JobResult<T> {
  value: T;
  queueMs: number;
  headerMs: number;
  /** Where it ran. */
  ranOn: WorkerPin;
}

export class QueueFull extends Error {
  override name = "QueueFull";
}

/** The worker incarnation a pinned job needs is gone. */
export class WorkerLost extends Error {
  override name = "WorkerLost";
  constructor(
    readonly workerId: number,
    readonly kind: EndKind,
  ) {
    super(`REPL worker ${workerId} was restarted (${kind})`);
  }
}

export interface WorkerSnapshot {
  id: number;
  pid: number;
  state: WorkerState;
  requests: number;
  rssBytes: number;
  headers: string[];
}

export interface PoolSnapshot {
  workers: number;
  busy: number;
  queueDepth: number;
  queueCapacity: number;
  headersCached: number;
  restarts: ReadonlyMap<EndKind, number>;
  workerStats: WorkerSnapshot[];
}

export type WorkerEndedListener = (workerId: number, kind: EndKind) => void;

interface QueueEntry {
  job: PoolJob<unknown>;
  enqueuedAt: number;
  settled: boolean;
  resolve(result: JobResult<unknown>): void;
  reject(error: unknown): void;
  onAbort: (() => void) | undefined;
}

export class ReplPool {
  readonly size: number;
  private readonly workers: ReplWorker[];
  private readonly queue: QueueEntry[] = [];
  private readonly restarts = new Map<EndKind, number>();
  private readonly endedListeners: WorkerEndedListener[] = [];
  private readonly memory = new ProcessGroupMemory();
  /** Each header's token table, as Lean reported it. */
  readonly tokenTables: TokenTables;
  private sampler: NodeJS.Timeout | undefined;
  private sampling = false;
  private closed = false;
  /** Set when no worker can ever start (e.g. the working directory is missing). */
  private unavailable: string | undefined;
  /** How many tactic sessions each worker holds; the pool does not recycle a worker that has some. */
  liveSessions: (workerId: number) => number = () => 0;

  constructor(private readonly options: ReplPoolOptions) {
    this.size = options.size;
    this.tokenTables = new TokenTables(options.logger);
    this.workers = Array.from(
      { length: options.size },
      (_, id) =>
        new ReplWorker({
          id,
          spawn: (tmpDir) => this.spawnRepl(tmpDir),
          warmHeaders: options.warmHeaders,
          headerTimeoutMs: options.headerTimeoutMs,
          headerCacheSize: options.headerCacheSize,
          tokenTables: this.tokenTables,
          logger: options.logger,
          onReady: () => this.dispatch(),
          onEnded: (worker, kind, detail) => this.handleWorkerEnded(worker, kind, detail),
        }),
    );
  }

  /** Probes the sandbox and starts every worker; jobs submitted meanwhile wait in the queue. */
  async start(): Promise<void> {
    const program = this.options.command[0]!;
    if (!existsSync(this.options.cwd)) {
      this.unavailable = `the REPL's working directory ${this.options.cwd} does not exist (repl.cwd)`;
    } else if (!findExecutable(program, this.options.cwd, this.options.env.PATH ?? process.env.PATH)) {
      this.unavailable = `the REPL could not be started: ${program} is not an executable file (repl.command, searched on PATH)`;
    }
    if (this.unavailable) {
      this.failQueued(() => new ReplUnavailable(this.unavailable!));
      this.options.logger.error({ command: this.options.command, cwd: this.options.cwd }, this.unavailable);
      return;
    }
    if (this.closed) return;
    this.options.logger.info(
      { command: this.options.command, cwd: this.options.cwd, workers: this.size, sandbox: this.options.sandbox.enforced },
      "starting REPL workers",
    );
    for (const worker of this.workers) worker.start();
    // Sampled for PoolStats even without a cap.
    if (procAvailable()) {
      this.sampler = setInterval(() => void this.sampleMemory(), this.options.memorySampleMs);
      this.sampler.unref();
    } else if (this.options.memoryLimitBytes > 0) {
      this.options.logger.warn("no /proc on this host: the REPL memory cap (repl.memory_limit_mb) is not enforced");
    }
  }

  addWorkerEndedListener(listener: WorkerEndedListener): void {
    this.endedListeners.push(listener);
  }

  /** Runs a job on a worker; rejects with QueueFull, WorkerLost, ReplUnavailable, ReplFailure or the signal's reason. */
  run<T>(job: PoolJob<T>): Promise<JobResult<T>> {
    if (this.closed) return Promise.reject(new ReplUnavailable("the verifier is shutting down"));
    if (this.unavailable) return Promise.reject(new ReplUnavailable(this.unavailable));
    if (job.signal?.aborted) return Promise.reject(job.signal.reason);
    return new Promise<JobResult<T>>((resolve, reject) => {
      const entry: QueueEntry = {
        job: job as PoolJob<unknown>,
        enqueuedAt: performance.now(),
        settled: false,
        resolve: resolve as (result: JobResult<unknown>) => void,
        reject,
        onAbort: undefined,
      };
      if (job.signal) {
        const signal = job.signal;
        entry.onAbort = () => {
          this.removeQueued(entry);
          this.settle(entry, () => reject(signal.reason));
        };
        signal.addEventListener("abort", entry.onAbort, { once: true });
      }
      this.queue.push(entry);
      this.dispatch();
      if (!this.queue.includes(entry)) return;
      const cannotStart = this.workers.every((w) => w.startError !== undefined && w.state !== "idle" && w.state !== "busy");
      if (cannotStart) {
        this.removeQueued(entry);
        this.settle(entry, () => reject(new ReplUnavailable(this.workers[0]!.startError!)));
      } else if (this.queue.length > this.options.queueCapacity) {
        this.removeQueued(entry);
        this.settle(entry, () =>
          reject(
            new QueueFull(
              `the verifier's queue is full: ${this.options.queueCapacity} requests are waiting for ${this.size} REPL workers (repl.queue_capacity); retry later`,
            ),
          ),
        );
      }
    });
  }

  snapshot(): PoolSnapshot {
    const headers = new Set(this.workers.flatMap((worker) => worker.cachedHeaders()));
    return {
      workers: this.size,
      busy: this.workers.filter((worker) => worker.state === "busy").length,
      queueDepth: this.queue.length,
      queueCapacity: this.options.queueCapacity,
      headersCached: headers.size,
      restarts: new Map(this.restarts),
      workerStats: this.workers.map((worker) => ({
        id: worker.id,
        pid: worker.alive ? (worker.processGroup ?? 0) : 0,
        state: worker.state,
        requests: worker.requests,
        rssBytes: worker.rssBytes,
        headers: worker.cachedHeaders(),
      })),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.sampler) clearInterval(this.sampler);
    this.failQueued(() => new ReplUnavailable("the verifier is shutting down"));
    await Promise.all(this.workers.map((worker) => worker.stop()));
  }

  private spawnRepl(tmpDir: string): ReplProcess {
    const env = workerEnvironment(process.env, this.options.env, tmpDir, this.options.sandbox.mode);
    return new ReplProcess({
      argv: this.options.sandbox.wrap({ command: this.options.command, cwd: this.options.cwd, privateDir: tmpDir, env }),
      cwd: this.options.cwd,
      env,
      maxResponseChars: this.options.maxResponseChars,
      logger: this.options.logger,
    });
  }

  private dispatch(): void {
    for (let i = 0; i < this.queue.length; ) {
      const entry = this.queue[i]!;
      const pin = entry.job.pin;
      if (pin && this.workers[pin.workerId]?.generation !== pin.generation) {
        this.queue.splice(i, 1);
        // Its generation ended before the call reached the queue (it was screened meanwhile): say how it ended.
        const kind = this.workers[pin.workerId]?.endOf(pin.generation) ?? "crash";
        this.settle(entry, () => entry.reject(new WorkerLost(pin.workerId, kind)));
        continue;
      }
      const worker = pin ? this.idleWorker(pin.workerId) : this.bestIdleWorker(entry.job.header);
      if (!worker) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      this.launch(worker, entry);
    }
  }

  private idleWorker(id: number): ReplWorker | undefined {
    const worker = this.workers[id];
    return worker?.state === "idle" ? worker : undefined;
  }

  /** A worker holding the header first, then one not due for recycling, then the least recently used. */
  private bestIdleWorker(header: string | undefined): ReplWorker | undefined {
    let best: ReplWorker | undefined;
    let bestScore: readonly number[] = [];
    for (const worker of this.workers) {
      if (worker.state !== "idle") continue;
      const score = [worker.hasHeader(header) ? 0 : 1, this.recycleDue(worker) ? 1 : 0, worker.lastUsed];
      if (!best || compareScores(score, bestScore) < 0) {
        best = worker;
        bestScore = score;
      }
    }
    return best;
  }

  private launch(worker: ReplWorker, entry: QueueEntry): void {
    worker.state = "busy";
    worker.lastUsed = Date.now();
    const ranOn: WorkerPin = { workerId: worker.id, generation: worker.generation };
    const queueMs = performance.now() - entry.enqueuedAt;
    worker
      .execute(entry.job)
      .then(
        ({ value, headerMs }) => this.settle(entry, () => entry.resolve({ value, queueMs, headerMs, ranOn })),
        (error: unknown) => this.settle(entry, () => entry.reject(error)),
      )
      .finally(() => this.afterJob(worker, ranOn.generation));
  }

  private afterJob(worker: ReplWorker, generation: number): void {
    // A worker whose process died during the job restarts on its own.
    if (worker.generation !== generation || worker.state !== "busy" || !worker.alive) return;
    if (this.options.memoryLimitBytes > 0 && worker.processGroup !== undefined && procAvailable()) {
      worker.rssBytes = this.memory.residentBytes(worker.processGroup);
      if (worker.rssBytes > this.options.memoryLimitBytes) {
        worker.recycle("memory", overMemory(worker.rssBytes, this.options.memoryLimitBytes));
        return;
      }
    }
    if (this.recycleDue(worker) && this.liveSessions(worker.id) === 0) {
      worker.recycle("recycle", `served ${worker.requests} requests (repl.max_requests_per_worker)`);
      return;
    }
    worker.state = "idle";
    this.dispatch();
  }

  private recycleDue(worker: ReplWorker): boolean {
    return this.options.maxRequestsPerWorker > 0 && worker.requests >= this.options.maxRequestsPerWorker;
  }

  private handleWorkerEnded(worker: ReplWorker, kind: EndKind, detail: string): void {
    if (kind !== "shutdown") this.restarts.set(kind, (this.restarts.get(kind) ?? 0) + 1);
    this.options.logger.warn({ worker: worker.id, generation: worker.generation, kind, detail }, "REPL worker ended; restarting it");
    for (const entry of [...this.queue]) {
      if (entry.job.pin?.workerId === worker.id) {
        this.removeQueued(entry);
        this.settle(entry, () => entry.reject(new WorkerLost(worker.id, kind)));
      }
    }
    for (const listener of this.endedListeners) listener(worker.id, kind);
    if (this.workers.every((w) => w.startError !== undefined)) {
      this.failQueued(() => new ReplUnavailable(worker.startError!));
    }
  }

  private async sampleMemory(): Promise<void> {
    if (this.sampling) return;
    this.sampling = true;
    try {
      const groups = this.workers.flatMap((worker) => (worker.alive && worker.processGroup !== undefined ? [worker.processGroup] : []));
      const resident = await this.memory.scan(groups);
      for (const worker of this.workers) {
        const bytes = worker.processGroup === undefined ? undefined : resident.get(worker.processGroup);
        if (bytes === undefined || !worker.alive) continue;
        worker.rssBytes = bytes;
        // Busy or idle: a worker past its cap is killed now (its request, if any, answers CRASHED).
        if (this.options.memoryLimitBytes > 0 && bytes > this.options.memoryLimitBytes) {
          worker.recycle("memory", overMemory(bytes, this.options.memoryLimitBytes));
        }
      }
    } finally {
      this.sampling = false;
    }
  }

  private removeQueued(entry: QueueEntry): void {
    const index = this.queue.indexOf(entry);
    if (index >= 0) this.queue.splice(index, 1);
  }

  private failQueued(error: () => Error): void {
    for (const entry of this.queue.splice(0)) this.settle(entry, () => entry.reject(error()));
  }

  private settle(entry: QueueEntry, action: () => void): void {
    if (entry.settled) return;
    entry.settled = true;
    if (entry.onAbort) entry.job.signal?.removeEventListener("abort", entry.onAbort);
    action();
  }
}

function compareScores(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

function overMemory(bytes: number, limit: number): string {
  const mb = (n: number) => Math.round(n / (1024 * 1024));
  return `the worker's resident memory ${mb(bytes)} MB exceeded its cap of ${mb(limit)} MB (repl.memory_limit_mb)`;
}
