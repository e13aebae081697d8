// Holds the service's Learner: loaded on first use from model.dir (so the service starts, and
// answers health and ListAlgorithms, on a machine with no model), and shared by every RPC.
import { Code, ConnectError } from "@connectrpc/connect";
import { useBackend } from "@lean-grpo/lm";
import type { LearnerConfig } from "../config.js";
import { loadReasoningModel, resolveModelReasoning } from "@lean-grpo/lm";
import { reasoningSettings } from "@lean-grpo/lm/reasoning-vocab";
import { Learner } from "../training/learner.js";

export class LearnerHost {
  private loading: Promise<Learner> | null = null;
  private loaded: Learner | null = null;

  constructor(readonly config: LearnerConfig) {}

  /** The learner, if it has been loaded; never starts a load. */
  get current(): Learner | null {
    return this.loaded;
  }

  get baseModel(): string {
    return this.config.model.name ?? this.config.model.dir ?? "";
  }

  async learner(): Promise<Learner> {
    const dir = this.config.model.dir;
    if (!dir) {
      throw new ConnectError(
        "the learner has no model: set model.dir to a Hugging Face model directory (config.json + model.safetensors), e.g. model.dir=/models/Qwen2.5-0.5B",
        Code.FailedPrecondition,
      );
    }
    this.loading ??= this.load(dir).catch((error: unknown) => {
      this.loading = null;
      throw new ConnectError(`model.dir ${JSON.stringify(dir)} could not be loaded: ${(error as Error).message}`, Code.FailedPrecondition);
    });
    return this.loading;
  }

  private async load(dir: string): Promise<Learner> {
    const { config } = this;
    await useBackend(config.backend);
    const vocab = await resolveModelReasoning(dir, reasoningSettings(config.model));
    const model = await loadReasoningModel(dir, vocab);
    this.loaded = new Learner(model, {
      baseModel: this.baseModel,
      lora: {
        rank: config.lora.rank,
        alpha: config.lora.alpha,
        targetModules: config.lora.target_modules,
        dropout: config.lora.dropout,
        useRslora: config.lora.use_rslora,
      },
      optimizer: {
        learningRate: config.optimizer.learning_rate,
        beta1: config.optimizer.beta1,
        beta2: config.optimizer.beta2,
        epsilon: config.optimizer.epsilon,
        weightDecay: config.optimizer.weight_decay,
        maxGradNorm: config.optimizer.max_grad_norm,
        schedule: {
          name: config.optimizer.lr_schedule,
          warmupSteps: config.optimizer.warmup_steps,
          totalSteps: config.optimizer.total_steps,
        },
      },
      microBatchTokens: config.micro_batch_tokens,
      threads: config.threads,
      modelDir: dir,
      seed: config.seed,
      keepVersions: config.adapter_versions_kept,
      reasoning: { rows: config.reasoning_rows, mask: config.model.reasoning_mask },
    });
    return this.loaded;
  }
}
