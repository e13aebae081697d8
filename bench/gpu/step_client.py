"""A GRPO rollout batch of the issue's size and a gRPC client that sends it as TrainStep, the way
the orchestrator does (client stream: header, then one sample per message)."""
from __future__ import annotations

import random
from dataclasses import dataclass

import grpc

from leangrpo_learner import proto

M = proto.message


@dataclass(frozen=True)
class BatchShape:
    prompts: int
    completions_per_prompt: int
    completion_tokens: int
    prompt_tokens: int

    @property
    def sequences(self) -> list[int]:
        return [self.prompt_tokens + self.completion_tokens] * (self.prompts * self.completions_per_prompt)


# The step: 16 prompts × 8 completions × 512 completion tokens (prompts of 128 tokens).
GPU_BATCH = BatchShape(prompts=16, completions_per_prompt=8, completion_tokens=512, prompt_tokens=128)
SMOKE_BATCH = BatchShape(prompts=2, completions_per_prompt=4, completion_tokens=16, prompt_tokens=8)


def rollout_samples(shape: BatchShape, vocab: int, seed: int) -> list[dict]:
    """Random token ids; rewards 0/1 alternating within each group, so every group has a spread."""
    rng = random.Random(seed)
    samples = []
    for g in range(shape.prompts):
        prompt = [rng.randrange(vocab) for _ in range(shape.prompt_tokens)]
        for i in range(shape.completions_per_prompt):
            samples.append(
                dict(
                    group_id=f"g{g}",
                    sample_id=f"g{g}-{i}",
                    prompt_token_ids=prompt,
                    completion_token_ids=[rng.randrange(vocab) for _ in range(shape.completion_tokens)],
                    reward=float(i % 2),
                )
            )
    return samples


def train_step(address: str, step: int, shape: BatchShape, samples: list[dict], timeout_s: float):
    """One TrainStep over gRPC; returns the TrainStepResponse."""
    Request = M("leangrpo.v1.TrainStepRequest")
    header = M("leangrpo.v1.TrainStepHeader")(algorithm="grpo", step=step, expected_samples=len(samples), num_generations=shape.completions_per_prompt)
    messages = [Request(header=header)] + [Request(sample=M("leangrpo.v1.TrainingSample")(**s)) for s in samples]
    with grpc.insecure_channel(address) as channel:
        call = channel.stream_unary(
            "/leangrpo.v1.LearnerService/TrainStep",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=M("leangrpo.v1.TrainStepResponse").FromString,
        )
        return call(iter(messages), timeout=timeout_s)
