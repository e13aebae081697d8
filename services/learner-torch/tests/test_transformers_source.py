"""torch.model_source: "transformers" (AutoModelForCausalLM + peft) against "native" (this package's
decoder) on the tiny qwen2 fixture, both served by `python -m leangrpo_learner serve`: the same
GRPO steps give the same adapter, the exported files are what peft saves and loads, checkpoints
move between the sources, LoRA dropout under gradient checkpointing recomputes the same masks.

Where transformers or peft is not installed (Debian has no transformers; CI), those tests skip
saying so, and the refusal of the source is tested instead."""
import json
import subprocess
import sys

import grpc
import pytest
import torch

from batches import TINY_CONFIG, rollout_batch
from conftest import LM_FIXTURES, PACKAGE_ROOT
from leangrpo_learner import proto, safetensors_io
from leangrpo_learner.config import ConfigError, load_config
from leangrpo_learner.model.transformers_support import transformers_missing
from server_process import LearnerProcess

M = proto.message
MISSING = transformers_missing()
needs_transformers = pytest.mark.skipif(MISSING is not None, reason=f"torch.model_source transformers cannot run here: {MISSING}")
MODEL_DIR = LM_FIXTURES / "qwen2-tiny"


def config_for(source: str, **torch_settings) -> dict:
    return {**TINY_CONFIG, "model": {"dir": str(MODEL_DIR)}, "torch": {"device": "cpu", "model_source": source, **torch_settings}}


def grpo(step: int) -> dict:
    return dict(algorithm="grpo", step=step, expected_samples=6, num_generations=3)


def adapter_tensors(process: LearnerProcess) -> dict[str, torch.Tensor]:
    _, files = process.export_adapter()
    return safetensors_io.load_bytes(files["adapter_model.safetensors"])


def assert_close(got: dict[str, torch.Tensor], want: dict[str, torch.Tensor], tolerance: float) -> None:
    assert set(got) == set(want)
    for key in want:
        assert float((got[key] - want[key]).abs().max()) <= tolerance, key


# ---- config: what each source accepts (runs everywhere) ----------------------------------------


def test_native_refuses_module_names_only_transformers_can_resolve():
    with pytest.raises(ConfigError) as error:
        load_config({"lora": {"target_modules": ["q_proj", "qkv_proj"]}})
    assert str(error.value).startswith('config key "lora.target_modules" names \'qkv_proj\'; accepted with torch.model_source "native": q_proj,')


def test_attn_implementation_is_refused_where_it_would_be_ignored():
    with pytest.raises(ConfigError) as error:
        load_config({"torch": {"attn_implementation": "flash_attention_2"}})
    assert 'torch.attn_implementation" is \'flash_attention_2\', which only torch.model_source "transformers" uses' in str(error.value)
    with pytest.raises(ConfigError) as error:
        load_config({"torch": {"attn_implementation": "flash"}})
    assert str(error.value) == "config key \"torch.attn_implementation\" is 'flash'; accepted: sdpa, flash_attention_2, eager"


def test_bf16_on_cpu_is_refused_naming_the_key():
    with pytest.raises(ConfigError) as error:
        load_config({"torch": {"device": "cpu", "dtype": "bfloat16"}})
    assert 'config key "torch.dtype" is "bfloat16" with torch.device "cpu"' in str(error.value)


@pytest.mark.skipif(MISSING is None, reason="transformers and peft are installed here, so the source is not refused")
def test_serve_refuses_the_transformers_source_naming_the_key_and_the_missing_packages():
    result = subprocess.run(
        [sys.executable, "-m", "leangrpo_learner", "serve", "--port", "0", "--config-json", json.dumps(config_for("transformers"))],
        cwd=PACKAGE_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert 'config key "torch.model_source" is "transformers" but the Python package' in result.stderr
    assert 'not installed (pip install transformers peft); accepted here: "native"' in result.stderr


# ---- the transformers source, served (where transformers + peft are installed) ---------------


@pytest.fixture(scope="module")
def checkpoint_dir(tmp_path_factory):
    """One checkpoint_dir for every learner here, as a shared volume: each reads what another saved."""
    return tmp_path_factory.mktemp("checkpoints")


@pytest.fixture(scope="module")
def servers(checkpoint_dir):
    native = LearnerProcess({**config_for("native"), "checkpoint_dir": str(checkpoint_dir)})
    transformers = LearnerProcess({**config_for("transformers"), "checkpoint_dir": str(checkpoint_dir)})
    yield native, transformers
    assert native.stop() == 0
    assert transformers.stop() == 0


@needs_transformers
def test_same_steps_give_the_same_adapter_and_logprobs(servers):
    native, transformers = servers
    for step in (1, 2):
        a = native.train_step(grpo(step), rollout_batch(shift=step))
        b = transformers.train_step(grpo(step), rollout_batch(shift=step))
        assert (b.step, b.adapter_version, b.adapter_name) == (a.step, a.adapter_version, a.adapter_name)
        assert abs(a.metrics["loss"] - b.metrics["loss"]) <= 1e-5 and abs(a.metrics["grad_norm"] - b.metrics["grad_norm"]) <= 1e-4
    assert_close(adapter_tensors(transformers), adapter_tensors(native), 1e-5)
    sequences = [
        M("leangrpo.v1.TokenSequence")(prompt_token_ids=[5, 17, 33], completion_token_ids=[40, 41, 42]),
        M("leangrpo.v1.TokenSequence")(prompt_token_ids=[9], completion_token_ids=[7]),
    ]
    for reference in (False, True):
        request = M("leangrpo.v1.ComputeLogprobsRequest")(sequences=sequences, reference=reference, include_entropy=True)
        want = native.unary("ComputeLogprobs", request, "leangrpo.v1.ComputeLogprobsResponse")
        got = transformers.unary("ComputeLogprobs", request, "leangrpo.v1.ComputeLogprobsResponse")
        for g, w in zip(got.sequences, want.sequences):
            assert list(g.logprobs) == pytest.approx(list(w.logprobs), abs=1e-5)
            assert list(g.entropies) == pytest.approx(list(w.entropies), abs=1e-5)


@needs_transformers
def test_exported_adapter_is_what_peft_saves_and_loads(servers, tmp_path):
    from peft import LoraConfig, PeftModel, get_peft_model, get_peft_model_state_dict
    from transformers import AutoModelForCausalLM

    _, transformers = servers
    _, files = transformers.export_adapter()
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    saved = safetensors_io.load_bytes(files["adapter_model.safetensors"])
    lora = TINY_CONFIG["lora"]
    fresh = get_peft_model(
        AutoModelForCausalLM.from_pretrained(str(MODEL_DIR)), LoraConfig(r=lora["rank"], lora_alpha=lora["alpha"], target_modules=lora["target_modules"])
    )
    assert set(get_peft_model_state_dict(fresh)) == set(saved)
    loaded = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(str(MODEL_DIR)), str(tmp_path))
    state = get_peft_model_state_dict(loaded)
    assert_close({k: v.float() for k, v in state.items()}, saved, 0.0)


@needs_transformers
def test_a_checkpoint_moves_between_sources(servers):
    native, transformers = servers
    saved = native.unary("SaveCheckpoint", M("leangrpo.v1.SaveCheckpointRequest")(path="native"), "leangrpo.v1.SaveCheckpointResponse")
    loaded = transformers.unary("LoadCheckpoint", M("leangrpo.v1.LoadCheckpointRequest")(path="native"), "leangrpo.v1.LoadCheckpointResponse")
    assert (loaded.step, loaded.adapter_version) == (saved.step, saved.adapter_version)
    step = saved.step + 1
    native.train_step(grpo(step), rollout_batch(shift=7))
    transformers.train_step(grpo(step), rollout_batch(shift=7))
    assert_close(adapter_tensors(transformers), adapter_tensors(native), 1e-5)
    # And back: the transformers source's checkpoint resumes on the native model.
    transformers.unary("SaveCheckpoint", M("leangrpo.v1.SaveCheckpointRequest")(path="transformers"), "leangrpo.v1.SaveCheckpointResponse")
    native.unary("LoadCheckpoint", M("leangrpo.v1.LoadCheckpointRequest")(path="transformers"), "leangrpo.v1.LoadCheckpointResponse")
    assert_close(adapter_tensors(native), adapter_tensors(transformers), 0.0)


@needs_transformers
def test_a_checkpoint_of_another_lora_shape_is_refused_naming_both(servers, checkpoint_dir):
    _, transformers = servers
    other = LearnerProcess({**config_for("native"), "lora": {"rank": 2, "alpha": 4, "target_modules": ["q_proj"]}, "checkpoint_dir": str(checkpoint_dir)})
    try:
        other.unary("SaveCheckpoint", M("leangrpo.v1.SaveCheckpointRequest")(path="r2"), "leangrpo.v1.SaveCheckpointResponse")
    finally:
        assert other.stop() == 0
    before = transformers.unary("GetStatus", M("leangrpo.v1.GetStatusRequest")(), "leangrpo.v1.GetStatusResponse")
    with pytest.raises(grpc.RpcError) as error:
        transformers.unary("LoadCheckpoint", M("leangrpo.v1.LoadCheckpointRequest")(path="r2"), "leangrpo.v1.LoadCheckpointResponse")
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "the adapter has r=2, alpha=4, target_modules=['q_proj']" in error.value.details()
    assert "the transformers source wrapped the model with r=4, alpha=8, target_modules=['q_proj', 'v_proj', 'down_proj']" in error.value.details()
    after = transformers.unary("GetStatus", M("leangrpo.v1.GetStatusRequest")(), "leangrpo.v1.GetStatusResponse")
    assert (after.step, after.adapter_version) == (before.step, before.adapter_version)


@needs_transformers
def test_lora_dropout_masks_are_recomputed_under_gradient_checkpointing():
    """With dropout, a step with gradient checkpointing equals one without: the recomputed layers
    must draw the masks of the first forward pass (peft's nn.Dropout, seeded per micro-batch)."""
    from leangrpo_learner.rpc.learner_host import load_learner
    from leangrpo_learner.training.learner import StepRequest
    from leangrpo_learner.training.training_example import TrainingExample

    adapters = []
    for checkpointing in (False, True):
        settings = load_config({**config_for("transformers", gradient_checkpointing=checkpointing), "lora": {**TINY_CONFIG["lora"], "dropout": 0.3}})
        learner = load_learner(settings, torch.device("cpu"))
        examples = [
            TrainingExample(s["sample_id"], s["group_id"], s["prompt_token_ids"], s["completion_token_ids"], None, s["reward"], False)
            for s in rollout_batch(shift=2)
        ]
        learner.train_step(StepRequest("grpo", {}, "rl", examples))
        adapters.append(learner.adapter.peft_tensors())
    assert_close(adapters[1], adapters[0], 1e-6)
    # Dropout really acted: without it the step differs.
    settings = load_config(config_for("transformers"))
    learner = load_learner(settings, torch.device("cpu"))
    examples = [
        TrainingExample(s["sample_id"], s["group_id"], s["prompt_token_ids"], s["completion_token_ids"], None, s["reward"], False)
        for s in rollout_batch(shift=2)
    ]
    learner.train_step(StepRequest("grpo", {}, "rl", examples))
    plain = learner.adapter.peft_tensors()
    assert max(float((plain[k] - adapters[0][k]).abs().max()) for k in plain) > 1e-6


@needs_transformers
def test_load_errors_name_the_setting():
    from leangrpo_learner.errors import ModelError
    from leangrpo_learner.rpc.learner_host import load_learner

    with pytest.raises(ModelError) as error:
        load_learner(load_config({**config_for("transformers"), "lora": {"target_modules": ["no_such_proj"]}}), torch.device("cpu"))
    assert str(error.value).startswith("lora.target_modules ['no_such_proj'] do not fit Qwen2ForCausalLM: ")
    try:
        import flash_attn  # noqa: F401
    except ImportError:
        with pytest.raises(ModelError) as error:
            load_learner(load_config(config_for("transformers", attn_implementation="flash_attention_2")), torch.device("cpu"))
        assert str(error.value).startswith('torch.attn_implementation "flash_attention_2" cannot be used here: ')
        assert str(error.value).endswith("; accepted: sdpa, eager")
