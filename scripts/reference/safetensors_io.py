"""The safetensors format by hand (no `safetensors` package in Debian 12).

Layout: 8-byte little-endian u64 header length N, N bytes of UTF-8 JSON
({name: {dtype, shape, data_offsets: [begin, end)}, "__metadata__": {...}}),
then the raw little-endian row-major data. The header is padded with spaces to
a multiple of 8, as the reference writer does.
"""

import json
import struct

import torch

DTYPE_NAMES = {
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
}
DTYPES = {name: dtype for dtype, name in DTYPE_NAMES.items()}


def write(path, tensors, metadata=None):
    header = {}
    chunks = []
    offset = 0
    for name, tensor in tensors.items():
        data = tensor.detach().contiguous().view(torch.uint8).numpy().tobytes()
        header[name] = {
            "dtype": DTYPE_NAMES[tensor.dtype],
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        chunks.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = metadata
    header_bytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    header_bytes += b" " * (-len(header_bytes) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header_bytes)))
        f.write(header_bytes)
        for chunk in chunks:
            f.write(chunk)


def read(path):
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    body = raw[8 + length :]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        flat = torch.frombuffer(bytearray(body[begin:end]), dtype=torch.uint8)
        tensors[name] = flat.view(DTYPES[info["dtype"]]).reshape(info["shape"])
    return tensors
