// Continuous batching, as vLLM does it, for the embedded sampler: concurrent requests (and
// the n rows of each) share decode passes, one per adapter (and key alignment, below). A
// request's rows join between passes after a prompt pass of their own (shared only with
// requests whose prompts have the same length, so no padding), and leave as each
// finishes. A row's tokens depend only on its own prompt, its seed stream and the
// adapter: the pass's other rows add nothing to its sums but exact zeros, so a request
// gives the same tokens (and logprobs, bit for bit) alone or beside others.
//
// Exact zeros are enough only where the kernels add a row's keys in order: a decode pass's
// attention is written so (model/attention.ts, decodeStepAttention), on cpu and wasm, as
// test/continuous-decoder.spec.ts checks bit for bit. A backend whose reductions group keys
// in lanes or blocks gets a key alignment: rows share a batch only when their padding is a
// multiple of it (decode-batch.ts).
import * as tf from "@tensorflow/tfjs-core";
import { rowSeed, SeededRandom } from "@lean-grpo/random";
import { ModelInputError } from "../errors.js";
import type { LoraAdapter } from "../lora/lora-adapter.js";
import type { KeyValue } from "../model/attention.js";
import type { CausalLM } from "../model/causal-lm.js";
import { validateTokenIds } from "../model/token-batch.js";
import { DecodeBatch, lastLogits, selectRows, type DecodeRow } from "./decode-batch.js";
import type { GeneratedSequence } from "./generate.js";
import { ReasoningBlockTracker } from "../reasoning-vocab/reasoning-mask.js";
import { isStop, sampleToken, validateSamplingParams, type SamplingParams } from "./sampler.js";

export interface DecodeRequest {
  prompt: readonly number[];
  /** Completions of the prompt; row i draws from the seed's stream i (as generate() does). */
  n: number;
  maxNewTokens: number;
  sampling: SamplingParams;
  seed: number;
  /** Token ids that end a row (kept as its last token). */
  stopTokenIds: readonly number[];
  adapter: LoraAdapter | null;
  /** An aborted request leaves the batch before the next pass and rejects with the reason. */
  signal?: AbortSignal;
}

export interface ContinuousDecoderOptions {
  /** Rows decoding at once over all adapters; a request waits while its n would pass it (one larger than this runs alone). */
  maxRows: number;
  /** Padding granularity of a shared cache; default: the model's backend's (keyAlignment). */
  alignment?: number;
}

/**
 * The width in which a backend's reductions over attention keys group them during a decode
 * pass: 1 (in order) for cpu and wasm, measured by the spec. The tensorflow backend
 * (Eigen, vectorised reductions) is not installed here and not measured: 16 is an
 * assumption, not a guarantee.
 */
export function keyAlignment(backend: string): number {
  return backend === "cpu" || backend === "wasm" ? 1 : 16;
}

interface Job {
  request: DecodeRequest;
  stop: ReadonlySet<number>;
  results: GeneratedSequence[];
  open: number;
  resolve: (results: GeneratedSequence[]) => void;
  reject: (error: unknown) => void;
}

interface Row extends DecodeRow {
  job: Job;
  result: GeneratedSequence;
  random: SeededRandom;
  /** The row's block state, with a reasoning vocabulary. */
  block: ReasoningBlockTracker | null;
  done: boolean;
}

export class ContinuousDecoder {
  private readonly waiting: Job[] = [];
  private batches: DecodeBatch<Row>[] = [];
  private readonly alignment: number;
  private running = false;
  /** Decode passes run (prompt passes not counted): what batching saves shows here. */
  passes = 0;

  constructor(
    private readonly model: CausalLM,
    private readonly options: ContinuousDecoderOptions,
  ) {
    if (!Number.isInteger(options.maxRows) || options.maxRows < 1)
      throw new ModelInputError(`max rows ${options.maxRows} must be an integer >= 1`);
    this.alignment = options.alignment ?? keyAlignment(model.backendName);
  }

  /** The request's n completions, in row order, once every row has finished. */
  decode(request: DecodeRequest): Promise<GeneratedSequence[]> {
    try {
      this.validate(request);
      request.signal?.throwIfAborted();
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({
        request,
        stop: new Set(request.stopTokenIds),
        results: Array.from({ length: request.n }, () => ({ tokenIds: [], logprobs: [], finishReason: "length" as const })),
        open: request.n,
        resolve,
        reject,
      });
      void this.pump();
    });
  }

  private validate(request: DecodeRequest): void {
    validateSamplingParams(request.sampling);
    const { maxNewTokens, n, prompt } = request;
    if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1)
      throw new ModelInputError(`max_tokens ${maxNewTokens} must be an integer >= 1`);
    if (!Number.isInteger(n) || n < 1) throw new ModelInputError(`n ${n} must be an integer >= 1`);
    if (prompt.length === 0) throw new ModelInputError("the prompt is empty; it needs at least one token");
    validateTokenIds([prompt], this.model.config, "prompt");
    const longest = prompt.length + maxNewTokens;
    if (longest > this.model.config.maxPositionEmbeddings) {
      throw new ModelInputError(
        `prompt plus max_tokens is ${longest} tokens; the model's context (max_position_embeddings) is ${this.model.config.maxPositionEmbeddings}`,
      );
    }
  }

  /** The one loop that runs passes while there is work; every decode() call wakes it. */
  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      // Calls that arrive in the same turn (a client's concurrent burst) start together.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.waiting.length > 0 || this.batches.length > 0) {
        this.dropAborted();
        await this.admit();
        for (const batch of this.batches) {
          if (batch.size > 0) await this.guarded(batch.members, () => this.decodeStep(batch));
        }
        this.batches = this.batches.filter((batch) => batch.size > 0);
        // Passes are synchronous tensor work: a macrotask turn between them lets the
        // process's sockets (new requests, an async run's TrainStep stream) move.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      this.running = false;
    }
  }

  private get activeRows(): number {
    let rows = 0;
    for (const batch of this.batches) rows += batch.size;
    return rows;
  }

  /** Prompt passes for the waiting requests that fit, grouped by adapter and prompt length. */
  private async admit(): Promise<void> {
    let rows = this.activeRows;
    const admitted: Job[] = [];
    while (this.waiting.length > 0) {
      const n = this.waiting[0]!.request.n;
      if (rows > 0 && rows + n > this.options.maxRows) break;
      admitted.push(this.waiting.shift()!);
      rows += n;
    }
    const groups = new Map<string, Job[]>();
    const adapterIds = new Map<LoraAdapter | null, number>();
    for (const job of admitted) {
      const { adapter, prompt } = job.request;
      if (!adapterIds.has(adapter)) adapterIds.set(adapter, adapterIds.size);
      const key = `${adapterIds.get(adapter)}:${prompt.length}`;
      groups.set(key, [...(groups.get(key) ?? []), job]);
    }
    for (const jobs of groups.values()) {
      const rowsOf = jobs.flatMap((job) =>
        job.results.map(
          (result, index): Row => ({
            job,
            result,
            random: new SeededRandom(rowSeed(job.request.seed, index)),
            block: job.request.sampling.reasoning ? new ReasoningBlockTracker(job.request.sampling.reasoning.vocab) : null,
            done: false,
            token: 0,
            position: job.request.prompt.length,
          }),
        ),
      );
      await this.guarded(rowsOf, () => this.promptPass(jobs, rowsOf));
    }
  }

  /**
   * One prompt pass for requests whose prompts have the same length: each prompt once (the
   * n rows of a request share it; rows are computed independently, so its copies would be
   * bit-identical), then every row draws its first token and the continuing rows take
   * copies of their prompt's keys and values.
   */
  private async promptPass(jobs: readonly Job[], rows: Row[]): Promise<void> {
    const { adapter, prompt } = jobs[0]!.request;
    const length = prompt.length;
    const ids = new Int32Array(jobs.length * length);
    const positions = new Int32Array(jobs.length * length);
    jobs.forEach((job, j) => {
      ids.set(job.request.prompt, j * length);
      for (let i = 0; i < length; i++) positions[j * length + i] = i;
    });
    const { hidden, present } = this.model.forward(
      { batch: jobs.length, queryLength: length, ids, positions, keyMask: new Uint8Array(jobs.length * length).fill(1) },
      { adapter },
    );
    let logits: Float32Array;
    try {
      logits = await lastLogits(this.model, hidden, adapter);
    } catch (error) {
      for (const { keys, values } of present) tf.dispose([keys, values]);
      throw error;
    }
    const jobOf = new Map(jobs.map((job, j) => [job, j]));
    const rowPrompt = rows.map((row) => jobOf.get(row.job)!);
    this.sampleAll(rows, logits, rowPrompt);
    // Rows that ended on their first token never join; the rest keep their prompt's keys.
    const going = rows.filter((row) => !row.done);
    const keep = copyRows(
      present,
      going.map((row) => jobOf.get(row.job)!),
    );
    let batch = this.batches.find((b) => b.accepts(adapter, length));
    if (!batch) {
      batch = new DecodeBatch<Row>(this.model, adapter, this.alignment);
      this.batches.push(batch);
    }
    batch.join(going, keep, length);
  }

  private async decodeStep(batch: DecodeBatch<Row>): Promise<void> {
    const rows = [...batch.members];
    const logits = await batch.step();
    this.passes++;
    this.sampleAll(rows, logits);
    batch.retain((row) => !row.done);
  }

  /** Draws each row's next token from its logits; finished rows complete their request. */
  /** `logitRow[r]`: which row of `logits` is row r's (default: its own). */
  private sampleAll(rows: readonly Row[], logits: Float32Array, logitRow?: readonly number[]): void {
    const vocab = this.model.config.vocabSize;
    rows.forEach((row, r) => {
      const { request, stop } = row.job;
      const at = logitRow?.[r] ?? r;
      const { token, logprob } = sampleToken(
        logits.subarray(at * vocab, (at + 1) * vocab),
        request.sampling,
        () => row.random.next(),
        row.block?.state,
      );
      row.block?.push(token);
      row.result.tokenIds.push(token);
      row.result.logprobs.push(logprob);
      row.token = token;
      row.position += row.result.tokenIds.length === 1 ? 0 : 1;
      if (isStop(stop, token, request.sampling)) {
        row.result.finishReason = "stop";
        row.done = true;
      } else if (row.result.tokenIds.length >= request.maxNewTokens) {
        row.done = true;
      }
      if (row.done && --row.job.open === 0) row.job.resolve(row.job.results);
    });
  }

  /** Rows of aborted requests leave before the next pass; their requests reject with the reason. */
  private dropAborted(): void {
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const job = this.waiting[i]!;
      if (job.request.signal?.aborted) {
        this.waiting.splice(i, 1);
        job.reject(job.request.signal.reason);
      }
    }
    for (const batch of this.batches) {
      const dropped = batch.retain((row) => !row.job.request.signal?.aborted);
      for (const job of new Set(dropped.map((row) => row.job))) {
        job.open = -1; // never resolves
        job.reject(job.request.signal!.reason);
      }
    }
  }

  /** A pass that throws fails the requests of its rows (their rows leave), not the decoder. */
  private async guarded(rows: readonly Row[], pass: () => Promise<void>): Promise<void> {
    try {
      await pass();
    } catch (error) {
      const jobs = new Set(rows.map((row) => row.job));
      for (const batch of this.batches) batch.retain((row) => !jobs.has(row.job));
      for (const job of jobs) {
        job.open = -1;
        job.reject(error);
      }
    }
  }
}

/** Rows `index` of every layer's keys and values (repeats allowed); disposes `present`. */
function copyRows(present: KeyValue[], index: readonly number[]): KeyValue[] {
  const copied = present.map(({ keys, values }) => ({ keys: selectRows(keys, index), values: selectRows(values, index) }));
  for (const { keys, values } of present) tf.dispose([keys, values]);
  return copied;
}
