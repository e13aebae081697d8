"""Checks a whole batch before anything is computed, so a rejected TrainStep changes nothing.
Messages name the sample (index and id), the field and what is accepted (as the TS learner's)."""
from __future__ import annotations

import json
import math

from ..errors import SampleError
from ..algorithms.parameters import js_number
from ..model.model_config import ModelConfig
from .training_example import TrainingExample


def _check_ids(where: str, field: str, ids: list[int], config: ModelConfig) -> None:
    if not ids:
        raise SampleError(f"{where}: {field} is empty; at least one token is needed")
    for i, token in enumerate(ids):
        if token >= config.vocab_size:
            raise SampleError(f"{where}: {field}[{i}] = {token} is outside the model's vocabulary [0, {config.vocab_size})")


def _js(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return js_number(value)


def _check_completion_mask(where: str, example: TrainingExample) -> None:
    """The loss mask: none (every token the model's), or one flag per completion token with at least one true."""
    mask = example.completion_mask
    if not mask:
        return
    tokens = len(example.completion_ids)
    if len(mask) != tokens:
        raise SampleError(
            f"{where}: completion_mask has {len(mask)} values but completion_token_ids has {tokens}; "
            "send one per completion token (true: the model's, trained on; false: the environment's, conditioning only), or none (every token the model's)"
        )
    if not any(mask):
        raise SampleError(
            f"{where}: completion_mask has no true value among its {tokens}; "
            "at least one completion token must be the model's (true), or send no mask (every token the model's)"
        )


def validate_examples(examples: list[TrainingExample], config: ModelConfig, expected_samples: int, num_generations: int) -> None:
    if not examples:
        raise SampleError("the batch has no samples; send the header, then at least one sample")
    if expected_samples != 0 and len(examples) != expected_samples:
        raise SampleError(f"header.expected_samples is {expected_samples} but the stream delivered {len(examples)} samples")
    sizes: dict[str, int] = {}
    for index, example in enumerate(examples):
        where = f"sample {index} (sample_id {json.dumps(example.sample_id, ensure_ascii=False)})"
        if example.group_id == "":
            raise SampleError(f"{where}: group_id is empty; every sample needs the group of its prompt")
        _check_ids(where, "prompt_token_ids", example.prompt_ids, config)
        _check_ids(where, "completion_token_ids", example.completion_ids, config)
        total = len(example.prompt_ids) + len(example.completion_ids)
        if total > config.max_position_embeddings:
            raise SampleError(
                f"{where}: prompt + completion is {total} tokens; the model's context (max_position_embeddings) is {config.max_position_embeddings}"
            )
        sampler = example.sampler_logprobs
        if sampler is not None:
            if len(sampler) != len(example.completion_ids):
                raise SampleError(
                    f"{where}: sampler_logprobs has {len(sampler)} values but completion_token_ids has {len(example.completion_ids)}; "
                    "send one per completion token, or none"
                )
            for i, lp in enumerate(sampler):
                if not math.isfinite(lp) or lp > 0:
                    raise SampleError(f"{where}: sampler_logprobs[{i}] = {_js(lp)}; a logprob must be finite and <= 0")
        _check_completion_mask(where, example)
        if not math.isfinite(example.reward):
            raise SampleError(f"{where}: reward is {_js(example.reward)}; it must be a finite number")
        sizes[example.group_id] = sizes.get(example.group_id, 0) + 1
    if num_generations != 0:
        for group, size in sizes.items():
            if size != num_generations:
                raise SampleError(f"group_id {json.dumps(group, ensure_ascii=False)} has {size} samples; header.num_generations is {num_generations}")
