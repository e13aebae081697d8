"""A small rollout batch for the tiny qwen2 model (two groups of three)."""


def rollout_batch(shift: int = 0) -> list[dict]:
    samples = []
    for g, prompt in enumerate([[5, 17, 33], [60, 61, 62, 63]]):
        for i in range(3):
            samples.append(
                dict(
                    group_id=f"g{g}",
                    prompt_token_ids=prompt,
                    completion_token_ids=[(7 * i + 11 * g + shift + t) % 90 + 3 for t in range(2 + i)],
                    reward=float((i + g + shift) % 3 == 0),
                    sample_id=f"s{g}-{i}",
                )
            )
    return samples


TINY_CONFIG = {
    "lora": {"rank": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj", "down_proj"]},
    "optimizer": {"learning_rate": 0.01},
    "micro_batch_tokens": 16,
    "seed": 3,
}
