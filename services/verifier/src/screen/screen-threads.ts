// The proof screen, run off the verifier's event loop. The screen is linear in its
// text, but a 64 KiB proof still costs tens of milliseconds (more on a loaded host),
// and a VerifyBatch of many holds the loop for their sum: every RPC of the process —
// Health/Check on every port of `serve all` — would wait behind it. So the screens run
// in a few worker threads (node:worker_threads), and the main thread only waits for
// their answers. A thread that cannot start, or fails, leaves the job to be screened
// in line: slower for the loop, never a different answer.
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { BUILTIN_TABLE, PRESUMED_TABLE, tablesAfterContext, tokenTableSpec, type TokenTable } from "@lean-grpo/lean";
import { prepareProof, prepareProofStart, prepareTactic } from "../verdict/proof-source.js";
import type { ScreenJob, ScreenJobResults, ScreenReply, TableRef } from "./screen-protocol.js";

/** Run from sources (tsx), the entry registers the loader; from the service's bundle, the bundled thread sits beside server.mjs. */
const ENTRY = import.meta.url.endsWith(".ts")
  ? new URL("./screen-thread-entry.mjs", import.meta.url)
  : new URL("./screen-thread.mjs", import.meta.url);

interface ScreenThread {
  worker: Worker;
  /** Jobs sent and not answered, by id. */
  waiting: Map<number, { job: ScreenJob; resolve: (value: unknown) => void; reject: (error: Error) => void }>;
  /** Ids of the tables this thread has been sent. */
  tables: Set<number>;
}

export class ScreenThreads {
  private readonly threads: (ScreenThread | undefined)[];
  private readonly tableIds = new WeakMap<TokenTable, number>();
  private nextTableId = 1;
  private nextJobId = 1;
  private closed = false;
  /** Set when a thread ended before it ever answered (it cannot start here): every job is then screened in line. */
  private unavailable = false;

  /** `size` threads at most, started on first use; 0 screens in line (tests that count on the loop). */
  constructor(private readonly size: number = Math.max(1, Math.min(2, availableParallelism() - 1))) {
    this.threads = Array.from({ length: size }, () => undefined);
  }

  proof(target: ScreenJobTarget, proof: string, table: TokenTable): Promise<ScreenJobResults["proof"]> {
    return this.run({ op: "proof", target, proof, table: this.refOf(table) }, () => prepareProof(target, proof, table));
  }

  start(target: ScreenJobTarget, table: TokenTable): Promise<ScreenJobResults["start"]> {
    return this.run({ op: "start", target, table: this.refOf(table) }, () => prepareProofStart(target, table));
  }

  tactic(tactic: string, theoremName: string, context: string, table: TokenTable): Promise<ScreenJobResults["tactic"]> {
    return this.run({ op: "tactic", tactic, theoremName, context, table: this.refOf(table) }, () =>
      prepareTactic(tactic, theoremName, tablesAfterContext(context, table)),
    );
  }

  /** Ends the threads; jobs still waiting are screened in line. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((thread, i) => (thread ? this.retire(i, thread) : undefined)));
  }

  /** How a job names `table`, with its spec (sent to a thread only the first time); undefined when it cannot travel. */
  private refOf(table: TokenTable): TableRef | undefined {
    if (table === BUILTIN_TABLE) return { kind: "builtin" };
    if (table === PRESUMED_TABLE) return { kind: "presumed" };
    const spec = tokenTableSpec(table);
    if (spec === undefined) return undefined;
    let id = this.tableIds.get(table);
    if (id === undefined) {
      id = this.nextTableId++;
      this.tableIds.set(table, id);
    }
    return { kind: "sent", id, spec };
  }

  private run<T>(job: ScreenJob | (Omit<ScreenJob, "table"> & { table: TableRef | undefined }), inLine: () => T): Promise<T> {
    const thread = this.closed || this.unavailable || job.table === undefined ? undefined : this.leastBusy();
    if (!thread) return Promise.resolve().then(inLine);
    const sent = job as ScreenJob;
    if (sent.table.kind === "sent") {
      if (thread.tables.has(sent.table.id)) sent.table = { kind: "sent", id: sent.table.id };
      else thread.tables.add(sent.table.id);
    }
    const id = this.nextJobId++;
    return new Promise<T>((resolve, reject) => {
      thread.waiting.set(id, { job: sent, resolve: resolve as (value: unknown) => void, reject });
      thread.worker.postMessage({ id, job: sent });
    }).catch((error: unknown) => {
      // A thread that ended under the job: the same screen, in line.
      if (error instanceof ThreadEnded) return inLine();
      throw error;
    });
  }

  private leastBusy(): ScreenThread | undefined {
    let best: ScreenThread | undefined;
    for (let i = 0; i < this.size; i++) {
      const thread = this.threads[i] ?? this.startThread(i);
      if (thread && (!best || thread.waiting.size < best.waiting.size)) best = thread;
    }
    return best;
  }

  private startThread(index: number): ScreenThread | undefined {
    let worker: Worker;
    try {
      worker = new Worker(ENTRY, { stdout: false, stderr: false });
    } catch {
      return undefined;
    }
    // A screen thread keeps no process alive: the service's own handles do.
    worker.unref();
    const thread: ScreenThread = { worker, waiting: new Map(), tables: new Set() };
    let answered = false;
    worker.on("message", (reply: ScreenReply) => {
      answered = true;
      const waiting = thread.waiting.get(reply.id);
      if (!waiting) return;
      thread.waiting.delete(reply.id);
      if (reply.ok) waiting.resolve(reply.value);
      else waiting.reject(new Error(reply.message));
    });
    const ended = () => {
      if (!answered && !this.closed) this.unavailable = true;
      if (this.threads[index] === thread) this.threads[index] = undefined;
      for (const waiting of thread.waiting.values()) waiting.reject(new ThreadEnded());
      thread.waiting.clear();
    };
    worker.on("error", ended);
    worker.on("exit", ended);
    this.threads[index] = thread;
    return thread;
  }

  private async retire(index: number, thread: ScreenThread): Promise<void> {
    this.threads[index] = undefined;
    await thread.worker.terminate();
  }
}

type ScreenJobTarget = Extract<ScreenJob, { op: "proof" }>["target"];

class ThreadEnded extends Error {
  override name = "ThreadEnded";
}
