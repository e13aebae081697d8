"""torch.sharding "fsdp" (FSDP2 fully_shard of each decoder layer) under torchrun with 2 CPU ranks
(gloo): each rank holds half of every layer, and 3 DGPO TrainSteps (the reference scored in each
micro-batch; an odd micro-batch count, so one rank runs an uncounted pass in the last round) give
the single-process adapter within 1e-5; ComputeLogprobs (broadcast to both ranks, which must
gather each layer together) gives the single-process logprobs. Skipped with the reason where
torch has no FSDP2 (Debian's torch 1.13); the refusals of the config are tested everywhere."""

import pytest
import torch

from batches import TINY_CONFIG, rollout_batch
from conftest import LM_FIXTURES
from leangrpo_learner import proto, safetensors_io
from leangrpo_learner.config import ConfigError, load_config
from leangrpo_learner.distributed.fsdp import check_sharding
from server_process import LearnerProcess
from test_torchrun_two_ranks import torchrun_launcher

CONFIG = {**TINY_CONFIG, "model": {"dir": str(LM_FIXTURES / "qwen2-tiny")}}
SHARDED = {**CONFIG, "torch": {"sharding": "fsdp"}}


def fsdp2_missing() -> str | None:
    try:
        check_sharding(load_config(SHARDED), distributed=True)
    except ConfigError as error:
        return str(error)
    return None


def three_groups(step: int) -> list[dict]:
    """Two groups, and on odd steps a third: 3 micro-batches for 2 ranks, so one runs an uncounted pass."""
    extra = [dict(s, group_id="g2", sample_id=f"x{s['sample_id']}") for s in rollout_batch(shift=step + 5)[:3]] if step % 2 else []
    return rollout_batch(shift=step) + extra


def steps_and_logprobs(process: LearnerProcess):
    counts = []
    for step in range(1, 4):
        response = process.train_step(dict(algorithm="dgpo", step=step), three_groups(step))
        counts.append(response.metrics["micro_batches"])
    sequences = [
        proto.message("leangrpo.v1.TokenSequence")(prompt_token_ids=s["prompt_token_ids"], completion_token_ids=s["completion_token_ids"])
        for s in rollout_batch(9)
    ]
    scored = process.unary(
        "ComputeLogprobs",
        proto.message("leangrpo.v1.ComputeLogprobsRequest")(sequences=sequences, include_entropy=True),
        "leangrpo.v1.ComputeLogprobsResponse",
    )
    _, files = process.export_adapter()
    return counts, [list(s.logprobs) for s in scored.sequences], safetensors_io.load_bytes(files["adapter_model.safetensors"])


@pytest.mark.skipif(fsdp2_missing() is not None, reason=f"{fsdp2_missing()}")
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "torch.compile"])
def test_two_sharded_gloo_ranks_give_the_single_process_steps_and_logprobs(compiled):
    """With torch.compile the sharded ranks run compiled layers on the gathered weights; the
    single process they are compared with stays eager."""
    single = LearnerProcess(CONFIG)
    try:
        _, expected_logprobs, expected = steps_and_logprobs(single)
    finally:
        assert single.stop() == 0
    launcher = torchrun_launcher(2)
    sharded = {**SHARDED, "torch": {**SHARDED["torch"], "compile": compiled}}
    ranks = LearnerProcess(sharded, launcher=launcher, env={"OMP_NUM_THREADS": "1"})
    try:
        counts, logprobs, got = steps_and_logprobs(ranks)
    finally:
        assert ranks.stop() != -9
    assert set(got) == set(expected)
    for key, tensor in expected.items():
        assert float((got[key] - tensor).abs().max()) <= 1e-5, key
    for mine, theirs in zip(logprobs, expected_logprobs):
        assert torch.allclose(torch.tensor(mine), torch.tensor(theirs), atol=1e-5)
    assert counts == [3, 2, 3]  # both ranks had work; odd steps had an uneven last round


def test_fsdp_is_refused_outside_torchrun_and_with_the_transformers_source():
    with pytest.raises(ConfigError, match='"torch.sharding" is "fsdp" but the learner was not launched by torchrun'):
        check_sharding(load_config(SHARDED), distributed=False)
    config = load_config(SHARDED)
    config["torch"]["model_source"] = "transformers"  # set after load_config, which needs transformers installed for it
    with pytest.raises(ConfigError, match='"torch.sharding" is "fsdp" with torch.model_source "transformers"'):
        check_sharding(config, distributed=True)


@pytest.mark.skipif(fsdp2_missing() is None, reason="this torch has FSDP2; the refusal is for torch < 2.4")
def test_fsdp_on_a_torch_without_fsdp2_is_refused_naming_the_key():
    assert f'config key "torch.sharding" is "fsdp" but torch {torch.__version__} has no FSDP2 fully_shard (torch >= 2.4 has)' in fsdp2_missing()
