"""The reasoning vocabulary against Hugging Face: the transformers source computes what the native
source computes (logprobs under every mask, a training step's rows and LoRA), the learner's adapter
(LoRA + trainable tokens) loads in PEFT's PeftModel on the expanded base and gives the learner's
logprobs, and the expanded checkpoint's tokenizer decodes every id. Skipped, saying why, where
transformers or peft is missing (Debian, CI)."""
import math

import pytest
import torch

from reasoning_fixtures import encode, model_dir
from leangrpo_learner.config import load_config
from leangrpo_learner.model.causal_lm import ForwardOptions
from leangrpo_learner.lora.peft_files import export_peft_files, save_peft_files
from leangrpo_learner.model.transformers_support import transformers_missing
from leangrpo_learner.reasoning.expand_checkpoint import expand_checkpoint
from leangrpo_learner.reasoning.vocabulary import ReasoningSettings
from leangrpo_learner.rpc.learner_host import load_learner
from leangrpo_learner.sampling import SamplingDistribution, SamplingMessage
from leangrpo_learner.training.learner import StepRequest
from leangrpo_learner.training.training_example import TrainingExample

MISSING = transformers_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"transformers and peft are needed here: {MISSING}")

N_S = 96
START, END = "<t>", "</t>"
START_IDS, END_IDS = encode(START), encode(END)
PAIRS = [([5, 17, 33], [4] + START_IDS + [N_S + 10, N_S + 11, 12] + END_IDS + [7, 8]), ([60, 61], START_IDS + [N_S + 83, N_S + 95, 83, 29, 2])]


def learner(directory, source, **model):
    config = {
        "model": {"dir": str(directory), "reasoning_markers": [START, END], "reasoning_vocab_size": N_S, **model},
        "lora": {"rank": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj", "down_proj"]},
        # AdamW's epsilon 1e-4, not 1e-8: a gradient entry of ~1e-9 (float32 rounding of a row barely
        # used) would otherwise move its weight by a visible fraction of the learning rate, so the
        # two sources' float32 rounding, not what they compute, would decide the comparison.
        "optimizer": {"learning_rate": 0.05, "epsilon": 1e-4},
        "micro_batch_tokens": 64,
        "seed": 3,
        "torch": {"device": "cpu", "model_source": source, "dtype": "float32"},
    }
    return load_learner(load_config(config), torch.device("cpu"))


def step(learner_, number, mask=2):
    examples = [TrainingExample(f"s{g}{i}", f"g{g}", p, c[: len(c) - i], None, float(i == 1), False) for g, (p, c) in enumerate(PAIRS) for i in range(3)]
    return learner_.train_step(StepRequest("grpo", {"beta": 0.0}, "rl", examples, step=number, sampling=SamplingMessage(1.0, 0, 1.0, mask)))


@pytest.mark.parametrize("fixture", ["qwen2-tiny", "llama-tiny"])
def test_the_transformers_source_equals_the_native_source(tmp_path, fixture):
    directory = model_dir(tmp_path, fixture)
    native, hf = learner(directory, "native"), learner(directory, "transformers")
    assert hf.model.config.vocab_size == 2 * N_S and hf.adapter.token_rows == native.adapter.token_rows
    ids = torch.tensor([[3, 40, N_S + 17, 60, 9]])
    hidden = hf.model.hidden_states(ids, torch.ones_like(ids), ForwardOptions(adapter=hf.adapter))
    logits = hidden @ hf.model.head.t()
    assert torch.equal(logits[..., N_S:], logits[..., :N_S])  # copies' logits equal their sources' at initialisation, exactly
    for mode in ("free", "gated", "strict"):
        sampling = SamplingDistribution(0.9, reasoning_mask=mode)
        a, b = native.score(PAIRS, sampling, native.adapter)[0], hf.score(PAIRS, sampling, hf.adapter)[0]
        assert max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb)) <= 1e-5
    step(native, 1)
    step(hf, 1)
    want, got = native.adapter.peft_tensors(), hf.adapter.peft_tensors()
    assert set(want) == set(got)
    for key in want:
        assert float((want[key] - got[key]).abs().max()) <= 1e-5, key


@pytest.mark.parametrize("fixture", ["qwen2-tiny", "llama-tiny"])
def test_the_adapter_loads_in_peft_on_the_expanded_base(tmp_path, fixture):
    from peft import PeftModel, get_peft_model_state_dict
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory = model_dir(tmp_path, fixture)
    trainer = learner(directory, "native")
    step(trainer, 1)
    step(trainer, 2)
    expanded = tmp_path / "expanded"
    expand_checkpoint(directory, expanded, ReasoningSettings(N_S, (START, END)))
    save_peft_files(export_peft_files(trainer.adapter, str(expanded), trainer.vocabulary), tmp_path / "adapter")
    base = AutoModelForCausalLM.from_pretrained(str(expanded), dtype=torch.float32)
    model = PeftModel.from_pretrained(base, str(tmp_path / "adapter")).eval()
    exported = trainer.adapter.peft_tensors()
    assert set(get_peft_model_state_dict(model)) == set(exported)  # peft saves exactly these keys
    rows = exported["base_model.model.model.embed_tokens.token_adapter.trainable_tokens_delta"]
    assert float((rows - trainer.model.weights["model.embed_tokens.weight"][N_S:]).abs().max()) > 1e-3  # the rows trained: PEFT must load them
    for prompt, completion in PAIRS:
        ids = torch.tensor([prompt + completion])
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, len(prompt) - 1 : -1].float()
        peft_logprobs = torch.log_softmax(logits, -1).gather(-1, torch.tensor(completion)[:, None])[:, 0]
        ours = trainer.score([(prompt, completion)], SamplingDistribution(), trainer.adapter)[0][0]
        assert max(abs(float(a) - b) for a, b in zip(peft_logprobs, ours)) <= 1e-5
    # Every id of the expanded vocabulary decodes (vLLM's detokenizer fails on ids its tokenizer lacks).
    tokenizer = AutoTokenizer.from_pretrained(str(expanded))
    assert len(tokenizer) >= 2 * N_S  # (transformers may add its own <|endoftext|> after them for this bare fixture tokenizer)
    assert tokenizer.convert_ids_to_tokens(list(range(N_S, 2 * N_S))) == [f"<|reasoning_{i}|>" for i in range(N_S)]
    assert tokenizer.decode([N_S, 2 * N_S - 1]) == f"<|reasoning_0|><|reasoning_{N_S - 1}|>"
    assert tokenizer.decode([N_S + 5], skip_special_tokens=True) == ""
    assert not math.isnan(float(peft_logprobs.sum()))
