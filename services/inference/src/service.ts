// InferenceService: the handler, mountable in-process (embedded mode, tests) or served by src/server.ts.
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { createLogger, PathRoot, type ServiceRegistration } from "@lean-grpo/kit";
import { create } from "@bufbuild/protobuf";
import {
  InferenceService,
  ModelPromptFormatSchema,
  type LoadAdapterRequest,
  type ModelPromptFormat,
} from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import type { FileInfo } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { InferenceConfig } from "./config.js";
import type { InferenceBackend } from "./backend/inference-backend.js";
import { createVllmBackend } from "./backend/vllm/vllm-backend.js";
import { createEmbeddedBackend } from "./backend/embedded/embedded-backend.js";
import { unconfiguredBackend } from "./backend/unconfigured-backend.js";
import { AdapterRegistry, type LoadedAdapter } from "./adapters/adapter-registry.js";
import { AdapterFileWriter, checkAdapterName } from "./adapters/adapter-files.js";
import { adapterSource, type AdapterSource } from "./adapters/adapter-source.js";
import type { Logger } from "./logger.js";
import { toGenerateInput } from "./rpc/generate-request.js";
import { tokenizeBatch } from "./rpc/tokenize-batch.js";
import { reasoningSettings } from "@lean-grpo/lm/reasoning-vocab";
import { readModelPromptFormat } from "@lean-grpo/lm/tokenizer";

/**
 * Returns the InferenceService registration on the configured backend: vLLM when
 * `vllm.url` is set (or backend: vllm), else the embedded tfjs sampler on
 * `embedded.model_dir`.
 */
export interface InferenceServiceOptions {
  logger?: Logger;
}

export function createInferenceService(
  config: InferenceConfig,
  options: InferenceServiceOptions = {},
): ServiceRegistration<typeof InferenceService> {
  const useVllm = config.backend === "vllm" || (config.backend === "auto" && config.vllm.url !== undefined);
  if (!useVllm) {
    const modelDir = config.embedded.model_dir;
    const backend = modelDir
      ? createEmbeddedBackend({
          modelDir,
          tensorBackend: config.embedded.tensor_backend,
          maxBatchRows: config.embedded.max_batch_rows,
          reasoning: reasoningSettings(config.model),
        })
      : unconfiguredBackend();
    return { service: InferenceService, impl: createInferenceImpl(backend, config, options) };
  }
  if (config.vllm.url === undefined) {
    throw new ConnectError("backend is vllm but vllm.url is not set (e.g. vllm.url=http://127.0.0.1:8000)", Code.InvalidArgument);
  }
  const backend = createVllmBackend({
    url: config.vllm.url,
    apiKey: config.vllm.api_key,
    model: config.vllm.model,
    ...(config.vllm.tokenizer_dir ? { tokenizerDir: config.vllm.tokenizer_dir } : {}),
    maxConcurrency: config.vllm.max_concurrency,
    maxRetries: config.vllm.max_retries,
    logprobsMode: config.vllm.logprobs_mode,
    reasoningLogitsProcessor: config.vllm.reasoning_logits_processor,
    reasoningMask: config.model.reasoning_mask,
  });
  return {
    service: InferenceService,
    impl: createInferenceImpl(backend, config, options),
    readiness: { check: (signal) => backend.healthy(signal), intervalMs: config.vllm.health_interval_ms },
  };
}

export function createInferenceImpl(
  backend: InferenceBackend,
  config: InferenceConfig,
  options: InferenceServiceOptions = {},
): ServiceRegistration<typeof InferenceService>["impl"] {
  const logger = options.logger ?? createLogger("inference");
  const adapters = new AdapterRegistry(config.adapters.keep, (name) => backend.unloadAdapter(name, AbortSignal.timeout(30_000)));
  /** Names whose files are arriving right now: two uploads of one name would write one directory. */
  const uploading = new Set<string>();
  const adapterInfo = (a: LoadedAdapter) => ({ name: a.name, version: a.version, path: a.path, loadedAt: timestampFromDate(a.loadedAt) });

  function added(loaded: LoadedAdapter) {
    const unloaded = adapters.add(loaded);
    logger.info({ adapter: loaded.name, version: Number(loaded.version), unloaded }, "adapter loaded");
    return { adapter: adapterInfo(loaded), unloaded };
  }

  return {
    async generate(req, ctx) {
      const release = adapters.acquire(req.adapter);
      try {
        if (adapters.firstUse(req.adapter)) logger.info({ adapter: req.adapter }, "first Generate with this adapter");
        const input = await toGenerateInput(req, ctx, backend, config.limits);
        const out = await backend.generate(input);
        const model = (await backend.baseModel(ctx.signal)).id;
        const completionTokens = out.completions.reduce((sum, c) => sum + c.tokenIds.length, 0);
        return {
          promptTokenIds: out.promptTokenIds,
          completions: out.completions.map((c) => ({ ...c, adapter: req.adapter, policyVersion: versionOf(adapters, req.adapter) })),
          model,
          adapter: req.adapter,
          usage: { promptTokens: out.promptTokenIds.length, completionTokens },
        };
      } finally {
        release();
      }
    },

    async *generateStream(req, ctx) {
      const release = adapters.acquire(req.adapter);
      try {
        const input = await toGenerateInput(req, ctx, backend, config.limits);
        for await (const delta of backend.generateStream(input)) yield delta;
      } finally {
        release();
      }
    },

    async loadAdapter(requests, ctx) {
      const iterator = requests[Symbol.asyncIterator]();
      const first = await iterator.next();
      if (first.done || first.value.part.case !== "source") {
        throw new ConnectError("the first LoadAdapter message must be `source` (name, version, path or files)", Code.InvalidArgument);
      }
      const source = first.value.part.value;
      const name = checkAdapterName(source.name);
      if (adapters.has(name)) throw new ConnectError(`adapter "${name}" is already loaded; use a new name per version`, Code.AlreadyExists);
      if (source.path !== "") {
        if (source.files.length > 0) throw new ConnectError("set either source.path or source.files, not both", Code.InvalidArgument);
        // A directory already on disk: only under adapters.dir (which vLLM reads too), never a path of the client's choosing.
        const checked = await adapterDirectory(config.adapters.dir, source.path);
        await backend.loadAdapter(name, checked, ctx.signal);
        return added({ name, version: source.version, path: checked.dir, loadedAt: new Date() });
      }
      if (uploading.has(name)) throw new ConnectError(`adapter "${name}" is being uploaded by another LoadAdapter`, Code.AlreadyExists);
      checkAdapterBytes(source.files, config.adapters.max_bytes);
      uploading.add(name);
      // Written under adapters.dir through kit/paths: no symlink planted there is written through.
      const root = new PathRoot({ dir: config.adapters.dir, key: "adapters.dir" });
      try {
        await receiveFiles(root, name, source.files, { [Symbol.asyncIterator]: () => iterator });
        const received = adapterSource(root, name, "source.name");
        await backend.loadAdapter(name, received, ctx.signal);
        return added({ name, version: source.version, path: received.dir, loadedAt: new Date() });
      } catch (error) {
        // Files the backend never took (refused, or the call ended) would stay on disk for good.
        await root.withDirectory(".", "source.name", { create: true }, (dir) => dir.remove(name)).catch(() => {});
        throw error;
      } finally {
        uploading.delete(name);
      }
    },

    async unloadAdapter(req) {
      return { adapter: adapterInfo(await adapters.retire(req.name)) };
    },

    async listModels(_req, ctx) {
      const base = await backend.baseModel(ctx.signal);
      const promptFormat = modelPromptFormat(backend.name === "vllm" ? config.vllm.tokenizer_dir : config.embedded.model_dir);
      return {
        baseModel: {
          id: base.id,
          maxModelLen: base.maxModelLen,
          vocabSize: base.vocabSize,
          reasoningVocabulary: base.reasoningVocabulary,
          ...(promptFormat ? { promptFormat } : {}),
        },
        adapters: adapters.list().map(adapterInfo),
        backend: backend.name,
        // So that a caller needing more completions than one call holds can split them (eval's pass@k).
        maxN: config.limits.max_n,
      };
    },

    async tokenize(req, ctx) {
      if (!req.prompt || req.prompt.kind.case === undefined) {
        throw new ConnectError("prompt is required: set prompt.text, prompt.chat or prompt.token_ids", Code.InvalidArgument);
      }
      const out = await backend.tokenize(req.prompt, ctx.signal);
      // For chat prompts, show the text the chat template produced (vLLM only returns ids).
      const templatedText = out.text || (req.prompt.kind.case === "chat" ? await backend.detokenize(out.ids, ctx.signal) : "");
      return { tokenIds: out.ids, templatedText };
    },

    tokenizeBatch: (requests, ctx) => tokenizeBatch(requests, ctx, backend),
  };
}

/**
 * The prompt the served model was made for, from its directory's prompt_format.json (the
 * embedded model's directory, or the vLLM model's tokenizer_dir); undefined without one. A
 * malformed file is FAILED_PRECONDITION naming it: the operator's model directory, not the call.
 */
function modelPromptFormat(modelDir: string | undefined): ModelPromptFormat | undefined {
  if (!modelDir) return undefined;
  let format: ReturnType<typeof readModelPromptFormat>;
  try {
    format = readModelPromptFormat(modelDir);
  } catch (error) {
    throw new ConnectError((error as Error).message, Code.FailedPrecondition);
  }
  if (Object.keys(format).length === 0) return undefined;
  return create(ModelPromptFormatSchema, {
    ...(format.format !== undefined ? { format: format.format } : {}),
    ...(format.system !== undefined ? { system: format.system } : {}),
    ...(format.math_template !== undefined ? { mathTemplate: format.math_template } : {}),
    ...(format.lean_template !== undefined ? { leanTemplate: format.lean_template } : {}),
    ...(format.tactic_template !== undefined ? { tacticTemplate: format.tactic_template } : {}),
    ...(format.feedback_template !== undefined ? { feedbackTemplate: format.feedback_template } : {}),
  });
}

/** Receives the files into adapters.dir/<name>, made afresh; returns where they are. */
async function receiveFiles(root: PathRoot, name: string, files: FileInfo[], rest: AsyncIterable<LoadAdapterRequest>): Promise<void> {
  const writer = await AdapterFileWriter.create(
    () => root.withDirectory(".", "source.name", { create: true }, (dir) => dir.freshDirectory(name)),
    files,
  );
  try {
    for await (const message of rest) {
      if (message.part.case !== "chunk") {
        throw new ConnectError("after `source`, every LoadAdapter message must be a `chunk`", Code.InvalidArgument);
      }
      await writer.write(message.part.value);
    }
    await writer.finish();
  } catch (error) {
    await writer.discard();
    throw error;
  }
}

/** Refuses an upload whose announced files add up to more than adapters.max_bytes, before anything is written. */
function checkAdapterBytes(files: readonly FileInfo[], maxBytes: number): void {
  const total = files.reduce((sum, file) => sum + file.size, 0n);
  if (total > BigInt(maxBytes)) {
    throw new ConnectError(
      `source.files announce ${total} bytes; this inference service accepts adapters of at most ${maxBytes} bytes (adapters.max_bytes)`,
      Code.ResourceExhausted,
    );
  }
}

function versionOf(adapters: AdapterRegistry, name: string): bigint {
  return adapters.list().find((a) => a.name === name)?.version ?? 0n;
}

/**
 * `given` as a PEFT adapter directory under adapters.dir: relative, no `..`, no symlink below
 * adapters.dir, its files regular files. The embedded backend reads it through the same walk
 * (adapter-source.ts); vLLM, another process, is given its path.
 */
async function adapterDirectory(adaptersDir: string, given: string): Promise<AdapterSource> {
  const root = new PathRoot({ dir: adaptersDir, key: "adapters.dir" });
  const dir = await root.existing(given, "source.path", "directory");
  await root.checkFiles(dir, ["adapter_config.json", "adapter_model.safetensors"], "source.path");
  return adapterSource(root, given, "source.path");
}
