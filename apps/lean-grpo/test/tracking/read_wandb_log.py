"""Reads a W&B transaction log (run-<id>.wandb) as W&B's datastore does, and prints its records as JSON.

The framing (header ":W&B" 0xBEE1 0, LevelDB log chunks with zlib crc32 of type and data) is checked
here independently; each record is parsed with W&B's own protobuf schema (wandb.proto.wandb_internal_pb2),
loaded without the SDK's runtime. Usage: python read_wandb_log.py FILE. Needs the wandb package.
"""

import importlib.util
import json
import struct
import sys
import types
import zlib

BLOCK = 32768
HEADER = 7


def wandb_internal_pb2():
    # Only the generated protobuf modules: wandb/__init__ starts the SDK, which a reader does not need.
    spec = importlib.util.find_spec("wandb")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the wandb package is not installed")
    package = types.ModuleType("wandb")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["wandb"] = package
    from wandb.proto import wandb_internal_pb2 as pb

    return pb


def chunks(data: bytes):
    ident, magic, version = struct.unpack("<4sHB", data[:HEADER])
    assert (ident, magic, version) == (b":W&B", 0xBEE1, 0), f"bad header {ident!r} {magic:#x} {version}"
    offset = HEADER
    while offset < len(data):
        left = BLOCK - offset % BLOCK
        if left < HEADER:
            assert data[offset : offset + left] == b"\0" * left, "block trailer is not zero padding"
            offset += left
            continue
        checksum, length, kind = struct.unpack("<IHB", data[offset : offset + HEADER])
        body = data[offset + HEADER : offset + HEADER + length]
        assert checksum == zlib.crc32(body, zlib.crc32(bytes([kind]))) & 0xFFFFFFFF, f"bad checksum at {offset}"
        yield kind, body
        offset += HEADER + length


def records(data: bytes):
    pending = b""
    for kind, body in chunks(data):
        if kind == 1:
            yield body
        elif kind == 2:
            pending = body
        elif kind == 3:
            pending += body
        else:
            assert kind == 4, f"bad chunk type {kind}"
            yield pending + body
            pending = b""


def main(path: str) -> None:
    pb = wandb_internal_pb2()
    out = []
    with open(path, "rb") as f:
        data = f.read()
    for raw in records(data):
        record = pb.Record()
        record.ParseFromString(raw)
        kind = record.WhichOneof("record_type")
        entry = {"num": record.num, "kind": kind}
        if kind == "run":
            run = record.run
            entry.update(
                run_id=run.run_id,
                project=run.project,
                entity=run.entity,
                display_name=run.display_name,
                config={i.key: json.loads(i.value_json) for i in run.config.update},
            )
        elif kind == "history":
            entry.update(step=record.history.step.num, items={i.key: json.loads(i.value_json) for i in record.history.item})
        elif kind == "summary":
            entry.update(items={i.key: json.loads(i.value_json) for i in record.summary.update})
        elif kind == "exit":
            entry.update(exit_code=record.exit.exit_code)
        out.append(entry)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
