// The learner's state and its operations: a policy (base model + LoRA adapter), AdamW, the
// step counter and the adapter versions; one training step, logprobs, exports and
// checkpoints. Operations run one at a time (a step mutates the weights that everything
// else reads).
import * as tf from "@tensorflow/tfjs-core";
import { adapterName } from "@lean-grpo/adapter-files";
import type { LossSettings } from "../algorithms/loss-settings.js";
import { algorithmNamed } from "../algorithms/registry.js";
import { scoreCompletions, type PromptCompletion } from "@lean-grpo/lm";
import { type LoraAdapter, TOKEN_ROWS_KEYS } from "@lean-grpo/lm";
import type { LoraConfig } from "@lean-grpo/lm";
import {
  AdapterError,
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  exportPeftAdapter,
  importPeftAdapter,
  type PeftFiles,
} from "@lean-grpo/lm";
import { checkSameReasoningMap, REASONING_MAP_FILE, serializeReasoningMap, type ReasoningMaskMode } from "@lean-grpo/lm";
import { PathError, type RootDirectory } from "@lean-grpo/kit";
import { AlgorithmConfigError } from "../algorithms/algorithm-config-error.js";
import { createPolicyAdapter } from "./policy-adapter.js";
import type { BackendName, CausalLM } from "@lean-grpo/lm";
import type { SamplingDistribution } from "@lean-grpo/lm";
import { AdamW, type AdamWSettings } from "../optimizer/adamw.js";
import { clipByGlobalNorm } from "../optimizer/global-norm-clipping.js";
import { learningRateMultiplier, type LrSchedule } from "../optimizer/learning-rate-schedule.js";
import { ADAPTER_DIR, checkpointStateFiles, OPTIMIZER_FILE, readCheckpointState, STATE_FILE } from "./checkpoint-files.js";
import { cutByLength } from "./micro-batches.js";
import { prepareBatch, type TrainingModeName } from "./prepared-batch.js";
import { validateExamples, validateSequences } from "./sample-validation.js";
import { SampleError } from "./sample-error.js";
import { microBatchTasks, passInputs, stepGradients, sumShares, type StepGradientInputs, type StepGradients } from "./step-gradients.js";
import { GradientThreadError, GradientThreads } from "../threads/gradient-threads.js";
import { stepMetrics, type UpdateRecord } from "./step-metrics.js";
import { resolveSampling, type SamplingMessage } from "./step-sampling.js";
import type { TrainingExample } from "./training-example.js";

export interface OptimizerOptions extends AdamWSettings {
  learningRate: number;
  /** Global-norm clipping; null is off. */
  maxGradNorm: number | null;
  schedule: LrSchedule;
}

export interface LearnerOptions {
  /** Base model id or path, written into adapter manifests and PEFT configs. */
  baseModel: string;
  lora: LoraConfig;
  optimizer: OptimizerOptions;
  /** Padded tokens per micro-batch (gradient accumulation beyond). */
  microBatchTokens: number;
  /** Seeds the adapter's initialisation and LoRA dropout. */
  seed: number;
  /** Adapter versions held for ExportAdapter. */
  keepVersions: number;
  /**
   * The step as it was before issue 26, for the bench's baseline and the parity tests: the
   * "old" policy scored in a pass of its own even where the differentiated pass gives the
   * same logprobs (one update, no dropout), and micro-batches cut in arrival order rather
   * than by length. Off by default.
   */
  formerStep?: boolean;
  /**
   * Threads computing a step's micro-batches (gradient-threads.ts): this one and threads − 1
   * gradient threads, each loading `modelDir`. 1 (the default) trains on this thread only.
   */
  threads?: number;
  /** The model's directory, for the gradient threads (needed when threads > 1). */
  modelDir?: string;
  /**
   * With a reasoning vocabulary (model.reasoning): whether its rows train as PEFT trainable
   * tokens ("train", the default) or stay the base's copies ("frozen"), and the mask mode a
   * request that names none is scored under (the service's model.reasoning_mask).
   */
  reasoning?: { rows: "train" | "frozen"; mask: ReasoningMaskMode };
}

export interface StepRequest {
  algorithm: string;
  algorithmConfig: Record<string, unknown>;
  mode: TrainingModeName;
  examples: TrainingExample[];
  /** Caller's step number; 0 skips the check. */
  step: number;
  expectedSamples: number;
  numGenerations: number;
  /** TrainStepHeader.sampling: the distribution the samples were drawn from (absent: T = 1, no truncation). */
  sampling?: SamplingMessage;
  signal?: AbortSignal;
}

export interface StepResult {
  step: number;
  adapterVersion: number;
  adapterName: string;
  metrics: Record<string, number>;
  zeroStdGroups: string[];
}

/** The caller's step does not follow the learner's (FAILED_PRECONDITION). */
export class StepOrderError extends Error {
  override readonly name = "StepOrderError";
}

/** An adapter version that is not (or no longer) held (NOT_FOUND). */
export class UnknownVersionError extends Error {
  override readonly name = "UnknownVersionError";
}

export class Learner {
  private adapter: LoraAdapter;
  private optimizer: AdamW;
  private stepCount = 0;
  private version = 0;
  private lastAlgorithm = "";
  private seed: number;
  private readonly versions = new Map<number, PeftFiles>();
  private queue: Promise<unknown> = Promise.resolve();
  /** Started on the first pass with more than one micro-batch; null when threads is 1 or they could not start. */
  private gradientThreads: Promise<GradientThreads | null> | null = null;

  constructor(
    readonly model: CausalLM,
    readonly options: LearnerOptions,
  ) {
    this.seed = options.seed;
    this.adapter = createPolicyAdapter(model, options.lora, options.seed, options.reasoning?.rows);
    this.optimizer = new AdamW(options.optimizer);
    this.snapshotVersion();
  }

  get step(): number {
    return this.stepCount;
  }
  get adapterVersion(): number {
    return this.version;
  }
  get algorithm(): string {
    return this.lastAlgorithm;
  }
  get lora(): LoraConfig {
    return this.adapter.config;
  }
  get optimizerUpdates(): number {
    return this.optimizer.updates;
  }
  get policy(): LoraAdapter {
    return this.adapter;
  }

  /** Runs `operation` after every earlier one has finished. */
  exclusive<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.queue.then(operation, operation);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Resolves the algorithm and checks the batch; throws before anything is computed. */
  private checkRequest(request: StepRequest): LossSettings {
    const resolved = algorithmNamed(request.algorithm).resolve(request.algorithmConfig);
    const legacy =
      "temperature" in request.algorithmConfig ? { temperature: resolved.temperature, field: "algorithm_config.temperature" } : undefined;
    const sampling = resolveSampling(request.sampling, legacy, "header.sampling");
    const settings: LossSettings = {
      ...resolved,
      ...sampling,
      reasoningMask: this.reasoningMask(sampling.reasoningMask, "header.sampling"),
    };
    if (request.step !== 0 && request.step !== this.stepCount + 1) {
      throw new StepOrderError(
        `header.step is ${request.step} but the learner is at step ${this.stepCount}; send ${this.stepCount + 1} (or 0 to skip the check)`,
      );
    }
    validateExamples(request.examples, this.model.config, request);
    return settings;
  }

  async trainStep(request: StepRequest): Promise<StepResult> {
    const settings = this.checkRequest(request);
    const started = performance.now();
    const batch = prepareBatch(request.examples, settings, request.mode);
    if (batch.rows.length === 0) {
      throw new SampleError(
        `every group has zero reward spread and dapo's dynamic_sampling dropped them all (${batch.zeroStdGroups.join(", ")}); resample, or set dynamic_sampling false`,
      );
    }
    const sequences = batch.rows.map((r) => ({ promptIds: r.example.promptIds, completionIds: r.example.completionIds }));
    const distribution = {
      temperature: settings.temperature,
      topK: settings.topK,
      topP: settings.topP,
      reasoningMask: settings.reasoningMask,
    };
    const score = async (adapter: LoraAdapter | null) =>
      (await this.scoreInChunks(sequences, { ...distribution, adapter, signal: request.signal })).logprobs;
    // With one update, "old" is the current policy: the loss takes the detached logprobs of
    // the pass it differentiates (as TRL does) and the extra gradient-free pass, a third of
    // an embedded step, is skipped; the importance weight min(exp(old − sampler), cap) of an
    // async run reads the same values. Replays need the logprobs from before the first
    // update, and with LoRA dropout the importance weight needs them without dropout.
    const needsOldPass =
      request.mode === "rl" &&
      (this.options.formerStep === true ||
        settings.numIterations > 1 ||
        (settings.importanceSamplingCap !== null && this.adapter.config.dropout > 0));
    const old = needsOldPass ? await score(this.adapter) : null;
    // The reference is scored inside each micro-batch of the first update (on whichever thread
    // takes it) and kept for replays; the former step scored it in a pass of its own first.
    const needsRef = request.mode === "rl" && (settings.beta !== 0 || settings.dpoCoef !== 0);
    let ref = needsRef && this.options.formerStep === true ? await score(null) : null;
    const iterations = request.mode === "rl" ? settings.numIterations : 1;
    // With replays, a failure after the first update must not leave a half-applied step.
    const before = iterations > 1 ? { weights: this.adapter.peftTensors(), optimizer: this.optimizer.state() } : null;
    const updates: UpdateRecord[] = [];
    let onPolicyOld: number[][] | null = null;
    try {
      for (let iteration = 0; iteration < iterations; iteration++) {
        const updateIndex = this.optimizer.updates;
        const gradients = await this.stepGradients({
          model: this.model,
          adapter: this.adapter,
          settings,
          batch,
          old,
          ref,
          scoreReference: needsRef && ref === null,
          microBatchTokens: this.options.microBatchTokens,
          formerStep: this.options.formerStep,
          dropoutSeed: this.adapter.config.dropout > 0 ? (k) => dropoutSeed(this.seed, updateIndex, k) : undefined,
          signal: request.signal,
        });
        if (iteration === 0) onPolicyOld = gradients.detachedLogprobs;
        ref ??= gradients.referenceLogprobs;
        const clipped = clipByGlobalNorm(gradients.grads, this.options.optimizer.maxGradNorm);
        tf.dispose([...gradients.grads.values()]);
        const learningRate = this.options.optimizer.learningRate * learningRateMultiplier(this.options.optimizer.schedule, updateIndex);
        const variables = new Map(this.adapter.variables().map((v) => [this.adapter.peftKeyOfVariable(v.name)!, v]));
        this.optimizer.apply(
          [...clipped.grads].map(([key, grad]) => ({ key, variable: variables.get(key)!, grad })),
          learningRate,
        );
        tf.dispose([...clipped.grads.values()]);
        updates.push({ gradients, gradNorm: clipped.norm, learningRate });
      }
    } catch (error) {
      if (before && updates.length > 0) {
        this.assignWeights(before.weights);
        this.optimizer.restore(before.optimizer, this.tensorShapes());
      }
      throw error;
    }
    this.stepCount += 1;
    this.version += 1;
    this.lastAlgorithm = algorithmNamed(request.algorithm).name;
    this.snapshotVersion();
    const metrics = stepMetrics(request.examples, batch, updates, old ?? onPolicyOld, (performance.now() - started) / 1000, settings);
    return {
      step: this.stepCount,
      adapterVersion: this.version,
      adapterName: adapterName(this.version),
      metrics,
      zeroStdGroups: batch.zeroStdGroups,
    };
  }

  /** The step's gradient on this thread, or spread over the gradient threads when there are several micro-batches. */
  private async stepGradients(inputs: StepGradientInputs): Promise<StepGradients> {
    const tasks = microBatchTasks(inputs);
    const threads = tasks.length > 1 ? await this.startGradientThreads() : null;
    if (!threads) return stepGradients(inputs);
    const pass = passInputs(inputs);
    try {
      return sumShares(await threads.run(this.model, this.adapter, pass, tasks, inputs.signal), pass);
    } catch (error) {
      // A thread that died is replaced at the next step; this one fails.
      if (error instanceof GradientThreadError) this.stopGradientThreads();
      throw error;
    }
  }

  private stopGradientThreads(): void {
    void this.gradientThreads?.then((threads) => threads?.close());
    this.gradientThreads = null;
  }

  private startGradientThreads(): Promise<GradientThreads | null> {
    const count = (this.options.threads ?? 1) - 1;
    // tfjs-node (the tensorflow backend) already computes on every core, and its native
    // addon is not built to load in worker threads: gradient threads are for wasm and cpu.
    if (count < 1 || this.model.backendName === "tensorflow") return Promise.resolve(null);
    this.gradientThreads ??= (async () => {
      if (!this.options.modelDir)
        throw new Error("LearnerOptions.threads > 1 needs modelDir (the gradient threads load the model from it)");
      try {
        return await GradientThreads.start(count, {
          modelDir: this.options.modelDir,
          backend: this.model.backendName as BackendName,
          lora: this.adapter.config,
          reasoning: this.model.reasoning
            ? {
                standardSize: this.model.reasoning.standardSize,
                sourceIds: Array.from(this.model.reasoning.map.sourceIds),
                markers: this.model.reasoning.markers,
                rows: this.adapter.tokenRows !== null,
              }
            : undefined,
        });
      } catch (error) {
        process.emitWarning(
          `the learner's ${count} gradient thread(s) did not start (${(error as Error).message}); training on one thread (threads: 1 says so)`,
        );
        return null;
      }
    })();
    return this.gradientThreads;
  }

  /** Logprobs (and entropies) without gradient, in micro-batches within the token budget. */
  async scoreInChunks(
    sequences: readonly PromptCompletion[],
    options: {
      temperature: number;
      topK?: number;
      topP?: number;
      reasoningMask?: ReasoningMaskMode;
      adapter: LoraAdapter | null;
      signal?: AbortSignal;
    },
  ): Promise<{ logprobs: number[][]; entropies: number[][] }> {
    const out = { logprobs: [] as number[][], entropies: [] as number[][] };
    const indices = sequences.map((_, i) => i);
    const lengthOf = (i: number) => sequences[i]!.promptIds.length + sequences[i]!.completionIds.length;
    // Passes of similar lengths (micro-batches.ts), answers back in the caller's order.
    const passes = this.options.formerStep
      ? cutInOrder(indices, lengthOf, this.options.microBatchTokens)
      : cutByLength(indices, (i) => ({ rows: 1, longest: lengthOf(i) }), this.options.microBatchTokens);
    for (const pass of passes) {
      options.signal?.throwIfAborted();
      const scores = await scoreCompletions(
        this.model,
        pass.map((i) => sequences[i]!),
        options,
      );
      pass.forEach((i, k) => {
        out.logprobs[i] = scores.logprobs[k]!;
        out.entropies[i] = scores.entropies[k]!;
      });
    }
    return out;
  }

  /** ComputeLogprobs: under the current policy, or the reference with `reference`. */
  async computeLogprobs(
    sequences: PromptCompletion[],
    reference: boolean,
    distribution: SamplingDistribution & { reasoningMask?: ReasoningMaskMode },
    signal?: AbortSignal,
  ) {
    validateSequences(sequences, this.model.config);
    const reasoningMask = this.reasoningMask(distribution.reasoningMask, "sampling");
    const scores = await this.scoreInChunks(sequences, {
      ...distribution,
      reasoningMask,
      adapter: reference ? null : this.adapter,
      signal,
    });
    return { ...scores, adapterVersion: reference ? 0 : this.version };
  }

  /**
   * The mask a request is scored under: the one it names, else the configured one; gated
   * and strict need the model's reasoning vocabulary.
   */
  private reasoningMask(requested: ReasoningMaskMode | undefined, field: string): ReasoningMaskMode {
    const mode = requested ?? this.options.reasoning?.mask ?? "free";
    if (mode !== "free" && !this.model.reasoning) {
      throw new AlgorithmConfigError(
        `${field}.reasoning_mask is ${mode.toUpperCase()} but the learner's model has no reasoning vocabulary (model.reasoning_vocab_size is 0); send REASONING_MASK_FREE or configure one`,
      );
    }
    return mode;
  }

  /** reasoning_token_map.json of the model's vocabulary, sent and saved with every adapter; null without one. */
  get reasoningMapFile(): Uint8Array | null {
    const vocab = this.model.reasoning;
    return vocab ? new TextEncoder().encode(serializeReasoningMap(vocab.map, vocab.markers)) : null;
  }

  /** PEFT files of a held version (0: the latest). */
  exportAdapter(version: number): { version: number; files: PeftFiles } {
    const wanted = version === 0 ? this.version : version;
    const files = this.versions.get(wanted);
    if (!files) {
      throw new UnknownVersionError(
        `adapter version ${version} is not held; held versions: ${[...this.versions.keys()].join(", ")} (0 means the latest)`,
      );
    }
    return { version: wanted, files };
  }

  /**
   * Writes a checkpoint into `directory` (opened under checkpoint_dir: kit/paths), each file
   * replaced whole; `sizeBytes` counts the adapter, the optimizer state and the trainer state.
   */
  async saveCheckpoint(directory: RootDirectory): Promise<{ path: string; step: number; adapterVersion: number; sizeBytes: number }> {
    const peft = exportPeftAdapter(this.adapter, { baseModel: this.options.baseModel });
    const state = checkpointStateFiles(
      {
        step: this.stepCount,
        adapterVersion: this.version,
        algorithm: this.lastAlgorithm,
        seed: this.seed,
        baseModel: this.options.baseModel,
      },
      this.optimizer.state(),
      this.tensorShapes(),
    );
    const files = new Map<string, Uint8Array>([
      [`${ADAPTER_DIR}/${ADAPTER_CONFIG_FILE}`, peft[ADAPTER_CONFIG_FILE]],
      [`${ADAPTER_DIR}/${ADAPTER_WEIGHTS_FILE}`, peft[ADAPTER_WEIGHTS_FILE]],
      ...state,
    ]);
    const map = this.reasoningMapFile;
    // The map travels with the rows: beside the adapter (what PEFT loads) and the checkpoint.
    if (map) files.set(`${ADAPTER_DIR}/${REASONING_MAP_FILE}`, map).set(REASONING_MAP_FILE, map);
    // All refused or none written: a planted symlink leaves no half checkpoint beside it.
    for (const file of files.keys()) await directory.checkWritable(file);
    for (const [file, data] of files) await directory.writeFile(file, data);
    const sizeBytes =
      peft[ADAPTER_CONFIG_FILE].byteLength +
      peft[ADAPTER_WEIGHTS_FILE].byteLength +
      state.get(OPTIMIZER_FILE)!.byteLength +
      state.get(STATE_FILE)!.byteLength;
    return { path: directory.path, step: this.stepCount, adapterVersion: this.version, sizeBytes };
  }

  /** Replaces adapter, optimizer and counters with the checkpoint in `directory` (opened under checkpoint_dir); on any error nothing changes. */
  async loadCheckpoint(directory: RootDirectory): Promise<{ step: number; adapterVersion: number; algorithm: string }> {
    const source = directory.relativePath || ".";
    const { state, optimizer: optimizerState } = await readCheckpointState(directory);
    // Rows trained for another map would read as other tokens: refused before anything loads.
    const savedMap = await readOptional(directory, `${ADAPTER_DIR}/${REASONING_MAP_FILE}`);
    checkSameReasoningMap(savedMap === null ? null : savedMap.toString("utf8"), this.model.reasoning?.map, `checkpoint ${source}`);
    const adapterFile = async (name: string) => {
      const bytes = await readOptional(directory, `${ADAPTER_DIR}/${name}`);
      if (bytes === null)
        throw new AdapterError(`cannot read ${ADAPTER_DIR}/${name}: ENOENT; is it a directory written by SaveCheckpoint?`);
      return new Uint8Array(bytes);
    };
    const adapter = await importPeftAdapter(
      { [ADAPTER_CONFIG_FILE]: await adapterFile(ADAPTER_CONFIG_FILE), [ADAPTER_WEIGHTS_FILE]: await adapterFile(ADAPTER_WEIGHTS_FILE) },
      this.model.config,
    );
    const rowsWanted = this.model.reasoning !== null && this.options.reasoning?.rows !== "frozen";
    const rowsSaved = adapter.tokenRows !== null;
    if (this.model.reasoning && rowsWanted !== rowsSaved) {
      adapter.dispose();
      throw new AlgorithmConfigError(
        `checkpoint ${source} ${rowsSaved ? "has trained reasoning rows" : "has no reasoning rows"} but learner.reasoning_rows is ${this.options.reasoning?.rows ?? "train"}; resume with the setting it was trained with`,
      );
    }
    const optimizer = new AdamW(this.options.optimizer);
    try {
      optimizer.restore(optimizerState, shapesOf(adapter));
    } catch (error) {
      adapter.dispose();
      optimizer.dispose();
      throw error;
    }
    this.adapter.dispose();
    this.optimizer.dispose();
    // The threads hold an adapter of the old one's shape (the checkpoint's rank may differ).
    this.stopGradientThreads();
    this.adapter = adapter;
    this.optimizer = optimizer;
    this.stepCount = state.step;
    this.version = state.adapterVersion;
    this.lastAlgorithm = state.algorithm;
    this.seed = state.seed;
    this.versions.clear();
    this.snapshotVersion();
    return { step: state.step, adapterVersion: state.adapterVersion, algorithm: state.algorithm };
  }

  private snapshotVersion(): void {
    this.versions.set(this.version, exportPeftAdapter(this.adapter, { baseModel: this.options.baseModel }));
    for (const held of [...this.versions.keys()].sort((a, b) => a - b)) {
      if (this.versions.size <= this.options.keepVersions) break;
      this.versions.delete(held);
    }
  }

  private tensorShapes(): Map<string, number[]> {
    return shapesOf(this.adapter);
  }

  private assignWeights(tensors: ReturnType<LoraAdapter["peftTensors"]>): void {
    const byKey = new Map(tensors.map((t) => [t.key, t]));
    const tokenRows = new Set(Object.values(TOKEN_ROWS_KEYS) as string[]);
    for (const variable of this.adapter.variables()) {
      const key = this.adapter.peftKeyOfVariable(variable.name)!;
      const saved = byKey.get(key)!;
      // LoRA matrices are held transposed from PEFT's layout; token rows are held as saved.
      tf.tidy(() =>
        variable.assign(tokenRows.has(key) ? tf.tensor2d(saved.data, saved.shape) : tf.transpose(tf.tensor2d(saved.data, saved.shape))),
      );
    }
  }

  dispose(): void {
    this.stopGradientThreads();
    this.adapter.dispose();
    this.optimizer.dispose();
    this.versions.clear();
  }
}

/** A file of a checkpoint read whole, or null when it is not there (a symlink or a FIFO in its place is refused). */
async function readOptional(directory: RootDirectory, file: string): Promise<Buffer | null> {
  return directory.readBytes(file, Number.MAX_SAFE_INTEGER).catch((error: unknown) => {
    if (error instanceof PathError && error.code === "missing") return null;
    throw error;
  });
}

/** Shape of each adapter tensor in the learner's layout ([in, r] / [r, out]), by PEFT key. */
function shapesOf(adapter: LoraAdapter): Map<string, number[]> {
  return new Map(adapter.variables().map((v) => [adapter.peftKeyOfVariable(v.name)!, v.shape]));
}

/** Consecutive runs of `indices` within the token budget (the scoring chunks before issue 26). */
function cutInOrder(indices: readonly number[], lengthOf: (i: number) => number, tokenBudget: number): number[][] {
  const passes: number[][] = [];
  let pass: number[] = [];
  let longest = 0;
  for (const i of indices) {
    const next = Math.max(longest, lengthOf(i));
    if (pass.length > 0 && next * (pass.length + 1) > tokenBudget) {
      passes.push(pass);
      pass = [];
    }
    longest = pass.length === 0 ? lengthOf(i) : next;
    pass.push(i);
  }
  if (pass.length > 0) passes.push(pass);
  return passes;
}

/** LoRA dropout seed of micro-batch k of update u: a function of the saved seed and update count only. */
export function dropoutSeed(seed: number, update: number, microBatch: number): number {
  return (seed + Math.imul(update * 4096 + microBatch + 1, 0x9e3779b9)) >>> 0;
}
