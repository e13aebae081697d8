"""The vLLM path of the reasoning vocabulary without vLLM: the expanded checkpoint that vLLM serves
(weights, config, tokenizer placeholders, map with the markers' ids) loads in this learner and says
what the run-time expansion says; trained rows written into it equal the adapter's; the logits
processor's bookkeeping follows vLLM's BatchUpdate protocol and masks exactly as the learner does."""
import json
from collections import namedtuple
from types import SimpleNamespace

import pytest
import torch

from reasoning_fixtures import encode, model_dir
from leangrpo_learner.config import load_config
from leangrpo_learner.lora.token_rows import EMBEDDING_ROWS_KEY, HEAD_ROWS_KEY
from leangrpo_learner.lora.peft_files import export_peft_files, load_peft_adapter, save_peft_files
from leangrpo_learner.reasoning.block_mask import block_states, is_allowed, restricts
from leangrpo_learner.reasoning.expand_checkpoint import expand_checkpoint, main as expand_main
from leangrpo_learner.reasoning.map_file import read_reasoning_map_file
from leangrpo_learner.reasoning.token_map import ReasoningVocabError
from leangrpo_learner.reasoning.vllm_logits_processor import ReasoningMaskLogitsProcessor, mask_rows, requested_mode
from leangrpo_learner.reasoning.vocabulary import ReasoningSettings
from leangrpo_learner.rpc.learner_host import load_learner
from leangrpo_learner.sampling import SamplingDistribution
from leangrpo_learner import safetensors_io

N_S = 96
START, END = "<t>", "</t>"
START_IDS, END_IDS = encode(START), encode(END)
SETTINGS = ReasoningSettings(N_S, (START, END))


def learner(directory, **model):
    return load_learner(
        load_config({"model": {"dir": str(directory), "reasoning_markers": [START, END], **model}, "lora": {"rank": 2, "alpha": 4}, "seed": 1}),
        torch.device("cpu"),
    )


@pytest.mark.parametrize("fixture", ["qwen2-tiny", "llama-tiny"])
def test_the_expanded_checkpoint_says_what_the_run_time_expansion_says(tmp_path, fixture):
    base = model_dir(tmp_path, fixture)
    out = tmp_path / "expanded"
    expand_checkpoint(base, out, SETTINGS)
    config = json.loads((out / "config.json").read_text())
    assert config["vocab_size"] == 2 * N_S
    saved = read_reasoning_map_file(out)
    assert saved.map.reasoning_size == N_S and saved.markers.start_ids == tuple(START_IDS) and saved.markers.end_ids == tuple(END_IDS)
    tokenizer = json.loads((out / "tokenizer.json").read_text())
    added = {t["id"]: t["content"] for t in tokenizer["added_tokens"]}
    assert [added[i] for i in (N_S, 2 * N_S - 1)] == ["<|reasoning_0|>", f"<|reasoning_{N_S - 1}|>"]
    pairs = [([5, 17], [4] + START_IDS + [N_S + 3, 9] + END_IDS + [2])]
    for mode in ("free", "gated", "strict"):
        sampling = SamplingDistribution(0.9, reasoning_mask=mode)
        run_time = learner(base, reasoning_vocab_size=N_S).score(pairs, sampling, None)[0]
        served = learner(out, reasoning_vocab_size=N_S).score(pairs, sampling, None)[0]
        assert served == run_time
    with pytest.raises(Exception, match="another reasoning map"):
        learner(out, reasoning_vocab_size=N_S - 2)


@pytest.mark.parametrize("fixture", ["qwen2-tiny", "llama-tiny"])
def test_trained_rows_go_into_the_base_and_the_lora_travels_apart(tmp_path, fixture):
    base = model_dir(tmp_path, fixture)
    trainer = learner(base, reasoning_vocab_size=N_S)
    with torch.no_grad():
        for p in {id(t): t for t in trainer.adapter.rows()}.values():
            p.add_(torch.randn(p.shape, generator=torch.Generator().manual_seed(2)))
        for key, p in trainer.adapter.named_tensors().items():
            if key.endswith("lora_B.weight"):
                p.add_(0.1)
    save_peft_files(export_peft_files(trainer.adapter, str(base), trainer.vocabulary), tmp_path / "adapter")
    out, lora = tmp_path / "merged", tmp_path / "lora"
    arguments = ["--model", str(base), "--out", str(out), "--reasoning-vocab-size", str(N_S), "--markers", START, END]
    assert expand_main(arguments + ["--adapter", str(tmp_path / "adapter"), "--lora-out", str(lora)]) == 0
    weights = safetensors_io.load_file(out / "model.safetensors")
    rows = trainer.adapter.peft_tensors()
    stored = weights["model.embed_tokens.weight"].dtype  # the checkpoint's dtype is kept (llama-tiny: BF16)
    assert torch.equal(weights["model.embed_tokens.weight"][N_S:], rows[EMBEDDING_ROWS_KEY].to(stored))
    if fixture == "llama-tiny":
        assert torch.equal(weights["lm_head.weight"][N_S:], rows[HEAD_ROWS_KEY].to(weights["lm_head.weight"].dtype))  # (F16 there)
    lora_config = json.loads((lora / "adapter_config.json").read_text())
    assert "trainable_token_indices" not in lora_config and lora_config["base_model_name_or_path"] == str(out)
    assert not any("token_adapter" in k for k in safetensors_io.load_file(lora / "adapter_model.safetensors"))
    if fixture == "qwen2-tiny":  # float32: the merged base + LoRA-only adapter is the learner's policy, exactly as served
        served = learner(out, reasoning_vocab_size=N_S, reasoning_mask="free")
        served_adapter = load_peft_adapter(lora, served.model)
        pairs = [([5, 17], [4] + START_IDS + [N_S + 3, 9] + END_IDS + [2])]
        sampling = SamplingDistribution(1.0, reasoning_mask="gated")
        want = trainer.score(pairs, sampling, trainer.adapter)[0][0]
        got = served.score(pairs, sampling, served_adapter)[0][0]
        assert max(abs(a - b) for a, b in zip(got, want)) <= 1e-5
    with pytest.raises(ReasoningVocabError, match="another reasoning map"):
        expand_checkpoint(base, tmp_path / "x", ReasoningSettings(N_S - 1, (START, END)), adapter=tmp_path / "adapter")


# ---- the logits processor, without vLLM --------------------------------------------------------------
Batch = namedtuple("Batch", "batch_size removed added moved")
Params = namedtuple("Params", "extra_args")
Direction = namedtuple("Direction", "name")


def processor(tmp_path):
    out = tmp_path / "expanded"
    expand_checkpoint(model_dir(tmp_path), out, SETTINGS)
    return ReasoningMaskLogitsProcessor(SimpleNamespace(model_config=SimpleNamespace(model=str(out))), torch.device("cpu"), False)


def test_the_processor_masks_each_row_as_the_block_state_of_its_own_ids(tmp_path):
    proc = processor(tmp_path)
    token_map = proc.rows.token_map
    outputs = {0: [4, 5], 1: [], 2: [7]}
    modes = {0: "gated", 1: "strict", 2: "free"}
    proc.update_state(Batch(3, [], [(i, Params({"reasoning_mask": modes[i]}), [1], outputs[i]) for i in range(3)], []))
    script = [[4] + START_IDS + [N_S + 1, N_S + 2] + END_IDS + [6], START_IDS + [N_S + 9] + END_IDS + [N_S + 3], [8, 9, N_S]]
    for t in range(8):
        logits = torch.randn(3, 2 * N_S, generator=torch.Generator().manual_seed(t))
        masked = proc.apply(logits.clone())
        for row in range(3):
            mode = modes[row]
            state = block_states(outputs[row] + [0], token_map, START_IDS, END_IDS)[-1]  # the state after the ids so far
            for token in range(2 * N_S):
                expected = logits[row, token] if is_allowed(token, state, mode, N_S, END_IDS) else float("-inf")
                assert masked[row, token] == expected
        for row in range(3):
            if t < len(script[row]):
                outputs[row].append(script[row][t])  # vLLM appends to the live list
    # vLLM's protocol: removed, then added, then moved; a swap exchanges rows.
    proc.update_state(Batch(2, [2], [], [(0, 1, Direction("SWAP"))]))
    assert proc.rows.rows[1].mode == "gated" and proc.rows.rows[0].mode == "strict"
    proc.update_state(Batch(2, [], [(0, Params(None), [1], [])], []))
    assert 0 not in proc.rows.rows  # a free request replacing the row there leaves it unmasked
    assert proc.is_argmax_invariant() is False
    with pytest.raises(ValueError, match="vllm_xargs \"reasoning_mask\" is 'loose'"):
        ReasoningMaskLogitsProcessor.validate_params(Params({"reasoning_mask": "loose"}))
    assert requested_mode(None) == "free"


def test_mask_rows_keeps_the_end_marker_in_strict_and_the_standard_half_outside():
    logits = torch.zeros(2, 10)
    mask_rows(logits, [(0, "inside", "strict"), (1, "after", "gated")], 6, (2, 3))
    assert torch.isinf(logits[0, [0, 1, 4, 5]]).all() and (logits[0, [2, 3, 6, 7, 8, 9]] == 0).all()
    assert torch.isinf(logits[1, 6:]).all() and (logits[1, :6] == 0).all()
    assert restricts("inside", "gated") is False
