"""Message classes built at run time from the committed `buf build` descriptor set.

No protoc gencode is shipped: gencode pins a protobuf runtime range, while a descriptor set
loads in protobuf 3.21 (Debian) and 4/5/6 alike. Message classes come from
`message_factory.GetMessageClass` on new runtimes and `MessageFactory().GetPrototype` on old.
"""
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

DESCRIPTOR_SET = Path(__file__).with_name("descriptors.binpb")

_pool = descriptor_pool.DescriptorPool()
_file_set = descriptor_pb2.FileDescriptorSet()
_file_set.ParseFromString(DESCRIPTOR_SET.read_bytes())
# Files are added in dependency order (imports first), which buf build does not guarantee.
_pending = {f.name: f for f in _file_set.file}
while _pending:
    progressed = False
    for name, proto in list(_pending.items()):
        if all(dep not in _pending for dep in proto.dependency):
            _pool.Add(proto)
            del _pending[name]
            progressed = True
    if not progressed:
        raise RuntimeError(f"{DESCRIPTOR_SET}: unresolved imports among {sorted(_pending)}")

if hasattr(message_factory, "GetMessageClass"):
    _message_class = message_factory.GetMessageClass
else:  # protobuf < 4.21.0
    _factory = message_factory.MessageFactory(_pool)
    _message_class = _factory.GetPrototype


def pool() -> descriptor_pool.DescriptorPool:
    return _pool


def file_set() -> descriptor_pb2.FileDescriptorSet:
    return _file_set


def message(full_name: str):
    """The message class of a fully-qualified protobuf name, e.g. "leangrpo.v1.TrainStepRequest"."""
    return _message_class(_pool.FindMessageTypeByName(full_name))


def service(full_name: str):
    return _pool.FindServiceByName(full_name)
