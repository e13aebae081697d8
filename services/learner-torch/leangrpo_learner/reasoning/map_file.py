"""reasoning_token_map.json: the map saved with every checkpoint, adapter and expanded base, so
whoever loads the rows knows which standard token each one copies. Same format and checks as
packages/lm/src/reasoning-vocab/reasoning-map-file.ts; a reader recomputes the hash."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .token_map import ReasoningTokenMap, ReasoningVocabError

REASONING_MAP_FILE = "reasoning_token_map.json"
REASONING_MAP_FORMAT = "lean-grpo.reasoning-token-map/1"


@dataclass(frozen=True)
class ReasoningMarkers:
    start: str
    end: str
    start_ids: tuple[int, ...]
    end_ids: tuple[int, ...]


@dataclass(frozen=True)
class ReasoningMapFile:
    map: ReasoningTokenMap
    markers: ReasoningMarkers | None = None  # the markers the rows were trained with, when recorded


def serialize_reasoning_map(token_map: ReasoningTokenMap, markers: ReasoningMarkers | None = None) -> str:
    body = {
        "format": REASONING_MAP_FORMAT,
        "standard_vocab_size": token_map.standard_size,
        "reasoning_vocab_size": token_map.reasoning_size,
        "source_ids": list(token_map.source_ids),
        "multiplicities": list(token_map.multiplicities),
    }
    if markers is not None:
        body["markers"] = {"start": markers.start, "end": markers.end, "start_ids": list(markers.start_ids), "end_ids": list(markers.end_ids)}
    body["sha256"] = token_map.sha256
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False) + "\n"


def _is_id_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in value)


def parse_reasoning_map(text: str, where: str) -> ReasoningMapFile:
    """Parses a map file's text; `where` names the file or key in messages."""
    try:
        body = json.loads(text)
        if not isinstance(body, dict):
            raise ValueError("not a JSON object")
    except json.JSONDecodeError as error:  # its message names a place, not the text there
        raise ReasoningVocabError(f"{where} is not a reasoning token map (not JSON at character {error.pos + 1})") from None
    except ValueError as error:
        raise ReasoningVocabError(f"{where} is not a reasoning token map ({error})") from None
    if body.get("format") != REASONING_MAP_FORMAT:
        raise ReasoningVocabError(f'{where}: "format" is not "{REASONING_MAP_FORMAT}"')
    standard = body.get("standard_vocab_size")
    if isinstance(standard, bool) or not isinstance(standard, int) or standard < 1:
        raise ReasoningVocabError(f'{where}: "standard_vocab_size" must be a positive integer')
    sources = body.get("source_ids")
    if not _is_id_list(sources) or not sources:
        raise ReasoningVocabError(f'{where}: "source_ids" must be a non-empty list of token ids')
    if "reasoning_vocab_size" in body and body["reasoning_vocab_size"] != len(sources):
        raise ReasoningVocabError(f'{where}: "reasoning_vocab_size" {body["reasoning_vocab_size"]} differs from the {len(sources)} source ids')
    token_map = ReasoningTokenMap(standard, tuple(sources))
    if "sha256" in body and body["sha256"] != token_map.sha256:
        raise ReasoningVocabError(f'{where}: "sha256" {json.dumps(body["sha256"])} is not the hash of its map ({token_map.sha256})')
    markers = None
    m = body.get("markers")
    if m is not None:
        if not isinstance(m, dict) or not isinstance(m.get("start"), str) or not isinstance(m.get("end"), str):
            raise ReasoningVocabError(f'{where}: "markers" must be {{start, end, start_ids, end_ids}}')
        if not _is_id_list(m.get("start_ids")) or not _is_id_list(m.get("end_ids")):
            raise ReasoningVocabError(f'{where}: "markers" must be {{start, end, start_ids, end_ids}}')
        markers = ReasoningMarkers(m["start"], m["end"], tuple(m["start_ids"]), tuple(m["end_ids"]))
    return ReasoningMapFile(token_map, markers)


def read_reasoning_map_file(file: str | Path, where: str | None = None) -> ReasoningMapFile:
    """Reads a map file: a path to the JSON file, or a directory holding reasoning_token_map.json."""
    path = Path(file)
    target = path if path.suffix == ".json" else path / REASONING_MAP_FILE
    where = where or str(file)
    try:
        text = target.read_text("utf-8")
    except OSError as error:
        code = {2: "ENOENT", 20: "ENOTDIR", 13: "EACCES", 21: "EISDIR"}.get(error.errno, error.strerror)
        raise ReasoningVocabError(f"{where}: cannot read {target} ({code})") from None
    return parse_reasoning_map(text, f"{where} ({target})")


def map_file_bytes(token_map: ReasoningTokenMap, markers: ReasoningMarkers | None = None) -> bytes:
    return serialize_reasoning_map(token_map, markers).encode("utf-8")


def check_same_reasoning_map(text: str | None, expected: ReasoningTokenMap | None, what: str) -> None:
    """Refuses rows saved for another map: `text` is the directory's map file (None when it has none).
    A directory without a map may not be loaded into a run with one, nor the reverse."""
    saved = None if text is None else parse_reasoning_map(text, f"{what} {REASONING_MAP_FILE}").map
    if saved is None and expected is None:
        return
    if saved is None:
        raise ReasoningVocabError(
            f"{what} has no {REASONING_MAP_FILE}, but this run has a reasoning vocabulary (model.reasoning_vocab_size {expected.reasoning_size}); "
            "it was saved without one"
        )
    if expected is None:
        raise ReasoningVocabError(
            f"{what} was saved with a reasoning vocabulary ({saved.reasoning_size} ids, map {saved.sha256[:12]}), but this run has none: "
            "set model.reasoning_vocab_size to match"
        )
    if saved.sha256 != expected.sha256:
        raise ReasoningVocabError(
            f"{what} was saved with another reasoning map (n_s {saved.standard_size}, n_r {saved.reasoning_size}, sha256 {saved.sha256[:12]}…) "
            f"than this run's (n_s {expected.standard_size}, n_r {expected.reasoning_size}, sha256 {expected.sha256[:12]}…): "
            "model.reasoning_vocab_size / model.reasoning_map must match the ones it was trained with"
        )
