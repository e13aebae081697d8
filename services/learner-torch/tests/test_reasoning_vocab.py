"""The reasoning vocabulary in the PyTorch learner (docs/concepts/reasoning-vocabulary.md): the map
and its file, the block mask on token ids, expansion at load (copies' logits equal their sources'),
free-mode logprobs = baseline - ln(k + 1), masked logprobs against the independent reference
(scripts/reference/reasoning_reference.py) under free / gated / strict, training that moves only
the reasoning rows among the embedding rows, checkpoints and resume, the PEFT files, and the
errors that name the key."""
import json
import math
import sys

import pytest
import torch

from conftest import REPO_ROOT
from reasoning_fixtures import encode, model_dir
from leangrpo_learner.config import ConfigError, load_config
from leangrpo_learner.errors import CheckpointError, ModelError, SampleError
from leangrpo_learner.lora.peft_files import load_peft_adapter, save_peft_files
from leangrpo_learner.path_root import PathRoot
from leangrpo_learner.lora.token_rows import EMBEDDING_ROWS_KEY, HEAD_ROWS_KEY
from leangrpo_learner.model.causal_lm import ForwardOptions
from leangrpo_learner.reasoning.block_mask import block_states
from leangrpo_learner.reasoning.map_file import REASONING_MAP_FILE, check_same_reasoning_map, parse_reasoning_map, serialize_reasoning_map
from leangrpo_learner.reasoning.token_map import ReasoningTokenMap, ReasoningVocabError, default_reasoning_map
from leangrpo_learner.rpc.learner_host import load_learner
from leangrpo_learner.sampling import SamplingDistribution
from leangrpo_learner.training.learner import StepRequest
from leangrpo_learner.training.training_example import TrainingExample

sys.path.insert(0, str(REPO_ROOT / "scripts" / "reference"))
import reasoning_reference  # noqa: E402
from reference_model import Config  # noqa: E402
from safetensors_io import read as reference_read  # noqa: E402

N_S = 96
START, END = "<t>", "</t>"  # [27, 83, 29] and [95, 83, 29]
START_IDS, END_IDS = encode(START), encode(END)


def config(directory, **model):
    return load_config(
        {
            "model": {"dir": str(directory), "reasoning_markers": [START, END], **model},
            "lora": {"rank": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj", "down_proj"]},
            "optimizer": {"learning_rate": 0.05},
            "micro_batch_tokens": 64,
            "seed": 3,
            "torch": {"device": "cpu"},
        }
    )


def learner_of(directory, **model):
    return load_learner(config(directory, **model), torch.device("cpu"))


# ---- the map, its file and hash ----------------------------------------------------------
def test_the_map_hash_is_sha256_of_ns_and_sources_and_the_file_round_trips():
    token_map = ReasoningTokenMap(147, (0, 1, 2))
    # "147:0,1,2", the docs' example: `printf '147:0,1,2' | sha256sum`, the TS spec's value too
    assert token_map.sha256 == "dfe443b4100539b294b2d76a9ad12894d10e553c01404dd845443cd29422ac96"
    repeated = ReasoningTokenMap(10, (4, 4, 7, 4))
    assert repeated.multiplicities == (1, 2, 1, 3) and repeated.source(12) == 7 and repeated.copies_of(4) == 3
    parsed = parse_reasoning_map(serialize_reasoning_map(repeated), "f")
    assert parsed.map == repeated
    tampered = json.loads(serialize_reasoning_map(repeated))
    tampered["source_ids"][0] = 5
    with pytest.raises(ReasoningVocabError, match='"sha256" .* is not the hash of its map'):
        parse_reasoning_map(json.dumps(tampered), "f")
    with pytest.raises(ReasoningVocabError, match="model.reasoning_vocab_size 97 is larger than the model's standard vocabulary"):
        default_reasoning_map(96, 97)
    with pytest.raises(ReasoningVocabError, match="another reasoning map"):
        check_same_reasoning_map(serialize_reasoning_map(default_reasoning_map(96, 5)), default_reasoning_map(96, 6), "adapter x")
    with pytest.raises(ReasoningVocabError, match="has no reasoning_token_map.json"):
        check_same_reasoning_map(None, default_reasoning_map(96, 6), "adapter x")


# ---- the block mask --------------------------------------------------------------------------
def test_block_states_follow_source_ids_with_no_reentry():
    token_map = default_reasoning_map(N_S, N_S)
    copy = [N_S + i for i in START_IDS]  # the start marker written in reasoning copies opens the block too
    completion = [5] + copy + [N_S + 7, 8] + END_IDS + START_IDS + [9]
    states = block_states(completion, token_map, START_IDS, END_IDS)
    assert states[:5] == ["before"] * 4 + ["inside"]
    assert states[4:9] == ["inside"] * 5  # the end marker is inside while it is written
    assert states[9:] == ["after"] * 4  # a second start marker opens nothing
    # The end marker must lie wholly after the start marker: "<t>" then "t>" alone does not close it.
    overlap = block_states(START_IDS + [83, 29, 1], token_map, START_IDS, [83, 29])
    assert overlap == ["before"] * 3 + ["inside", "inside", "after"]


# ---- expansion ---------------------------------------------------------------------------------
@pytest.mark.parametrize("fixture", ["qwen2-tiny", "llama-tiny"])
def test_copies_logits_equal_their_sources_at_initialisation(tmp_path, fixture):
    directory = model_dir(tmp_path, fixture)
    sources = tuple(range(N_S - 1, -1, -2))  # a shuffled, partial map
    (tmp_path / "map.json").write_text(serialize_reasoning_map(ReasoningTokenMap(N_S, sources)))
    learner = learner_of(directory, reasoning_map=str(tmp_path / "map.json"))
    model = learner.model
    assert model.config.vocab_size == N_S + len(sources)
    if fixture == "qwen2-tiny":
        assert model.head is model.weights["model.embed_tokens.weight"]  # tied stays tied
    ids = torch.tensor([[3, 40, 17, 60, 9]])
    for adapter in (None, learner.adapter):
        hidden = model.hidden_states(ids, torch.ones_like(ids), ForwardOptions(adapter=adapter))
        logits = hidden @ model.head.t()
        assert torch.equal(logits[..., N_S:], logits[..., list(sources)])  # exactly, not approximately
    # A reasoning id as input reads exactly as its source.
    source_input = torch.tensor([[3, sources[0], 17]])
    copy_input = torch.tensor([[3, N_S, 17]])
    options = ForwardOptions(adapter=learner.adapter)
    assert torch.equal(
        model.hidden_states(source_input, torch.ones_like(ids[:, :3]), options), model.hidden_states(copy_input, torch.ones_like(ids[:, :3]), options)
    )


# ---- logprobs under each mask --------------------------------------------------------------------
PAIRS = [
    ([5, 17, 33], [4] + START_IDS + [N_S + 10, N_S + 11, 12] + END_IDS + [7, 8]),
    ([60, 61], [N_S + 27] + [N_S + 83, N_S + 29, N_S + 40] + [N_S + 95, 83, 29, 2]),
    ([9], [1, 2]),
]


def pairs_allowed_under(mode):
    """PAIRS whose every token the mode allows (what a sampler under that mode could have drawn)."""
    if mode == "free":
        return PAIRS
    if mode == "gated":
        return PAIRS[:1] + [([60, 61], START_IDS + [N_S + 83, 40, N_S + 40] + END_IDS + [2]), PAIRS[2]]
    return [
        ([5, 17, 33], [4] + START_IDS + [N_S + 10, N_S + 11, N_S + 12] + END_IDS + [7, 8]),
        ([60, 61], START_IDS + [N_S + 83, 95] + [N_S + 83, 29]),
        PAIRS[2],
    ]


def reference_logprobs(directory, learner, pairs, mode, sampling):
    cfg = Config(json.loads((directory / "config.json").read_text()))
    weights = {k: v.float() for k, v in reference_read(directory / "model.safetensors").items()}
    rows = learner.adapter.rows()
    embedding_rows = rows[0].detach() if rows is not None else None
    head_rows = rows[1].detach() if rows is not None and not cfg.tied else None
    expanded = reasoning_reference.expanded_weights(weights, cfg.tied, list(range(N_S)), embedding_rows, head_rows)
    return reasoning_reference.masked_completion_logprobs(
        cfg, expanded, pairs, N_S, list(range(N_S)), START_IDS, END_IDS, mode, sampling.temperature, sampling.top_k, sampling.top_p
    )


@pytest.mark.parametrize("fixture", ["qwen2-tiny", "llama-tiny"])
def test_free_mode_logprob_is_the_baseline_minus_ln_k_plus_1(tmp_path, fixture):
    directory = model_dir(tmp_path, fixture)
    base = load_learner(config(directory), torch.device("cpu"))
    once = learner_of(directory, reasoning_vocab_size=N_S)
    twice_map = tmp_path / "twice.json"
    twice_map.write_text(serialize_reasoning_map(ReasoningTokenMap(N_S, tuple(range(N_S)) * 2)))
    twice = learner_of(directory, reasoning_map=str(twice_map))
    standard = [(p, [t if t < N_S else t - N_S for t in c]) for p, c in PAIRS]
    sampling = SamplingDistribution(temperature=0.7)
    baseline = base.score(standard, sampling, None)[0]
    # a completion written with copies: the model reads them as their sources, so the baseline is that of the mapped ids
    for learner, k in ((once, 1), (twice, 2)):
        got = learner.score(PAIRS if k == 1 else standard, sampling, None)[0]
        for row_got, row_base in zip(got, baseline):
            assert max(abs(g - (b - math.log(k + 1))) for g, b in zip(row_got, row_base)) <= 1e-5


@pytest.mark.parametrize("mode", ["free", "gated", "strict"])
@pytest.mark.parametrize("fixture", ["qwen2-tiny", "llama-tiny"])
def test_masked_logprobs_match_the_independent_reference(tmp_path, fixture, mode):
    directory = model_dir(tmp_path, fixture)
    learner = learner_of(directory, reasoning_vocab_size=N_S, reasoning_mask=mode)
    pairs = pairs_allowed_under(mode)
    # Move the reasoning rows so that copies differ from their sources (the mask must use the trained rows).
    with torch.no_grad():
        for p in {id(t): t for t in learner.adapter.rows()}.values():
            p.add_(torch.randn(p.shape, generator=torch.Generator().manual_seed(1)) * 0.5)
    for sampling in (SamplingDistribution(1.0, reasoning_mask=mode), SamplingDistribution(0.8, top_k=20, top_p=0.9, reasoning_mask=mode)):
        got = learner.score(pairs, sampling, learner.adapter)[0]
        expected = reference_logprobs(directory, learner, pairs, mode, sampling)
        for row_got, row_expected in zip(got, expected):
            assert max(abs(g - e) for g, e in zip(row_got, row_expected)) <= 1e-5, (mode, sampling)
    if mode != "free":
        # The mask moves the logprobs (the test could fail): free differs from the mode on the same pairs.
        free = learner.score(pairs, SamplingDistribution(1.0), learner.adapter)[0]
        masked = learner.score(pairs, SamplingDistribution(1.0, reasoning_mask=mode), learner.adapter)[0]
        assert max(abs(a - b) for ra, rb in zip(free, masked) for a, b in zip(ra, rb)) > 1e-2


# ---- training, checkpoints, PEFT files --------------------------------------------------------------------
def rl_batch(standard_only=False):
    examples = []
    for g, (prompt, completion) in enumerate(PAIRS[:2]):
        completion = [t % N_S for t in completion] if standard_only else completion
        for i in range(3):
            examples.append(
                TrainingExample(
                    sample_id=f"s{g}-{i}",
                    group_id=f"g{g}",
                    prompt_ids=prompt,
                    completion_ids=completion[: len(completion) - i],
                    sampler_logprobs=None,
                    reward=float(i == g),
                    truncated=False,
                )
            )
    return examples


def step(learner, number, mode="free", standard_only=False):
    from leangrpo_learner.sampling import SamplingMessage

    mask = {"free": 1, "gated": 2, "strict": 3}[mode]
    return learner.train_step(StepRequest("grpo", {"beta": 0.0}, "rl", rl_batch(standard_only), step=number, sampling=SamplingMessage(1.0, 0, 1.0, mask)))


@pytest.mark.parametrize("fixture", ["qwen2-tiny", "llama-tiny"])
def test_a_step_moves_only_reasoning_rows_and_resume_restores_them(tmp_path, fixture):
    directory = model_dir(tmp_path, fixture)
    learner = learner_of(directory, reasoning_vocab_size=N_S)
    base_embedding = learner.model.weights["model.embed_tokens.weight"].clone()
    before = {k: v.clone() for k, v in learner.adapter.peft_tensors().items()}
    step(learner, 1)
    after = learner.adapter.peft_tensors()
    assert not torch.equal(before[EMBEDDING_ROWS_KEY], after[EMBEDDING_ROWS_KEY])
    if fixture == "llama-tiny":
        assert not torch.equal(before[HEAD_ROWS_KEY], after[HEAD_ROWS_KEY])
    else:
        assert HEAD_ROWS_KEY not in after
    assert torch.equal(learner.model.weights["model.embed_tokens.weight"], base_embedding)  # the base (standard rows, copies) stays frozen
    checkpoints = PathRoot(str(tmp_path), "checkpoint_dir")
    with checkpoints.open_directory("ckpt", "path", create=True) as ckpt:
        learner.save_checkpoint(ckpt)
    assert (tmp_path / "ckpt" / REASONING_MAP_FILE).exists() and (tmp_path / "ckpt" / "adapter" / REASONING_MAP_FILE).exists()
    config_json = json.loads((tmp_path / "ckpt" / "adapter" / "adapter_config.json").read_text())
    ids = list(range(N_S, 2 * N_S))
    assert config_json["trainable_token_indices"] == ({"embed_tokens": ids} if fixture == "qwen2-tiny" else {"embed_tokens": ids, "lm_head": ids})
    step(learner, 2)
    continued = learner.adapter.peft_tensors()
    resumed = learner_of(directory, reasoning_vocab_size=N_S)
    with checkpoints.open_directory("ckpt", "path") as ckpt:
        resumed.load_checkpoint(ckpt)
    step(resumed, 2)
    for key, value in continued.items():
        assert torch.allclose(resumed.adapter.peft_tensors()[key], value, atol=1e-6), key
    # A checkpoint with another map is refused, naming the keys.
    other = learner_of(directory, reasoning_vocab_size=N_S - 1)
    with pytest.raises(CheckpointError, match="model.reasoning_vocab_size / model.reasoning_map must match"):
        with checkpoints.open_directory("ckpt", "path") as ckpt:
            other.load_checkpoint(ckpt)
    plain = load_learner(config(directory), torch.device("cpu"))
    with pytest.raises(CheckpointError, match="this run has none"):
        with checkpoints.open_directory("ckpt", "path") as ckpt:
            plain.load_checkpoint(ckpt)


def test_frozen_rows_leave_copies_inert_and_requests_need_a_vocabulary(tmp_path):
    directory = model_dir(tmp_path)
    frozen = load_learner({**config(directory, reasoning_vocab_size=N_S), "reasoning_rows": "frozen"}, torch.device("cpu"))
    assert frozen.adapter.rows() is None
    step(frozen, 1, "gated")
    hidden = frozen.model.hidden_states(torch.tensor([[5, 40]]), torch.ones(1, 2, dtype=torch.long), ForwardOptions(adapter=frozen.adapter))
    logits = hidden @ frozen.model.head.t()
    assert torch.equal(logits[..., N_S:], logits[..., :N_S])  # copies stay equal to their sources after training
    plain = load_learner(config(directory), torch.device("cpu"))
    with pytest.raises(SampleError, match="header.sampling.reasoning_mask is GATED, but this learner's model has no reasoning vocabulary"):
        step(plain, 1, "gated", standard_only=True)
    with pytest.raises(SampleError, match="sampling.reasoning_mask is STRICT, but this learner's model has no reasoning vocabulary"):
        plain.compute_logprobs([([5], [6])], False, SamplingDistribution(reasoning_mask="strict"))


def test_the_adapter_export_loads_back_and_a_foreign_map_is_refused(tmp_path):
    directory = model_dir(tmp_path)
    learner = learner_of(directory, reasoning_vocab_size=N_S)
    step(learner, 1)
    _, files = learner.export_adapter(0)
    assert set(files) == {"adapter_config.json", "adapter_model.safetensors", REASONING_MAP_FILE}
    save_peft_files(files, tmp_path / "adapter")
    loaded = load_peft_adapter(tmp_path / "adapter", learner.model)
    for key, value in learner.adapter.peft_tensors().items():
        assert torch.equal(loaded.peft_tensors()[key], value)
    other = learner_of(directory, reasoning_vocab_size=N_S - 1)
    with pytest.raises(Exception, match="trainable_token_indices|another reasoning map"):
        load_peft_adapter(tmp_path / "adapter", other.model)
    token_map = parse_reasoning_map(files[REASONING_MAP_FILE].decode(), "x")
    assert token_map.markers.start_ids == tuple(START_IDS) and token_map.map.sha256 == learner.vocabulary.map.sha256


# ---- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "model, message",
    [
        ({"reasoning_vocab_size": -1}, 'config key "model.reasoning_vocab_size" is -1'),
        ({"reasoning_mask": "loose"}, "config key \"model.reasoning_mask\" is 'loose'; accepted: free, gated, strict"),
        ({"reasoning_mask": "gated"}, 'model.reasoning_mask "gated" needs a reasoning vocabulary'),
        ({"reasoning_markers": ["<t>", "<t>"]}, 'config key "model.reasoning_markers"'),
        ({"reasoning_markers": ["<t>"]}, 'config key "model.reasoning_markers"'),
    ],
)
def test_bad_settings_are_refused_naming_the_key(tmp_path, model, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace('"', '"')):
        load_config({"model": {"dir": "x", **model}})


@pytest.mark.parametrize(
    "model, message",
    [
        ({"reasoning_vocab_size": N_S + 1}, "model.reasoning_vocab_size 97 is larger than the model's standard vocabulary .*vocab_size 96"),
        ({"reasoning_vocab_size": 4, "reasoning_markers": ["<t>", "é"]}, r"model.reasoning_markers\[1\] \"é\""),
        ({"reasoning_vocab_size": 4, "reasoning_markers": ["<#>", "</t>"]}, r"model.reasoning_markers\[0\] \"<#>\" contains the end-of-sequence id 2"),
    ],
)
@pytest.mark.parametrize("fixture", ["qwen2-tiny"])
def test_bad_settings_at_load_are_refused_naming_the_key(tmp_path, fixture, model, message):
    directory = model_dir(tmp_path, fixture)
    with pytest.raises(ModelError, match=message):
        learner_of(directory, **model)


# ---- over gRPC: the mode on the wire, the service's default, GetStatus ------------------------------------
def test_the_wire_mode_and_the_configured_default(tmp_path):
    from leangrpo_learner import proto
    from server_process import LearnerProcess

    M = proto.message
    directory = model_dir(tmp_path)
    process = LearnerProcess({"model": {"dir": str(directory), "reasoning_vocab_size": N_S, "reasoning_markers": [START, END], "reasoning_mask": "gated"}})
    try:
        completion = [4] + START_IDS + [N_S + 10, 12] + END_IDS + [7]

        def logprobs(mask=None):
            sampling = M("leangrpo.v1.SamplingDistribution")(temperature=1.0, **({"reasoning_mask": mask} if mask is not None else {}))
            request = M("leangrpo.v1.ComputeLogprobsRequest")(
                sequences=[M("leangrpo.v1.TokenSequence")(prompt_token_ids=[5, 17], completion_token_ids=completion)], sampling=sampling, reference=True
            )
            return list(process.unary("ComputeLogprobs", request, "leangrpo.v1.ComputeLogprobsResponse").sequences[0].logprobs)

        unspecified, gated, free = logprobs(), logprobs(2), logprobs(1)
        assert unspecified == gated and max(abs(a - b) for a, b in zip(gated, free)) > 1e-2
        status = process.unary("GetStatus", M("leangrpo.v1.GetStatusRequest")(), "leangrpo.v1.GetStatusResponse")
        vocabulary = status.reasoning_vocabulary
        assert (vocabulary.standard_size, vocabulary.reasoning_size) == (N_S, N_S) and list(vocabulary.end_marker_ids) == END_IDS
        assert vocabulary.map_sha256 == default_reasoning_map(N_S, N_S).sha256
    finally:
        assert process.stop() == 0


# ---- the markers' encoder without `tokenizers` -------------------------------------------------------
def test_the_built_in_marker_encoder_equals_hugging_face_tokenizers_on_arith_tiny():
    tokenizers = pytest.importorskip("tokenizers", reason="Hugging Face tokenizers is not installed here (the built-in encoder is what runs)")
    from leangrpo_learner.reasoning.marker_tokenizer import MarkerTokenizer

    directory = REPO_ROOT / "models" / "arith-tiny"
    library = tokenizers.Tokenizer.from_file(str(directory / "tokenizer.json"))
    built_in = MarkerTokenizer(directory)
    built_in.library = None
    texts = ["<think>", "</think>", ":", "\\boxed{", "What is 23 + 4?", "<|im_end|>x<|im_start|>", " is"]
    for text in texts:
        assert built_in.encode(text, "k") == library.encode(text, add_special_tokens=False).ids, text
        assert built_in.decode(built_in.encode(text, "k")) == text


def test_settings_that_cannot_work_stop_the_server_before_it_starts(tmp_path):
    import subprocess

    from conftest import PACKAGE_ROOT

    directory = model_dir(tmp_path)
    given = {"model": {"dir": str(directory), "reasoning_vocab_size": 4, "reasoning_markers": ["<t>", "é"]}}
    result = subprocess.run(
        [sys.executable, "-m", "leangrpo_learner", "serve", "--port", "0", "--config-json", json.dumps(given)],
        cwd=PACKAGE_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert 'model.reasoning_markers[1] "é"' in result.stderr  # does not tokenize (built-in encoder) or to no ids (tokenizers)


def test_a_map_for_another_model_or_size_is_refused_naming_the_key(tmp_path):
    directory = model_dir(tmp_path)
    other = tmp_path / "other.json"
    other.write_text(serialize_reasoning_map(ReasoningTokenMap(N_S + 1, (1, 2))))
    with pytest.raises(ModelError, match=r"model.reasoning_map .* is for a model with 97 standard ids; this model's config.json vocab_size is 96"):
        learner_of(directory, reasoning_map=str(other))
    mine = tmp_path / "mine.json"
    mine.write_text(serialize_reasoning_map(ReasoningTokenMap(N_S, (1, 1, 2))))
    with pytest.raises(ModelError, match="model.reasoning_vocab_size 5 differs from the 3 reasoning ids of model.reasoning_map"):
        learner_of(directory, reasoning_map=str(mine), reasoning_vocab_size=5)
    assert learner_of(directory, reasoning_map=str(mine), reasoning_vocab_size=3).model.config.vocab_size == N_S + 3


@pytest.mark.parametrize("fixture", ["qwen2-tiny", "llama-tiny"])
def test_chunked_projection_gives_the_rows_the_gradient_of_one_chunk(tmp_path, fixture):
    """With many rows per pass the projection runs in recomputed chunks; the trained rows (a SplitHead)
    must get the same gradient through them."""
    from leangrpo_learner import completion_logprobs

    learner = learner_of(model_dir(tmp_path, fixture), reasoning_vocab_size=N_S)
    sampling = SamplingDistribution(0.8, top_k=30, reasoning_mask="gated")

    def gradients(projection):
        for p in learner.adapter.parameters():
            p.grad = None
        options = ForwardOptions(adapter=learner.adapter)
        scores = completion_logprobs.completion_logprobs(learner.model, pairs_allowed_under("gated"), sampling, options, projection)
        scores.logprobs.sum().backward()
        return {k: p.grad.clone() for k, p in learner.adapter.named_tensors().items()}

    whole = gradients(completion_logprobs.Projection())
    chunked = gradients(completion_logprobs.Projection(chunk_floats=2 * N_S * 3))  # 3 rows a chunk, recomputed in backward
    assert float(whole[EMBEDDING_ROWS_KEY].abs().max()) > 1e-3
    for key in whole:
        assert float((whole[key] - chunked[key]).abs().max()) <= 1e-5 * max(1.0, float(whole[key].abs().max())), key
