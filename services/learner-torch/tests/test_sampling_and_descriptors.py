"""The sampling distribution on a hand-computed case, and the committed descriptor set's freshness."""
import math
import shutil
import subprocess

import pytest
import torch

from conftest import REPO_ROOT
from leangrpo_learner.proto import DESCRIPTOR_SET
from leangrpo_learner.sampling import SamplingDistribution, SamplingMessage, resolve_sampling, token_logprobs_and_entropy

LOGITS = torch.tensor([[2.0, 1.0, 0.0, -1.0]] * 2)


def test_top_k_then_top_p_renormalised_with_the_sampled_token_kept():
    # top_k 3 keeps ids 0,1,2 (weights e², e, 1; mass 11.107); top_p 0.8 of it is 8.886: id 0
    # (7.389) is short of it, 0+1 (10.107) reaches it, so the support is {0, 1}.
    sampling = SamplingDistribution(temperature=1.0, top_k=3, top_p=0.8)
    logp, entropy = token_logprobs_and_entropy(LOGITS, torch.tensor([0, 3]), sampling)
    assert float(logp[0]) == pytest.approx(-math.log(1 + math.exp(-1)), abs=1e-6)
    # id 3 was sampled although outside the nucleus: it joins the support.
    assert float(logp[1]) == pytest.approx(-1 - math.log(math.exp(2) + math.exp(1) + math.exp(-1)), abs=1e-6)
    p0 = 1 / (1 + math.exp(-1))
    assert float(entropy[0]) == pytest.approx(-(p0 * math.log(p0) + (1 - p0) * math.log(1 - p0)), abs=1e-6)


def test_temperature_divides_the_logits_and_unset_truncates_nothing():
    logp, _ = token_logprobs_and_entropy(LOGITS[:1], torch.tensor([2]), SamplingDistribution(temperature=2.0))
    total = sum(math.exp(v / 2) for v in [2, 1, 0, -1])
    assert float(logp[0]) == pytest.approx(0 - math.log(total), abs=1e-6)


@pytest.mark.skipif(shutil.which("npx") is None, reason="npx (buf) is not installed")
def test_the_descriptor_set_is_what_buf_builds_from_proto(tmp_path):
    built = tmp_path / "descriptors.binpb"
    result = subprocess.run(["npx", "--no-install", "buf", "build", "-o", str(built)], cwd=REPO_ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"buf is not available: {result.stderr.strip()[:200]}")
    assert (
        built.read_bytes() == DESCRIPTOR_SET.read_bytes()
    ), "proto/ changed: rebuild with `npx buf build -o services/learner-torch/leangrpo_learner/proto/descriptors.binpb`"


FULL = SamplingDistribution(temperature=1.0, top_k=0, top_p=1.0)


def test_resolve_sampling_reads_the_message_with_top_p_0_as_unset():
    assert resolve_sampling(SamplingMessage(0.7, 20, 0.9), None, "sampling") == SamplingDistribution(0.7, 20, 0.9)
    assert resolve_sampling(SamplingMessage(0.7, 0, 0.0), None, "sampling") == SamplingDistribution(0.7, 0, 1.0)


def test_resolve_sampling_scores_greedy_under_the_untruncated_temperature_1_distribution():
    assert resolve_sampling(SamplingMessage(0.0, 0, 0.0), None, "header.sampling") == FULL
    assert resolve_sampling(SamplingMessage(0.0, 5, 0.5), None, "header.sampling") == FULL


def test_resolve_sampling_takes_an_older_temperature_when_the_message_is_absent():
    assert resolve_sampling(None, None, "sampling") == FULL
    assert resolve_sampling(None, (0.7, "temperature"), "sampling") == SamplingDistribution(temperature=0.7)
    assert resolve_sampling(SamplingMessage(0.0, 0, 0.0), (1.0, "algorithm_config.temperature"), "header.sampling") == FULL


def test_resolve_sampling_refuses_an_older_temperature_that_disagrees_naming_both():
    with pytest.raises(ValueError, match=r"^temperature is 0.8 but sampling.temperature is 0.7"):
        resolve_sampling(SamplingMessage(0.7, 0, 1.0), (0.8, "temperature"), "sampling")
    with pytest.raises(ValueError, match=r"algorithm_config.temperature is 0.7 but header.sampling.temperature is 0 \(greedy decoding"):
        resolve_sampling(SamplingMessage(0.0, 0, 0.0), (0.7, "algorithm_config.temperature"), "header.sampling")
    with pytest.raises(ValueError, match=r"sampling.temperature is -1; accepted: a number >= 0 \(0 is greedy decoding\)"):
        resolve_sampling(SamplingMessage(-1.0, 0, 1.0), None, "sampling")
