"""The server started as a child process, driven over gRPC: every RPC, health, reflection, error
codes and messages, exact resume from a checkpoint, and a graceful SIGTERM."""
import hashlib
import json

import grpc
import pytest

from batches import TINY_CONFIG, rollout_batch
from conftest import LM_FIXTURES
from leangrpo_learner import proto
from server_process import LearnerProcess

M = proto.message


@pytest.fixture(scope="module")
def checkpoint_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("checkpoints")


@pytest.fixture(scope="module")
def learner(checkpoint_dir):
    process = LearnerProcess({**TINY_CONFIG, "model": {"dir": str(LM_FIXTURES / "qwen2-tiny")}, "checkpoint_dir": str(checkpoint_dir)})
    yield process
    assert process.stop() == 0


def grpo(step=0, **extra):
    return dict(algorithm="grpo", step=step, **extra)


def test_list_algorithms_matches_the_ts_table(learner):
    response = learner.unary("ListAlgorithms", M("leangrpo.v1.ListAlgorithmsRequest")(), "leangrpo.v1.ListAlgorithmsResponse")
    assert [a.name for a in response.algorithms] == ["grpo", "drgrpo", "dapo", "gspo", "dgpo", "cispo", "sapo"]
    gspo = {p.name: p for p in response.algorithms[3].params}
    assert gspo["epsilon"].default_value == "0.0003" and gspo["epsilon_high"].default_value == "0.0004"
    assert gspo["temperature"].default_value == "1"
    assert list(gspo["epsilon"].aliases) == ["clip_low"]
    assert "also accepted as" not in gspo["epsilon"].description
    assert list(gspo["kl_estimator"].allowed_values) == ["k1", "k2", "k3", "abs", "schulman", "mse"]


def test_train_steps_export_and_logprobs(learner):
    first = learner.train_step(grpo(expected_samples=6, num_generations=3), rollout_batch())
    assert (first.step, first.adapter_version, first.adapter_name) == (1, 1, "policy-v1")
    for name in ["loss", "reward_mean", "grad_norm", "kl", "clip_ratio_region_mean", "entropy", "learning_rate", "micro_batches"]:
        assert name in first.metrics
    assert first.metrics["micro_batches"] > 1  # 16-token budget
    manifest, files = learner.export_adapter(chunk_size=1000)
    assert manifest.name == "policy-v1" and manifest.version == 1
    for info in manifest.files:
        assert hashlib.sha256(files[info.path]).hexdigest() == info.sha256 and len(files[info.path]) == info.size
    assert json.loads(files["adapter_config.json"])["target_modules"] == ["q_proj", "v_proj", "down_proj"]
    sequences = [M("leangrpo.v1.TokenSequence")(prompt_token_ids=[5, 17, 33], completion_token_ids=[40, 41])]
    policy = learner.unary(
        "ComputeLogprobs", M("leangrpo.v1.ComputeLogprobsRequest")(sequences=sequences, include_entropy=True), "leangrpo.v1.ComputeLogprobsResponse"
    )
    reference = learner.unary(
        "ComputeLogprobs", M("leangrpo.v1.ComputeLogprobsRequest")(sequences=sequences, reference=True), "leangrpo.v1.ComputeLogprobsResponse"
    )
    assert policy.adapter_version == 1 and reference.adapter_version == 0
    assert len(policy.sequences[0].logprobs) == 2 and len(policy.sequences[0].entropies) == 2
    assert len(reference.sequences[0].entropies) == 0
    assert policy.sequences[0].logprobs != reference.sequences[0].logprobs  # the update moved the policy


def test_a_bad_sample_is_invalid_argument_naming_it_and_changes_nothing(learner):
    status = learner.unary("GetStatus", M("leangrpo.v1.GetStatusRequest")(), "leangrpo.v1.GetStatusResponse")
    batch = rollout_batch()
    batch[4]["completion_token_ids"] = [3, 500]
    with pytest.raises(grpc.RpcError) as error:
        learner.train_step(grpo(), batch)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.value.details() == 'samples[4].completion_token_ids[1] = 500 is outside the model\'s vocabulary [0, 96) (sample_id "s1-1")'
    with pytest.raises(grpc.RpcError) as error:
        learner.train_step(dict(algorithm="grpo", algorithm_config=None) | {"algorithm": "ppo"}, rollout_batch())
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "accepted: grpo, drgrpo, dapo, gspo, dgpo" in error.value.details()
    with pytest.raises(grpc.RpcError) as error:
        learner.train_step(grpo(step=99), rollout_batch())
    assert error.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    after = learner.unary("GetStatus", M("leangrpo.v1.GetStatusRequest")(), "leangrpo.v1.GetStatusResponse")
    assert after.step == status.step and after.adapter_version == status.adapter_version


def test_checkpoint_resume_takes_the_same_next_step(learner, checkpoint_dir):
    # Paths are relative to checkpoint_dir (path_root.py).
    saved = learner.unary("SaveCheckpoint", M("leangrpo.v1.SaveCheckpointRequest")(path="ck"), "leangrpo.v1.SaveCheckpointResponse")
    assert saved.path == "ck"
    assert saved.size_bytes > 0 and sorted(p.name for p in (checkpoint_dir / "ck").iterdir()) == ["adapter", "optimizer.safetensors", "trainer_state.json"]
    learner.train_step(grpo(), rollout_batch(shift=1))
    _, continued = learner.export_adapter()
    loaded = learner.unary("LoadCheckpoint", M("leangrpo.v1.LoadCheckpointRequest")(path=saved.path), "leangrpo.v1.LoadCheckpointResponse")
    assert (loaded.step, loaded.adapter_version, loaded.algorithm) == (saved.step, saved.adapter_version, "grpo")
    learner.train_step(grpo(), rollout_batch(shift=1))
    _, resumed = learner.export_adapter()
    assert resumed["adapter_model.safetensors"] == continued["adapter_model.safetensors"]


def test_unknown_adapter_version_is_not_found(learner):
    with pytest.raises(grpc.RpcError) as error:
        learner.export_adapter(version=12345)
    assert error.value.code() == grpc.StatusCode.NOT_FOUND


def test_health_and_reflection(learner):
    health = learner.unary("Check", M("grpc.health.v1.HealthCheckRequest")(service=""), "grpc.health.v1.HealthCheckResponse", service="grpc.health.v1.Health")
    assert health.status == 1  # SERVING
    for package in ("grpc.reflection.v1", "grpc.reflection.v1alpha"):
        call = learner.channel.stream_stream(
            f"/{package}.ServerReflection/ServerReflectionInfo",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=M(f"{package}.ServerReflectionResponse").FromString,
        )
        Request = M(f"{package}.ServerReflectionRequest")
        listed, symbol = list(call(iter([Request(list_services=""), Request(file_containing_symbol="leangrpo.v1.LearnerService")]), timeout=10))
        assert "leangrpo.v1.LearnerService" in [s.name for s in listed.list_services_response.service]
        assert len(symbol.file_descriptor_response.file_descriptor_proto) >= 2


def test_no_model_dir_is_failed_precondition_naming_it():
    process = LearnerProcess({})
    try:
        with pytest.raises(grpc.RpcError) as error:
            process.unary("SaveCheckpoint", M("leangrpo.v1.SaveCheckpointRequest")(), "leangrpo.v1.SaveCheckpointResponse")
        assert error.value.code() == grpc.StatusCode.FAILED_PRECONDITION and "model.dir" in error.value.details()
        status = process.unary("GetStatus", M("leangrpo.v1.GetStatusRequest")(), "leangrpo.v1.GetStatusResponse")
        assert status.step == 0
    finally:
        assert process.stop() == 0
