"""The peer arm: TRL's GRPOTrainer doing the learner work of our TrainStep, for a side-by-side time.

Same work as `grpo_step` / `large_model`: the same random model (the same weights: the same
directory, or the same seeded tensors), LoRA r16 alpha 32 on the seven linears (float32 adapter
over a bf16 base, as peft keeps it), `beta` 0.04 (a reference pass through peft's
disable_adapter), loss_type "grpo" with group-scaled rewards (our grpo's defaults), AdamW at lr
1e-5, one optimizer update over the whole batch (micro-batch × accumulation = 128 completions,
so TRL makes no old-logprob pass either), the same prompts, completions and rewards. Generation
is replaced through TRL's own `rollout_func` hook, which returns the fixed completions; the
reward function hands back their fixed rewards. A tokenizer with one word per token id exists
only because TRL decodes completions (its decode is part of its step, as our request parsing
is of ours). No completion contains the EOS id, so TRL trains on every completion token.

The micro-batch (`per_device_train_batch_size`) is swept: each setting builds a fresh model and
trainer, runs a warm-up step and a timed step (CUDA synchronised by a callback), and a setting
that runs out of memory is recorded as such. The fastest that fits is the arm's figure."""
from __future__ import annotations

import gc
import math
import tempfile
import time
from pathlib import Path

import torch

from environment import ALL_LINEAR, device_name, peak_memory_gib, reset_peak_memory
from flops import grpo_step_flops, mfu
from model_shapes import LARGE_SHAPE, STEP_SHAPE, tiny
from random_model import random_weights, write_random_model
from step_client import GPU_BATCH, SMOKE_BATCH, rollout_samples

SHAPES = {"0.5b": STEP_SHAPE, "7b": LARGE_SHAPE}


def trl_missing() -> str | None:
    """Why the TRL arm cannot run here (None when it can)."""
    missing = []
    for module in ("transformers", "peft", "trl", "datasets"):
        try:
            __import__(module)
        except ImportError as error:
            missing.append(f"{module} ({error})")
    return f"not installed: {', '.join(missing)} (pip install trl peft transformers datasets)" if missing else None


def word_tokenizer(vocab_size: int, eos_id: int):
    """A fast tokenizer whose token i is the word "t<i>": enough for TRL to decode and pad."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {f"t{i}": i for i in range(vocab_size)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="t0"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    token = f"t{eos_id}"
    return PreTrainedTokenizerFast(tokenizer_object=core, eos_token=token, pad_token=token, unk_token="t0")


def _absent_id(samples: list[dict], vocab: int) -> int:
    used = {t for s in samples for t in s["prompt_token_ids"] + s["completion_token_ids"]}
    return next(i for i in range(vocab - 1, -1, -1) if i not in used)


def _load_model(config: dict, model_dir: Path | None, device: torch.device, dtype: torch.dtype):
    from transformers import AutoConfig, AutoModelForCausalLM

    if model_dir is not None:
        return AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=dtype, attn_implementation="sdpa").to(device)
    # The 7B shape: the same seeded tensors as large_model's native arm, made on the device.
    hf_config = AutoConfig.for_model(config["model_type"], **{k: v for k, v in config.items() if k != "model_type"})
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(hf_config, dtype=dtype, attn_implementation="sdpa")
    missing, unexpected = model.load_state_dict(random_weights(config, seed=1, device=device.type, dtype=dtype), strict=False)
    if unexpected or [m for m in missing if not m.endswith("rotary_emb.inv_freq")]:
        raise AssertionError(f"the random weights do not fit the model: missing {missing[:3]}, unexpected {unexpected[:3]}")
    return model


class _StepTimer:
    """Seconds of each optimizer step (generation through the hook, decode, rewards, reference
    pass, forward/backward of every micro-batch, AdamW), CUDA synchronised at both ends."""

    def __init__(self, device: torch.device):
        from transformers import TrainerCallback

        timer = self
        self.device = device
        self.seconds: list[float] = []
        self.peaks: list[float | None] = []

        class Callback(TrainerCallback):
            def on_step_begin(self, args, state, control, **kwargs):
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                    if state.global_step == 1:  # the timed step's own peak
                        torch.cuda.reset_peak_memory_stats(device)
                timer.started = time.perf_counter()

            def on_step_end(self, args, state, control, **kwargs):
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                timer.seconds.append(time.perf_counter() - timer.started)
                timer.peaks.append(peak_memory_gib(device))

        self.callback = Callback()


def run_setting(config: dict, model_dir: Path | None, device: torch.device, batch, samples: list[dict], micro_batch: int, gc_on: bool, work: Path) -> dict:
    """One micro-batch setting: a warm-up step and a timed step."""
    import datasets
    import peft
    from trl import GRPOConfig, GRPOTrainer

    total = len(samples)
    if total % micro_batch:
        raise ValueError(f"micro-batch {micro_batch} does not divide the batch of {total}")
    prompts = [f"p{g}" for g in range(batch.prompts)]
    by_prompt = {p: [s for s in samples if s["group_id"] == f"g{g}"] for g, p in enumerate(prompts)}
    eos = _absent_id(samples, config["vocab_size"])

    def rollout(prompt_slice, trainer):
        # TRL hands each prompt once per completion it wants (num_generations copies, in order);
        # copy k of a prompt gets that group's completion k. (Were it handed once, all of them.)
        taken: dict[str, int] = {}
        rows = []
        once = len(set(prompt_slice)) == len(prompt_slice)
        for p in prompt_slice:
            if once:
                rows += by_prompt[p]
            else:
                rows.append(by_prompt[p][taken.get(p, 0)])
                taken[p] = taken.get(p, 0) + 1
        return {
            "prompt_ids": [s["prompt_token_ids"] for s in rows],
            "completion_ids": [s["completion_token_ids"] for s in rows],
            "logprobs": [[0.0] * len(s["completion_token_ids"]) for s in rows],
            "fixed_reward": [s["reward"] for s in rows],
        }

    def fixed_reward(prompts, completions, fixed_reward, **kwargs):
        return list(fixed_reward)

    cuda = device.type == "cuda"
    dtype = torch.bfloat16 if cuda else torch.float32
    args = GRPOConfig(
        output_dir=str(work / f"trl-{micro_batch}"),
        per_device_train_batch_size=micro_batch,
        gradient_accumulation_steps=total // micro_batch,
        num_generations=batch.completions_per_prompt,
        max_completion_length=batch.completion_tokens,
        beta=0.04,
        loss_type="grpo",
        scale_rewards="group",
        epsilon=0.2,
        learning_rate=1e-5,
        lr_scheduler_type="constant",
        max_grad_norm=1.0,
        num_iterations=1,
        max_steps=2,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        bf16=cuda,
        use_cpu=not cuda,
        gradient_checkpointing=gc_on,
        gradient_checkpointing_kwargs={"use_reentrant": False} if gc_on else None,
        shuffle_dataset=False,
        dataloader_num_workers=0,
        disable_dropout=True,
        seed=0,
    )
    lora = peft.LoraConfig(r=16, lora_alpha=32, target_modules=ALL_LINEAR, lora_dropout=0.0, bias="none", task_type="CAUSAL_LM")
    # Two steps' worth of prompts, each prompt once per step (TRL repeats them num_generations times).
    dataset = datasets.Dataset.from_dict({"prompt": prompts * 2})
    timer = _StepTimer(device)
    model = _load_model(config, model_dir, device, dtype)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=fixed_reward,
        args=args,
        train_dataset=dataset,
        processing_class=word_tokenizer(config["vocab_size"], eos),
        peft_config=lora,
        rollout_func=rollout,
        callbacks=[timer.callback],
    )
    output = trainer.train()
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    del trainer, model
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    if len(timer.seconds) != 2:
        raise AssertionError(f"TRL ran {len(timer.seconds)} steps, expected 2")
    loss = logs[-1]["loss"] if logs else output.training_loss
    if not math.isfinite(loss):
        raise AssertionError(f"TRL's loss is {loss}")
    return {
        "micro_batch": micro_batch,
        "gradient_accumulation": total // micro_batch,
        "warmup_seconds": round(timer.seconds[0], 3),
        "seconds": round(timer.seconds[1], 3),
        "peak_gpu_memory_gib": timer.peaks[1],
        "loss": loss,
        "grad_norm": logs[-1].get("grad_norm") if logs else None,
    }


def run(smoke: bool, device: torch.device, work: Path, shape: str, gradient_checkpointing: bool, micro_batches: list[int]) -> dict:
    why = trl_missing()
    if why:
        return {"ok": None, "skipped_reason": why}
    import transformers
    import trl

    shape_name, full = SHAPES[shape]
    config = tiny(full) if smoke else full
    batch = SMOKE_BATCH if smoke else GPU_BATCH
    samples = rollout_samples(batch, config["vocab_size"], seed=5)  # our timed step's batch
    model_dir = None
    if shape == "0.5b":
        model_dir = write_random_model(config, Path(tempfile.mkdtemp(dir=work)) / shape_name, seed=1, dtype="float32" if smoke else "bfloat16")
    settings = []
    for micro_batch in micro_batches:
        reset_peak_memory(device)
        try:
            settings.append({"ok": True, **run_setting(config, model_dir, device, batch, samples, micro_batch, gradient_checkpointing, work)})
        except torch.cuda.OutOfMemoryError as error:
            settings.append({"ok": False, "micro_batch": micro_batch, "error": f"out of GPU memory: {str(error)[:200]}"})
            gc.collect()
            torch.cuda.empty_cache()
    fitting = [s for s in settings if s["ok"]]
    if not fitting:
        return {"ok": False, "error": "no micro-batch setting fitted", "settings": settings}
    best = min(fitting, key=lambda s: s["seconds"])
    flops = grpo_step_flops(config, batch.sequences)
    return {
        "ok": True,
        "arm": "trl",
        "trl": trl.__version__,
        "transformers": transformers.__version__,
        "shape": shape_name if not smoke else f"tiny {shape_name}",
        "gradient_checkpointing": gradient_checkpointing,
        "settings": settings,
        "best_micro_batch": best["micro_batch"],
        "gradient_accumulation": best["gradient_accumulation"],
        "seconds": best["seconds"],
        "tokens_per_second": round(sum(batch.sequences) / best["seconds"], 1),
        "peak_gpu_memory_gib": best["peak_gpu_memory_gib"],
        "model_tflops_per_step": float(f"{flops / 1e12:.4g}"),
        "mfu": mfu(flops, best["seconds"], device_name(device)),
        "loss": best["loss"],
        "grad_norm": best["grad_norm"],
    }
