"""A model's resolved reasoning vocabulary: the map (n_s, sources) and the markers as token-id
sequences in the standard half, resolved once at load from the learner's `model.reasoning_*`
settings, the base model's config vocab_size and its tokenizer. Every bad setting is refused here,
naming its key (as packages/lm/src/reasoning-vocab/reasoning-vocabulary.ts)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .block_mask import MASK_MODES
from .map_file import ReasoningMarkers, read_reasoning_map_file
from .marker_tokenizer import MarkerTokenizer
from .token_map import ReasoningTokenMap, ReasoningVocabError, default_reasoning_map

DEFAULT_MARKERS = ("<think>", "</think>")


@dataclass(frozen=True)
class ReasoningSettings:
    size: int  # n_r; 0 = off (or, with map_file, the map's length)
    markers: tuple[str, str] = DEFAULT_MARKERS
    mask: str = "free"
    map_file: str | None = None

    @property
    def enabled(self) -> bool:
        return self.map_file is not None or self.size > 0


@dataclass(frozen=True)
class ReasoningVocabulary:
    map: ReasoningTokenMap
    markers: ReasoningMarkers
    mask: str  # the mode configured for the run; requests carry their own

    @property
    def standard_size(self) -> int:
        return self.map.standard_size

    @property
    def reasoning_size(self) -> int:
        return self.map.reasoning_size

    @property
    def total_size(self) -> int:
        return self.map.total_size

    def describe(self) -> dict:
        """The run metadata's record of it."""
        return {"n_s": self.standard_size, "n_r": self.reasoning_size, "map_sha256": self.map.sha256, "mask": self.mask, "markers": list(self.markers_text)}

    @property
    def markers_text(self) -> tuple[str, str]:
        return (self.markers.start, self.markers.end)


def validate_settings(settings: ReasoningSettings, prefix: str = "model.") -> None:
    """What can be checked without the model."""
    size, markers, mask = settings.size, settings.markers, settings.mask
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ReasoningVocabError(f"{prefix}reasoning_vocab_size {size!r} must be an integer >= 0 (0 turns the reasoning vocabulary off)")
    if mask not in MASK_MODES:
        raise ReasoningVocabError(f'{prefix}reasoning_mask "{mask}" is not one of {", ".join(MASK_MODES)}')
    if not isinstance(markers, (list, tuple)) or len(markers) != 2 or any(not isinstance(m, str) for m in markers):
        raise ReasoningVocabError(f'{prefix}reasoning_markers must be two strings [start, end], e.g. ["<think>", "</think>"]')
    for i, marker in enumerate(markers):
        if not marker:
            raise ReasoningVocabError(f"{prefix}reasoning_markers[{i}] is empty; a marker must be non-empty text")
    if markers[0] == markers[1]:
        raise ReasoningVocabError(f'{prefix}reasoning_markers: start and end are both "{markers[0]}"; they must differ')
    if not settings.enabled and mask != "free":
        raise ReasoningVocabError(
            f'{prefix}reasoning_mask "{mask}" needs a reasoning vocabulary: set {prefix}reasoning_vocab_size > 0 (or {prefix}reasoning_map), or use "free"'
        )


def marker_ids(text: str, index: int, tokenizer, standard_size: int, stop_ids, prefix: str = "model.") -> tuple[int, ...]:
    """Encodes one marker and checks that it is a usable id sequence in the standard half."""
    key = f"{prefix}reasoning_markers[{index}]"
    ids = tokenizer.encode(text, key)
    if not ids:
        raise ReasoningVocabError(f"{key} {json.dumps(text, ensure_ascii=False)} tokenizes to no ids")
    back = tokenizer.decode(ids)
    if back != text:
        raise ReasoningVocabError(
            f"{key} {json.dumps(text, ensure_ascii=False)} does not tokenize to itself: its ids {ids} decode to {json.dumps(back, ensure_ascii=False)}"
        )
    outside = next((i for i in ids if i >= standard_size), None)
    if outside is not None:
        raise ReasoningVocabError(f"{key} {json.dumps(text, ensure_ascii=False)} has id {outside}, outside the standard vocabulary (0..{standard_size - 1})")
    stop = next((i for i in ids if i in stop_ids), None)
    if stop is not None:
        raise ReasoningVocabError(f"{key} {json.dumps(text, ensure_ascii=False)} contains the end-of-sequence id {stop}: nothing could follow it")
    return tuple(ids)


def stop_ids_of(model_dir: str | Path) -> set[int]:
    """EOS ids of config.json and generation_config.json (a marker may not contain one)."""
    ids: set[int] = set()
    for name in ("config.json", "generation_config.json"):
        try:
            value = json.loads((Path(model_dir) / name).read_text("utf-8")).get("eos_token_id")
        except (OSError, ValueError, AttributeError):
            continue
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, int) and not isinstance(v, bool):
                ids.add(v)
    return ids


def resolve_reasoning_vocabulary(settings: ReasoningSettings, standard_size: int, model_dir: str | Path, tokenizer=None, prefix: str = "model."):
    """The vocabulary the settings describe for a model, or None when they leave it off."""
    validate_settings(settings, prefix)
    if settings.map_file is not None:
        token_map = read_reasoning_map_file(settings.map_file, f"{prefix}reasoning_map").map
        if token_map.standard_size != standard_size:
            raise ReasoningVocabError(
                f"{prefix}reasoning_map {settings.map_file} is for a model with {token_map.standard_size} standard ids; "
                f"this model's config.json vocab_size is {standard_size}"
            )
        if settings.size not in (0, token_map.reasoning_size):
            raise ReasoningVocabError(
                f"{prefix}reasoning_vocab_size {settings.size} differs from the {token_map.reasoning_size} reasoning ids of {prefix}reasoning_map; "
                "leave the size out or make them equal"
            )
    elif settings.size == 0:
        return None
    else:
        token_map = default_reasoning_map(standard_size, settings.size, f"{prefix}reasoning_vocab_size")
    tokenizer = tokenizer or MarkerTokenizer(model_dir)
    stops = stop_ids_of(model_dir)
    start_ids = marker_ids(settings.markers[0], 0, tokenizer, standard_size, stops, prefix)
    end_ids = marker_ids(settings.markers[1], 1, tokenizer, standard_size, stops, prefix)
    if start_ids == end_ids:
        raise ReasoningVocabError(f"{prefix}reasoning_markers: start and end tokenize to the same ids {list(start_ids)}")
    return ReasoningVocabulary(token_map, ReasoningMarkers(settings.markers[0], settings.markers[1], start_ids, end_ids), settings.mask)
