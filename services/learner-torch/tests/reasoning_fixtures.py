"""Tiny model directories with a tokenizer, for the reasoning-vocabulary tests: the committed tiny
fixture models (96 ids) plus a 96-piece BPE tokenizer.json written here (printable characters and
one merge, "<" + "/" -> "</"), so markers like "<t>" / "</t>" encode to several ids. config.json's
eos_token_id is 2, the piece "#"."""
import json
import shutil
from pathlib import Path

from conftest import LM_FIXTURES

# id i < 94: chr(33 + i) ("!" .. "~"); 94: " "; 95: "</".
PIECES = [chr(33 + i) for i in range(94)] + [" ", "</"]


def piece_id(text: str) -> int:
    return PIECES.index(text)


def tokenizer_json() -> dict:
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": {"type": "Fuse"},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "vocab": {p: i for i, p in enumerate(PIECES)},
            "merges": ["< /"],
        },
    }


def model_dir(tmp: Path, fixture: str = "qwen2-tiny") -> Path:
    """A copy of a tiny fixture model with the tokenizer above."""
    target = tmp / fixture
    if not target.exists():
        shutil.copytree(LM_FIXTURES / fixture, target)
        (target / "tokenizer.json").write_text(json.dumps(tokenizer_json()))
        (target / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "PreTrainedTokenizerFast", "added_tokens_decoder": {}}))
    return target


def encode(text: str) -> list[int]:
    """The tokenizer above, by hand: "</" is one piece, every other character its own."""
    ids, i = [], 0
    while i < len(text):
        if text.startswith("</", i):
            ids.append(piece_id("</"))
            i += 2
        else:
            ids.append(piece_id(text[i]))
            i += 1
    return ids
