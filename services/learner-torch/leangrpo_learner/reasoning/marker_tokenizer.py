"""Encodes the markers with the model's tokenizer (model.dir/tokenizer.json), as the TS services do.

With Hugging Face `tokenizers` installed (it comes with transformers) that library encodes them.
Without it (Debian's torch has no such package) a marker is encoded here when the tokenizer needs
no pre-tokenizer or normalizer (as arith-tiny's): added tokens are split off first, then BPE merges
are applied by rank, which is what `tokenizers` does for such a model. Any other tokenizer without
the library is refused, naming the key."""
from __future__ import annotations

import json
from pathlib import Path

from .token_map import ReasoningVocabError

TOKENIZER_FILE = "tokenizer.json"


class MarkerTokenizer:
    def __init__(self, directory: str | Path):
        self.file = Path(directory) / TOKENIZER_FILE
        try:
            self.raw = json.loads(self.file.read_text("utf-8"))
        except OSError as error:
            raise ReasoningVocabError(f"model.reasoning_markers need the model's tokenizer, but {self.file} cannot be read ({error.strerror})") from None
        except json.JSONDecodeError as error:
            raise ReasoningVocabError(f"model.reasoning_markers need the model's tokenizer, but {self.file} is not valid JSON ({error})") from None
        try:
            from tokenizers import Tokenizer

            self.library = Tokenizer.from_file(str(self.file))
        except ImportError:
            self.library = None

    def encode(self, text: str, key: str) -> list[int]:
        if self.library is not None:
            return list(self.library.encode(text, add_special_tokens=False).ids)
        model = self.raw.get("model") or {}
        if model.get("type") != "BPE" or self.raw.get("pre_tokenizer") or self.raw.get("normalizer") or model.get("byte_fallback"):
            raise ReasoningVocabError(
                f"{key} {json.dumps(text, ensure_ascii=False)}: encoding it with {self.file} needs the `tokenizers` package (pip install tokenizers), "
                "which is not installed here (this encoder handles BPE tokenizers without a pre-tokenizer or normalizer only)"
            )
        ids: list[int] = []
        for piece, added in self._split_added(text):
            ids += [added] if added is not None else self._bpe(piece, model, key)
        return ids

    def decode(self, ids: list[int]) -> str:
        if self.library is not None:
            return self.library.decode(ids, skip_special_tokens=False)
        pieces = {i: p for p, i in self.raw["model"]["vocab"].items()}
        pieces.update({t["id"]: t["content"] for t in self.raw.get("added_tokens") or []})
        return "".join(pieces.get(i, "") for i in ids)

    def _split_added(self, text: str):
        """(segment, None) for plain text and (content, id) for each added token, longest match first."""
        added = sorted(((t["content"], t["id"]) for t in self.raw.get("added_tokens") or []), key=lambda t: -len(t[0]))
        start, i = 0, 0
        while i < len(text):
            match = next(((c, t) for c, t in added if c and text.startswith(c, i)), None)
            if match is None:
                i += 1
                continue
            if i > start:
                yield text[start:i], None
            yield match[0], match[1]
            i += len(match[0])
            start = i
        if start < len(text):
            yield text[start:], None

    def _bpe(self, text: str, model: dict, key: str) -> list[int]:
        vocab = model["vocab"]
        ranks = {}
        for rank, merge in enumerate(model.get("merges") or []):
            pair = tuple(merge.split(" ", 1)) if isinstance(merge, str) else tuple(merge)
            ranks.setdefault(pair, rank)
        word = list(text)
        while len(word) > 1:
            best = min(range(len(word) - 1), key=lambda j: ranks.get((word[j], word[j + 1]), float("inf")))
            pair = (word[best], word[best + 1])
            if pair not in ranks:
                break
            merged, j = [], 0
            while j < len(word):
                if j < len(word) - 1 and (word[j], word[j + 1]) == pair:
                    merged.append(word[j] + word[j + 1])
                    j += 2
                else:
                    merged.append(word[j])
                    j += 1
            word = merged
        missing = [p for p in word if p not in vocab]
        if missing:
            piece = json.dumps(missing[0], ensure_ascii=False)
            raise ReasoningVocabError(f"{key} {json.dumps(text, ensure_ascii=False)} does not tokenize: {piece} is not in {self.file}'s vocabulary")
        return [vocab[p] for p in word]
