// Data parallelism across threads for the tfjs learner. The wasm backend computes on one
// thread in Node, so a learner on one thread leaves the machine's other cores idle while
// it trains (the README's main command: the sampler's rollouts of the next step take about
// a quarter of the other core). Here worker threads, each with its own tfjs and copy of
// the base model, take micro-batches of a pass beside the learner's own thread: every
// thread claims the next micro-batch from one shared counter until none is left, and the
// shares are added in micro-batch order (step-gradients.ts sumShares). A share depends only
// on its micro-batch and the weights, so the sum is the same with one thread or several,
// whichever thread took which micro-batch.
import { Worker } from "node:worker_threads";
import type { CausalLM, LoraAdapter } from "@lean-grpo/lm";
import { microBatchGradients, type MicroBatchShare, type MicroBatchTask, type PassInputs } from "../training/micro-batch-gradients.js";
import {
  claimTask,
  shareFromArrays,
  type FromGradientThread,
  type GradientThreadSetup,
  type ToGradientThread,
  type WeightArray,
} from "./gradient-thread-protocol.js";

/** Run from sources (tsx), the entry registers the loader; from the service's bundle, the bundled worker sits beside server.mjs. */
const ENTRY = import.meta.url.endsWith(".ts")
  ? new URL("./gradient-worker-entry.mjs", import.meta.url)
  : new URL("./gradient-worker.mjs", import.meta.url);

/** A gradient thread stopped working; the pass (and the step) fails with this. */
export class GradientThreadError extends Error {
  override readonly name = "GradientThreadError";
}

interface PendingPass {
  id: number;
  shares: MicroBatchShare[];
  /** Threads yet to answer "done". */
  waiting: number;
  failure: Error | null;
  settle: () => void;
}

export class GradientThreads {
  private nextPass = 1;
  private pending: PendingPass | null = null;
  private broken: Error | null = null;
  private fromThreads = 0;

  private constructor(private readonly workers: Worker[]) {
    for (const worker of workers) {
      worker.on("message", (message: FromGradientThread) => this.receive(message));
      worker.on("error", (error) => this.fail(new GradientThreadError(`a gradient thread failed: ${error.message}`)));
      worker.on("exit", (code) => this.fail(new GradientThreadError(`a gradient thread exited (code ${code})`)));
    }
  }

  /** Starts `count` threads, each loading `setup.modelDir`; resolves once all are ready. */
  static async start(count: number, setup: GradientThreadSetup): Promise<GradientThreads> {
    const workers: Worker[] = [];
    try {
      await Promise.all(
        Array.from({ length: count }, () => {
          const worker = new Worker(ENTRY, { workerData: setup, stdout: false, stderr: false });
          workers.push(worker);
          return new Promise<void>((resolve, reject) => {
            const exited = (code: number) => reject(new GradientThreadError(`a gradient thread exited (code ${code}) while starting`));
            // Only these listeners come off: removeAllListeners would take Node's own, which keep the port delivering.
            const settle = () => {
              worker.off("error", reject);
              worker.off("exit", exited);
            };
            worker.once("error", reject);
            worker.once("exit", exited);
            worker.once("message", (message: FromGradientThread) => {
              settle();
              if (message.kind === "ready") resolve();
              else reject(new GradientThreadError(message.kind === "failed" ? message.message : `unexpected ${message.kind}`));
            });
          });
        }),
      );
    } catch (error) {
      await Promise.all(workers.map((w) => w.terminate()));
      throw error;
    }
    // Idle threads do not keep the process alive (a learner that is never disposed); a pass refs them.
    for (const worker of workers) worker.unref();
    return new GradientThreads(workers);
  }

  get threads(): number {
    return this.workers.length;
  }

  /** Shares the gradient threads have computed so far (the rest were this thread's). */
  get sharesFromThreads(): number {
    return this.fromThreads;
  }

  /**
   * The shares of every task of a pass: this thread and the gradient threads each claim the
   * next task until none is left. Tasks are claimed largest first, so the last ones to finish
   * are short. On failure every share already made is disposed.
   */
  async run(
    model: CausalLM,
    adapter: LoraAdapter,
    pass: PassInputs,
    tasks: readonly MicroBatchTask[],
    signal?: AbortSignal,
  ): Promise<MicroBatchShare[]> {
    if (this.broken) throw this.broken;
    if (this.pending) throw new Error("GradientThreads.run: a pass is already running");
    const sizeOf = (task: MicroBatchTask) =>
      task.rows.length *
      Math.max(...task.rows.map((i) => pass.batch.rows[i]!.example.promptIds.length + pass.batch.rows[i]!.example.completionIds.length));
    const ordered = [...tasks].sort((a, b) => sizeOf(b) - sizeOf(a) || a.index - b.index);
    const claims = new Int32Array(new SharedArrayBuffer(4));
    const weights: WeightArray[] = adapter.variables().map((v) => ({
      key: adapter.peftKeyOfVariable(v.name)!,
      shape: v.shape,
      data: v.dataSync() as Float32Array,
    }));
    const pending: PendingPass = { id: this.nextPass++, shares: [], waiting: this.workers.length, failure: null, settle: () => {} };
    const settled = new Promise<void>((resolve) => (pending.settle = resolve));
    this.pending = pending;
    const message: ToGradientThread = {
      kind: "pass",
      id: pending.id,
      weights,
      pass,
      tasks: ordered,
      claims: claims.buffer as SharedArrayBuffer,
    };
    for (const worker of this.workers) {
      worker.ref();
      worker.postMessage(message);
    }
    const own: MicroBatchShare[] = [];
    try {
      try {
        for (let next = claimTask(claims); next < ordered.length; next = claimTask(claims)) {
          signal?.throwIfAborted();
          own.push(microBatchGradients(model, adapter, pass, ordered[next]!, signal));
        }
      } catch (error) {
        // No further task is claimed here or there; the threads finish the one they hold.
        Atomics.store(claims, 0, ordered.length);
        pending.failure ??= error as Error;
      }
      await abortable(settled, signal);
      if (pending.failure) throw pending.failure;
      return [...own, ...pending.shares];
    } catch (error) {
      for (const share of [...own, ...pending.shares]) for (const grad of share.grads.values()) grad.dispose();
      throw error;
    } finally {
      this.pending = null;
      for (const worker of this.workers) worker.unref();
    }
  }

  /** Ends the threads. */
  async close(): Promise<void> {
    this.broken ??= new GradientThreadError("the gradient threads were closed");
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private receive(message: FromGradientThread): void {
    const pending = this.pending;
    if (message.kind === "failed" && message.id === null) {
      this.fail(new GradientThreadError(message.message));
      return;
    }
    if (!pending || !("id" in message) || message.id !== pending.id) return; // a pass given up on (aborted)
    if (message.kind === "share") {
      pending.shares.push(shareFromArrays(message.share));
      this.fromThreads += 1;
    } else if (message.kind === "failed") {
      pending.failure ??= Object.assign(new Error(message.message), { name: message.name });
      pending.waiting -= 1;
    } else if (message.kind === "done") {
      pending.waiting -= 1;
    }
    if (pending.waiting === 0) pending.settle();
  }

  private fail(error: Error): void {
    this.broken ??= error;
    if (this.pending) {
      this.pending.failure ??= error;
      this.pending.settle();
    }
  }
}

function abortable(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, reject);
  });
}
