"""Checks a whole batch before anything is computed, so a rejected TrainStep changes nothing.
Messages name the field by its path in the request (`samples[3].reward`: the fourth sample
message of the TrainStep stream), the sample's id and what is accepted, as the TS learner's
(tests/conformance/learner/bad-input.spec.ts holds both to it)."""
from __future__ import annotations

import json
import math

from ..errors import SampleError
from ..algorithms.parameters import js_number
from ..model.model_config import ModelConfig
from .training_example import TrainingExample


def _check_ids(path: str, ids: list[int], config: ModelConfig, suffix: str) -> None:
    if not ids:
        raise SampleError(f"{path} is empty{suffix}; at least one token is needed")
    for i, token in enumerate(ids):
        if token >= config.vocab_size:
            raise SampleError(f"{path}[{i}] = {token} is outside the model's vocabulary [0, {config.vocab_size}){suffix}")


def _js(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return js_number(value)


def _check_completion_mask(where: str, of: str, example: TrainingExample) -> None:
    """The loss mask: none (every token the model's), or one flag per completion token with at least one true."""
    mask = example.completion_mask
    if not mask:
        return
    tokens = len(example.completion_ids)
    if len(mask) != tokens:
        raise SampleError(
            f"{where}.completion_mask has {len(mask)} values but {where}.completion_token_ids has {tokens}{of}; "
            "send one per completion token (true: the model's, trained on; false: the environment's, conditioning only), or none (every token the model's)"
        )
    if not any(mask):
        raise SampleError(
            f"{where}.completion_mask has no true value among its {tokens}{of}; "
            "at least one completion token must be the model's (true), or send no mask (every token the model's)"
        )


def validate_examples(examples: list[TrainingExample], config: ModelConfig, expected_samples: int, num_generations: int) -> None:
    if not examples:
        raise SampleError("the batch has no samples; send the header, then at least one sample")
    if expected_samples != 0 and len(examples) != expected_samples:
        raise SampleError(f"header.expected_samples is {expected_samples} but the stream delivered {len(examples)} samples")
    sizes: dict[str, int] = {}
    for index, example in enumerate(examples):
        where = f"samples[{index}]"
        of = f" (sample_id {json.dumps(example.sample_id, ensure_ascii=False)})"
        if example.group_id == "":
            raise SampleError(f"{where}.group_id is empty{of}; every sample needs the group of its prompt")
        _check_ids(f"{where}.prompt_token_ids", example.prompt_ids, config, of)
        _check_ids(f"{where}.completion_token_ids", example.completion_ids, config, of)
        total = len(example.prompt_ids) + len(example.completion_ids)
        if total > config.max_position_embeddings:
            raise SampleError(
                f"{where}: prompt + completion is {total} tokens{of}; the model's context (max_position_embeddings) is {config.max_position_embeddings}"
            )
        sampler = example.sampler_logprobs
        if sampler is not None:
            if len(sampler) != len(example.completion_ids):
                raise SampleError(
                    f"{where}.sampler_logprobs has {len(sampler)} values but {where}.completion_token_ids has {len(example.completion_ids)}{of}; "
                    "send one per completion token, or none"
                )
            for i, lp in enumerate(sampler):
                if not math.isfinite(lp) or lp > 0:
                    raise SampleError(f"{where}.sampler_logprobs[{i}] = {_js(lp)}{of}; a logprob must be finite and <= 0")
        _check_completion_mask(where, of, example)
        if not math.isfinite(example.reward):
            raise SampleError(f"{where}.reward is {_js(example.reward)}{of}; it must be a finite number")
        sizes[example.group_id] = sizes.get(example.group_id, 0) + 1
    if num_generations != 0:
        for group, size in sizes.items():
            if size != num_generations:
                raise SampleError(
                    f"header.num_generations is {num_generations} but group_id {json.dumps(group, ensure_ascii=False)} has {size} samples; "
                    "send num_generations samples per group (or 0 to skip the check)"
                )
