"""The masked multi-turn batch both learners are checked on (TrainingSample.completion_mask).

A multi-turn trajectory is one training sample: prompt, the model's first attempt, the
environment's feedback, the model's next attempt. The mask says which completion tokens are the
model's (True: trained on) and which the environment's (False: conditioning only). Three groups,
completions of different lengths and mask patterns: feedback between two turns, feedback at the
end (a last failed attempt), a completion that opens with an environment token, an explicit
all-true mask and no mask (None: every token the model's). g2's rewards are equal, so DAPO's
dynamic sampling drops it. Token ids < 96 (qwen2-tiny's vocabulary).
"""

T, F = True, False
# (group, prompt, completion, mask or None, reward, truncated)
SAMPLES = [
    ("g0", [5, 17, 33], [40, 41, 7, 90, 12, 13, 44, 3], [T, T, T, F, F, F, T, T], 1.0, False),
    ("g0", [5, 17, 33], [8, 9, 60, 61, 71, 72, 73], [T, T, F, F, T, T, T], 0.0, False),
    ("g0", [5, 17, 33], [44, 3, 50, 51], None, 0.0, True),
    ("g0", [5, 17, 33], [20, 21, 90, 91, 92, 93, 22], [T, T, F, F, F, F, T], 1.0, False),
    ("g1", [60, 61, 62, 63], [1, 95, 0, 30, 31, 20], [T, T, T, F, F, T], 0.5, False),
    ("g1", [60, 61, 62, 63], [53, 54, 12], [T, T, F], 0.0, True),
    ("g1", [60, 61, 62, 63], [30, 7, 8, 9, 31, 32, 33, 34], [T, F, F, F, T, T, T, T], 0.25, False),
    ("g2", [3, 9], [50, 51, 52], [F, T, T], 1.0, False),
    ("g2", [3, 9], [53, 54, 55, 56], [T, T, T, T], 1.0, False),
]
# The sampler has no logprob for an environment token; callers send 0 there (the learner must ignore it).
ENVIRONMENT_SAMPLER_LOGPROB = 0.0
NO_SAMPLER = 2  # a sample whose sampler logprobs are unknown


def model_token_counts():
    return [len(c) if m is None else sum(m) for _, _, c, m, _, _ in SAMPLES]


def columns():
    """The batch as the reference's columns: (prompt, completion) pairs, group ids, masks, rewards, truncation flags."""
    pairs = [(p, c) for _, p, c, *_ in SAMPLES]
    return pairs, [g for g, *_ in SAMPLES], [m for _, _, _, m, _, _ in SAMPLES], [r for *_, r, _ in SAMPLES], [t for *_, t in SAMPLES]
