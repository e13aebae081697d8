"""A small safetensors reader and writer (the `safetensors` wheel is not a dependency).

Layout: u64 little-endian header length N, N bytes of JSON {name: {dtype, shape,
data_offsets: [begin, end)}, "__metadata__": {...}}, then the raw little-endian buffer.
Headers are padded with spaces to a multiple of 8, as the reference writer does.
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

import torch

DTYPES = {
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "F64": torch.float64,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}
NAMES = {dtype: name for name, dtype in DTYPES.items()}
MAX_HEADER_BYTES = 100_000_000


class SafetensorsError(ValueError):
    pass


def parse_header(data: bytes | memoryview, where: str) -> tuple[dict, int]:
    if len(data) < 8:
        raise SafetensorsError(f"{where}: {len(data)} bytes is too short for a safetensors file")
    (length,) = struct.unpack("<Q", bytes(data[:8]))
    if length > MAX_HEADER_BYTES or 8 + length > len(data):
        raise SafetensorsError(f"{where}: header length {length} does not fit the file ({len(data)} bytes)")
    try:
        header = json.loads(bytes(data[8 : 8 + length]).decode("utf-8"))
    except json.JSONDecodeError as error:  # its message names a place, not the text there
        raise SafetensorsError(f"{where}: the header is not JSON ({error.msg} at character {error.pos + 1})") from None
    except UnicodeDecodeError:
        raise SafetensorsError(f"{where}: the header is not UTF-8") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{where}: the header must be a JSON object")
    return header, 8 + length


def load_bytes(data: bytes, where: str = "safetensors") -> dict[str, torch.Tensor]:
    """Every tensor of a safetensors buffer, in its stored dtype (copied out of `data`)."""
    header, start = parse_header(data, where)
    tensors: dict[str, torch.Tensor] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = DTYPES.get(info.get("dtype"))
        if dtype is None:
            raise SafetensorsError(f"{where}: tensor {name!r} has dtype {info.get('dtype')!r}; accepted: {', '.join(DTYPES)}")
        begin, end = info["data_offsets"]
        shape = [int(s) for s in info["shape"]]
        count = 1
        for s in shape:
            count *= s
        item = torch.empty((), dtype=dtype).element_size()
        if end - begin != count * item or start + end > len(data):
            raise SafetensorsError(f"{where}: tensor {name!r} has offsets [{begin}, {end}) that do not match shape {shape}")
        raw = bytearray(data[start + begin : start + end])
        flat = torch.frombuffer(raw, dtype=dtype) if count > 0 else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(shape)
    return tensors


def load_file(path: str | Path) -> dict[str, torch.Tensor]:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SafetensorsError(f"cannot read {path}: {error.strerror}") from None
    return load_bytes(data, str(path))


def serialize(tensors: dict[str, torch.Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """Bytes of a safetensors file holding `tensors` in their dtypes, in the given order."""
    header: dict = {}
    if metadata:
        header["__metadata__"] = metadata
    buffers = []
    offset = 0
    for name, tensor in tensors.items():
        t = tensor.detach().to("cpu").contiguous()
        if t.dtype not in NAMES:
            raise SafetensorsError(f"tensor {name!r} has dtype {t.dtype}, which safetensors cannot hold here")
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() > 0 else b""
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        buffers.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(buffers)
