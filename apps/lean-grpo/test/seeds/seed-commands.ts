// Every command of the seeds' READMEs (../../../../../shared/seeds in the project's history:
// 001 lean-grpo README, 002 repository guide, 003 rlvr_vocab GRPO guide, 004 GRPO RL training
// guide), as written, with the `lean-grpo` command that runs it here and what it must do:
// run with the listed keys, or refuse before any service starts with the listed error.
// seed-commands.spec.ts runs them all; seeds-page.ts renders docs/guide/seeds.md from them.
import type { Seed } from "../../src/config/seed-names.js";

export type SeedExpectation =
  /** Plans and runs; these keys of the resolved config (dotted) have these values. */
  | { runs: Record<string, unknown>; tracking?: string }
  /** Refused before any service starts, with a message matching this. */
  | { error: RegExp }
  /** Not a training command: what it is here instead. */
  | { elsewhere: string };

export interface SeedCommand {
  seed: Seed;
  /**
   * command: a command of the seed's README as written. setting: a flag, key or file of the
   * seed used as the seed documents it, on this project's data and configs.
   */
  kind?: "command" | "setting";
  /** As the seed writes it. */
  written: string;
  /** The arguments of `lean-grpo train` here (absent for `elsewhere` rows). */
  here?: string;
  /** What had to change from `written` to `here`, and why. */
  note?: string;
  expect: SeedExpectation;
}

const THEOREMS =
  "theorems.jsonl is examples/arith.jsonl here (Lean theorems need a Lean toolchain; examples/lean-basics.jsonl is the Lean set)";
const DATA = "examples/arith.jsonl";
const CONFIGS = "apps/lean-grpo/test/seeds";
const PY003 = "the seed's script and its default Hub dataset are `lean-grpo train` with the shipped dataset group dataset=arith here";
const TEST004 = `${DATA} --config ${CONFIGS}/rl_grpo_config_test.yaml`;
/** What the dataset=arith group (and the model=arith-tiny group it chooses) sets for the shipped model. */
const ARITH_GROUP = {
  "dataset.path": "examples/arith.jsonl",
  "eval.data": "examples/arith-heldout.jsonl",
  "prompt.math_template": "{problem}",
  "reward.preset": "binary",
  "training.max_tokens": 32,
  "services.learner.lora.target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
};

export const SEED_COMMANDS: readonly SeedCommand[] = [
  // Seed 001: the lean-grpo README.
  { seed: "001", written: 'pip install -e ".[dev]"', expect: { elsewhere: "npm ci (the repository's README)" } },
  {
    seed: "001",
    written: "python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct --port 8000",
    expect: { elsewhere: "the same server; point the inference service at it: services.inference.vllm.url=http://localhost:8000" },
  },
  ...(["grpo", "dapo", "gspo"] as const).map(
    (algorithm): SeedCommand => ({
      seed: "001",
      written: `lean-grpo train theorems.jsonl --algorithm ${algorithm} --num-generations 8`,
      here: `${DATA} --algorithm ${algorithm} --num-generations 8`,
      note: THEOREMS,
      expect: { runs: { "algorithm.name": algorithm, "training.num_generations": 8 } },
    }),
  ),
  {
    seed: "001",
    written: `lean-grpo train theorems.jsonl --algorithm dgpo --algo-config '{"use_dpo_loss": true, "dpo_coef": 0.5}'`,
    here: `${DATA} --algorithm dgpo --algo-config '{"use_dpo_loss": true, "dpo_coef": 0.5}'`,
    note: THEOREMS,
    expect: { runs: { "algorithm.name": "dgpo", "algorithm.config.use_dpo_loss": true, "algorithm.config.dpo_coef": 0.5 } },
  },
  {
    seed: "001",
    written: `lean-grpo train theorems.jsonl --algorithm drgrpo --algo-config '{"kl_estimator": "schulman"}'`,
    here: `${DATA} --algorithm drgrpo --algo-config '{"kl_estimator": "schulman"}'`,
    note: THEOREMS,
    expect: {
      error: /kl_estimator "schulman" is the seed's "the shape of the KL estimate.*beta is 0.*"beta": 0\.04, "kl_estimator": "k3"/,
    },
  },
  ...(["grpo", "dgpo", "drgrpo", "dapo", "gspo"] as const).map(
    (algorithm): SeedCommand => ({
      seed: "001",
      written: `lean-grpo train theorems.jsonl --algorithm ${algorithm}`,
      here: `${DATA} --algorithm ${algorithm}`,
      note: THEOREMS,
      expect: { runs: { "algorithm.name": algorithm } },
    }),
  ),
  {
    seed: "001",
    written: "lean-grpo train theorems.jsonl --algorithm grpo -n 8",
    here: `${DATA} --algorithm grpo -n 8`,
    note: THEOREMS,
    expect: { runs: { "algorithm.name": "grpo", "training.num_generations": 8 } },
  },
  {
    seed: "001",
    written: `lean-grpo train theorems.jsonl --algorithm dapo --algo-config '{"population_size": 200}'`,
    here: `${DATA} --algorithm dapo --algo-config '{"population_size": 200}'`,
    note: THEOREMS,
    expect: { error: /population_size is the seed's "the size of a running reward history.*published DAPO.*has no population/ },
  },
  {
    seed: "001",
    written: `lean-grpo train theorems.jsonl --algorithm gspo --algo-config '{"consensus_weight": 0.5}'`,
    here: `${DATA} --algorithm gspo --algo-config '{"consensus_weight": 0.5}'`,
    note: THEOREMS,
    expect: { error: /consensus_weight is the seed's .*consensus.*published GSPO.*has no consensus term/ },
  },
  { seed: "001", written: "lean-grpo algorithms", expect: { elsewhere: "the same command: lean-grpo algorithms [NAME]" } },
  {
    seed: "001",
    written: "lean-grpo train theorems.jsonl --config config_dapo.yaml",
    here: `${DATA} --config ${CONFIGS}/config_dapo.yaml`,
    note: `${THEOREMS}; config_dapo.yaml as the README shows it`,
    expect: { error: /population_size is the seed's .*use_asymmetric_loss is the seed's .*positive_advantage_scale/ },
  },
  {
    seed: "001",
    written: `lean-grpo train theorems.jsonl --algorithm dapo --algo-config '{"population_size": 100}' --num-generations 8`,
    here: `${DATA} --algorithm dapo --algo-config '{"population_size": 100}' --num-generations 8`,
    note: `${THEOREMS} (the README's Docker Compose command)`,
    expect: { error: /population_size is the seed's/ },
  },
  {
    seed: "001",
    written: "pytest tests/test_algorithms.py -v",
    expect: { elsewhere: "npx vitest run services/learner (the algorithms' tests)" },
  },
  // Seed 002: the repository guide.
  {
    seed: "002",
    written: "lean-grpo train theorems.jsonl --config configs/drgrpo.yaml",
    here: `${DATA} --config ${CONFIGS}/drgrpo.yaml`,
    note: `${THEOREMS}; configs/drgrpo.yaml is the guide's config file structure (algorithm drgrpo)`,
    expect: { error: /advantage_norm_method is the seed's "standard, winsorized or rank normalisation.*scale_rewards "none"/ },
  },
  {
    seed: "002",
    written: "lean-grpo train theorems.jsonl --config configs/drgrpo.yaml --lr 1e-5",
    here: `${DATA} --config ${CONFIGS}/drgrpo.yaml --lr 1e-5`,
    note: `${THEOREMS}; configs/drgrpo.yaml as above`,
    expect: { error: /advantage_norm_method is the seed's/ },
  },
  {
    seed: "002",
    written: "lean-grpo train examples/example_theorems.jsonl",
    here: DATA,
    note: "the seed's example_theorems.jsonl (Lean) is examples/arith.jsonl here",
    expect: { runs: { "algorithm.name": "grpo" } },
  },
  {
    seed: "002",
    written: "python examples/train_example.py --algorithm grpo",
    expect: { elsewhere: "lean-grpo train examples/arith.jsonl --algorithm grpo" },
  },
  { seed: "002", written: "make test", expect: { elsewhere: "npm test" } },
  // Seed 003: the rlvr_vocab GRPO guide (Hydra overrides).
  {
    seed: "003",
    written: "uv run python rlvr_vocab/exp/grpo_train.py",
    here: "dataset=arith",
    note: PY003,
    expect: { runs: { ...ARITH_GROUP, "services.learner.optimizer.learning_rate": 0.001 } },
  },
  {
    seed: "003",
    written:
      "uv run python rlvr_vocab/exp/grpo_train.py exp_name=my_experiment training.learning_rate=1e-5 training.num_train_epochs=2 dataset.max_train_samples=1000",
    here: "dataset=arith exp_name=my_experiment training.learning_rate=1e-5 training.num_train_epochs=2 dataset.max_train_samples=1000",
    note: PY003,
    // 2 epochs of the 800 problems (fewer than 1000) at 8 prompts a step.
    expect: {
      runs: {
        exp_name: "my_experiment",
        "services.learner.optimizer.learning_rate": 1e-5,
        "training.steps": 200,
        "dataset.max_train_samples": 1000,
      },
    },
  },
  {
    seed: "003",
    written: "python grpo_train.py training.learning_rate=5e-6",
    here: "dataset=arith training.learning_rate=5e-6",
    note: PY003,
    expect: { runs: { "services.learner.optimizer.learning_rate": 5e-6 } },
  },
  {
    seed: "003",
    written: "python grpo_train.py model.name=Qwen/Qwen2.5-1.5B",
    here: "dataset=arith model.name=Qwen/Qwen2.5-1.5B",
    note: PY003,
    expect: {
      error:
        /model\.dir "Qwen\/Qwen2\.5-1\.5B".*Hugging Face Hub id.*huggingface-cli download Qwen\/Qwen2\.5-1\.5B --local-dir models\/Qwen2\.5-1\.5B/,
    },
  },
  {
    seed: "003",
    written: "python grpo_train.py dataset.max_train_samples=5000",
    here: "dataset=arith dataset.max_train_samples=5000",
    note: PY003,
    expect: { runs: { "dataset.max_train_samples": 5000 } },
  },
  {
    seed: "003",
    written:
      "python grpo_train.py exp_name=fast_test training.num_train_epochs=1 training.per_device_train_batch_size=1 dataset.max_train_samples=100",
    here: "dataset=arith exp_name=fast_test training.num_train_epochs=1 training.per_device_train_batch_size=1 dataset.max_train_samples=100",
    note: PY003,
    expect: {
      error:
        /per_device_train_batch_size × gradient_accumulation_steps = 1 completions per step is not a multiple of training\.num_generations = 8/,
    },
  },
  {
    seed: "003",
    written: "python grpo_train.py model=qwen3_1.5b",
    here: "dataset=arith model=qwen3_1.5b",
    note: PY003,
    expect: { error: /unknown model "qwen3_1\.5b".*arith-tiny/ },
  },
  {
    seed: "003",
    written: "python grpo_train.py dataset=gsm8k",
    here: "dataset=gsm8k",
    note: PY003,
    expect: { error: /unknown dataset "gsm8k".*arith/ },
  },
  {
    seed: "003",
    written: "python grpo_train.py logging.enabled=false",
    here: "dataset=arith logging.enabled=false",
    note: PY003,
    expect: { runs: { "logging.enabled": false }, tracking: "none" },
  },
  {
    seed: "003",
    written: "python grpo_train.py logging.mode=offline",
    here: "dataset=arith logging.mode=offline",
    note: PY003,
    expect: { runs: { "logging.mode": "offline" }, tracking: "wandb offline" },
  },
  {
    seed: "003",
    written:
      "uv run python rlvr_vocab/exp/grpo_train.py exp_name=test_run dataset.max_train_samples=100 training.num_train_epochs=1 logging.mode=offline",
    here: "dataset=arith exp_name=test_run dataset.max_train_samples=100 training.num_train_epochs=1 logging.mode=offline",
    note: PY003,
    expect: { runs: { exp_name: "test_run", "training.steps": 13, "dataset.max_train_samples": 100 }, tracking: "wandb offline" },
  },
  {
    seed: "003",
    written: "uv run python rlvr_vocab/exp/grpo_train.py model.reasoning_vocab_size=151646",
    here: "dataset=arith model.reasoning_vocab_size=151646",
    note: `${PY003}; the reasoning vocabulary is model.reasoning_* (its own guide)`,
    // The shipped tokenizer has 147 tokens: a reasoning vocabulary as large as Qwen's is refused either way.
    expect: { error: /reasoning_vocab_size/ },
  },
  {
    seed: "003",
    written: "sbatch slurm/train_baseline.sh",
    expect: { elsewhere: "a batch job running lean-grpo train" },
  },
  {
    seed: "003",
    written: "wandb login",
    expect: { elsewhere: "the same: W&B's CLI stores the key; or set WANDB_API_KEY (docs/guide/tracking.md)" },
  },
  // Seed 004: the GRPO RL training guide.
  {
    seed: "004",
    written:
      "python models/train_rl_base.py --config configs/rl_grpo_config.yaml --model_path checkpoints/your_sft_checkpoint --output_dir results/rl_grpo_$(date +%Y%m%d_%H%M%S)",
    here: `${DATA} --config ${CONFIGS}/rl_grpo_config.yaml --model_path models/arith-tiny --output_dir results/rl_grpo_20260101_000000`,
    note: "the guide's math data is examples/arith.jsonl here; your SFT checkpoint is the shipped models/arith-tiny, whose context is 256 tokens",
    expect: {
      error:
        /prompt plus max_tokens is 2067 tokens \(the longest prompt, dataset "row-1", is 19; training\.max_tokens is 2048\); the context of models\/arith-tiny .* is 256: set training\.max_tokens to at most 237/,
    },
  },
  {
    seed: "004",
    written: "python models/train_rl_base.py --config configs/rl_grpo_config_test.yaml --max_samples 10",
    here: `${DATA} --config ${CONFIGS}/rl_grpo_config_test.yaml --max_samples 10`,
    note: "the guide's math data is examples/arith.jsonl here; the test config's model.path is the shipped model",
    // One epoch of 10 problems at 16 / 2 = 8 prompts a step.
    expect: { runs: { "dataset.max_train_samples": 10, "training.steps": 2, "training.batch_size": 8, "model.dir": "models/arith-tiny" } },
  },
  {
    seed: "004",
    written: "python models/train_rl_base.py --config configs/rl_grpo_config.yaml --model_path results/rl_grpo_checkpoints/checkpoint-1000",
    here: `${DATA} --config ${CONFIGS}/rl_grpo_config.yaml --model_path results/rl_grpo_checkpoints/checkpoint-1000`,
    note: "the guide's way to resume",
    expect: { error: /model\.dir "results\/rl_grpo_checkpoints\/checkpoint-1000" does not exist.*--resume RUN/ },
  },
  {
    seed: "004",
    written: "bash scripts/train_rl_baseline.sh",
    expect: { elsewhere: "a script running lean-grpo train with the command above" },
  },
  {
    seed: "004",
    written: "python utils/reward_utils.py",
    expect: { elsewhere: "npx vitest run services/reward (the math_answer scorer's tests)" },
  },
  {
    seed: "004",
    written:
      "accelerate launch --multi_gpu models/train_rl_base.py --config configs/rl_grpo_config.yaml --model_path checkpoints/your_sft_checkpoint",
    expect: { elsewhere: "services.learner.impl=torch with services.learner.torchrun.nproc_per_node=N" },
  },
  // The seeds' settings on this project's files: each as its seed documents it.
  {
    seed: "001",
    kind: "setting",
    written: "--algorithm, -a TEXT  Algorithm: grpo, DGPO, dapo, gspo",
    here: `${DATA} -a DGPO`,
    note: "seed 001's CLI reference spells it DGPO; algorithm names are read in any case",
    expect: { runs: { "algorithm.name": "dgpo" } },
  },
  {
    seed: "001",
    kind: "setting",
    written: "lean-grpo train theorems.jsonl --algorithm grpo --num-generations 8",
    here: `${CONFIGS}/theorems.jsonl --algorithm grpo --num-generations 8`,
    note: "the seed's own theorems.jsonl (Lean theorems, Mathlib imports) with no Lean REPL configured",
    expect: {
      error:
        /the dataset .*theorems\.jsonl holds Lean theorems \(record 1, id "add_zero"\), which only a Lean REPL can check, and no REPL is configured: set services\.verifier\.repl\.command .* or the LEAN_REPL_CMD environment variable/,
    },
  },
  {
    seed: "003",
    kind: "setting",
    written: "training.num_train_epochs=1 (over a configuration file that sets the run's steps)",
    here: `${DATA} --config configs/train/arith.yaml training.num_train_epochs=1`,
    note: "the README's configuration (training.steps 100) with seed 003's epochs on the command line, which wins: 800 problems at 16 a step",
    expect: { runs: { "training.steps": 50, "training.batch_size": 16 } },
  },
  {
    seed: "003",
    kind: "setting",
    written: "dataset=arith exp_name=seed3 training.learning_rate=1e-5 dataset.max_train_samples=8 training.num_train_epochs=1",
    here: "dataset=arith exp_name=seed3 training.learning_rate=1e-5 dataset.max_train_samples=8 training.num_train_epochs=1",
    note: "seed 003's overrides on the arithmetic group: the group's prompt, reward and budget, the command line's learning rate and length",
    expect: { runs: { ...ARITH_GROUP, "services.learner.optimizer.learning_rate": 1e-5, "training.steps": 1, exp_name: "seed3" } },
  },
  {
    seed: "003",
    kind: "setting",
    written: 'system_prompt: "You are an expert mathematician. Show all your work and explain each step clearly."',
    here: "dataset=arith 'dataset.system_prompt=You are an expert mathematician. Show all your work and explain each step clearly.'",
    note: "its conf/dataset/deepscaler.yaml key as a dotted override; a system turn through the model's chat template",
    expect: { runs: { "prompt.system": "You are an expert mathematician. Show all your work and explain each step clearly." } },
  },
  {
    seed: "003",
    kind: "setting",
    written: "Ensure `training.gradient_checkpointing=true`",
    here: "dataset=arith training.gradient_checkpointing=true",
    note: "the guide's out-of-memory advice, with the default (TypeScript) learner",
    expect: {
      error:
        /training\.gradient_checkpointing: gradient checkpointing is the PyTorch learner's \(services\.learner\.impl=torch sets services\.learner\.torch\.gradient_checkpointing\)/,
    },
  },
  {
    seed: "003",
    kind: "setting",
    written: "Use mixed precision: `training.bf16=true`",
    here: "dataset=arith training.bf16=true",
    note: "with the default (TypeScript) learner, which computes in float32",
    expect: { error: /training\.bf16: bf16 needs the PyTorch learner on CUDA \(services\.learner\.impl=torch\)/ },
  },
  {
    seed: "004",
    kind: "setting",
    written: "gradient_checkpointing: true",
    here: `${TEST004} gradient_checkpointing=true services.learner.impl=torch 'services.learner.torch={device: cpu}'`,
    note: "the guide's out-of-memory advice, on the PyTorch learner (here on CPU)",
    expect: { runs: { "services.learner.impl": "torch", "services.learner.torch.gradient_checkpointing": true } },
  },
  {
    seed: "004",
    kind: "setting",
    written: "max_new_tokens: 1024  # From 2048",
    here: `${TEST004} max_new_tokens=1024`,
    note: "the guide's out-of-memory advice with the shipped model, whose context is 256 tokens",
    expect: { error: /prompt plus max_tokens is \d+ tokens .*training\.max_tokens is 1024\); the context of models\/arith-tiny .* is 256/ },
  },
  {
    seed: "004",
    kind: "setting",
    written: "max_new_tokens: 200",
    here: `${DATA} --config ${CONFIGS}/rl_grpo_config.yaml --model_path models/arith-tiny --output_dir results/rl_grpo_20260101_000000 max_new_tokens=200`,
    note: "the full configuration (rl_grpo_config.yaml) with what its refusal says to type: max_new_tokens at most 237",
    expect: {
      runs: {
        "model.dir": "models/arith-tiny",
        runs_dir: "results/rl_grpo_20260101_000000",
        "services.learner.lora.rank": 16,
        "services.learner.lora.alpha": 32,
        "services.learner.lora.dropout": 0.05,
        "training.num_generations": 2,
        "training.batch_size": 8,
        "training.steps": 300,
        "algorithm.config.beta": 0.05,
        "services.learner.optimizer.learning_rate": 5e-6,
        "training.max_tokens": 200,
        "training.temperature": 0.7,
        "training.top_p": 0.9,
        "reward.scorers": [{ name: "math_answer", weight: 1, params: { correct: 1, wrong: -1, no_answer: -0.5 } }],
      },
    },
  },
  {
    seed: "004",
    kind: "setting",
    written: "per_device_train_batch_size: 2  # From 4\ngradient_accumulation_steps: 8  # From 4",
    here: `${TEST004} per_device_train_batch_size=2 gradient_accumulation_steps=8`,
    note: "the same 16 completions a step: 8 prompts of 2",
    expect: { runs: { "training.batch_size": 8, "training.num_generations": 2 } },
  },
  {
    seed: "004",
    kind: "setting",
    written: "fp16: true",
    here: `${TEST004} fp16=true`,
    note: "the guide's advice for slow training",
    expect: { error: /fp16 .*fp16 is not supported: the learner trains in float32, or in bf16 autocast on CUDA; use bf16/ },
  },
  {
    seed: "004",
    kind: "setting",
    written: "fp16: true\ngradient_checkpointing: true\n(in configs/rl_grpo_config.yaml, whose max_new_tokens is 2048)",
    here: `${DATA} --config ${CONFIGS}/rl_fp16.yaml --max_samples 10`,
    note: "the guide's advice for slow training and for running out of memory, both in its full configuration with the shipped model: three problems, refused at once",
    expect: {
      error:
        /^fp16 .*fp16 is not supported.*\ngradient_checkpointing: gradient checkpointing is the PyTorch learner's.*\nprompt plus max_tokens is \d+ tokens .*training\.max_tokens is 2048/su,
    },
  },
  {
    seed: "004",
    kind: "setting",
    written: "logging_steps: 50  # From 10",
    here: `${TEST004} logging_steps=50`,
    note: "the guide's advice for slow training",
    expect: { error: /logging_steps .* is seed 004's "log metrics every N steps"; every step is logged here/ },
  },
  {
    seed: "004",
    kind: "setting",
    written: "kl_coef: 0.01  # From 0.05",
    here: `${TEST004} kl_coef=0.01 learning_rate=1e-5`,
    note: "the guide's advice when the reward does not rise",
    expect: { runs: { "algorithm.config.beta": 0.01, "services.learner.optimizer.learning_rate": 1e-5 } },
  },
  {
    seed: "002",
    kind: "setting",
    written: "3. **Command line args** override YAML",
    here: `${TEST004} --max_samples 10 --steps 3`,
    note: "the rule on seed 004's test configuration: its num_epochs (the file) against --steps (the command line)",
    expect: { runs: { "training.steps": 3 } },
  },
];
