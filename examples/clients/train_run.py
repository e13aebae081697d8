"""Start a training run on a lean-grpo mesh, watch it to its end and print the run, with
grpcio and protobuf only: no generated code. The message classes come from the contract's
descriptor set, which `buf build` writes:

    npx buf build --as-file-descriptor-set -o leangrpo.binpb
    python3 examples/clients/train_run.py 127.0.0.1:50055 leangrpo.binpb examples/arith.jsonl
    python3 examples/clients/train_run.py 127.0.0.1:50055 leangrpo.binpb examples/arith.jsonl \
        '{"training": {"steps": 2}}'

Where the mesh requires a token (every service beyond loopback, e.g. deploy/compose.yaml), the
client presents LEANGRPO_AUTH_TOKEN from its environment as `authorization: Bearer <token>`:

    LEANGRPO_AUTH_TOKEN=... python3 examples/clients/train_run.py 127.0.0.1:50055 leangrpo.binpb examples/arith.jsonl

The dataset path is read by the orchestrator, on its filesystem. The optional JSON is the
run config, the typed RunConfig message (the shape of configs/train/*.yaml without
model/services); a key it does not have is refused here, a bad value by the orchestrator. One JSON line per
step goes to stdout, then {"run": the final run}; the exit status is 0 when the run COMPLETED.
"""
import json
import os
import sys

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

SERVICE = "/leangrpo.v1.OrchestratorService/"


def message_classes(fds_path):
    fds = descriptor_pb2.FileDescriptorSet.FromString(open(fds_path, "rb").read())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)

    def cls(name):
        descriptor = pool.FindMessageTypeByName("leangrpo.v1." + name)
        # protobuf >= 4.21 has GetMessageClass; Debian's 3.x has the factory.
        if hasattr(message_factory, "GetMessageClass"):
            return message_factory.GetMessageClass(descriptor)
        return message_factory.MessageFactory(pool).GetPrototype(descriptor)

    return cls


def state_name(run):
    return run.DESCRIPTOR.fields_by_name["state"].enum_type.values_by_number[run.state].name


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    target, fds_path, dataset = sys.argv[1:4]
    cls = message_classes(fds_path)
    channel = grpc.insecure_channel(target)
    token = os.environ.get("LEANGRPO_AUTH_TOKEN", "")
    metadata = [("authorization", "Bearer " + token)] if token else None

    def method(name, streaming=False):
        call = channel.unary_stream if streaming else channel.unary_unary
        stub = call(
            SERVICE + name,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=cls(name + "Response").FromString,
        )
        return lambda request: stub(request, metadata=metadata)

    request = cls("StartRunRequest")(dataset_path=dataset)
    if len(sys.argv) == 5:
        json_format.ParseDict(json.loads(sys.argv[4]), request.run_config)
    run = method("StartRun")(request).run
    print(json.dumps({"started": run.id, "state": state_name(run)}), flush=True)

    for event in method("WatchRun", streaming=True)(cls("WatchRunRequest")(run_id=run.id, from_start=True)):
        kind = event.WhichOneof("event")
        if kind == "step":
            print(json.dumps({"step": event.step.step, "reward_mean": event.step.metrics["reward_mean"]}), flush=True)
        elif kind == "log":
            print(json.dumps({"log": event.log}), flush=True)

    final = method("GetRun")(cls("GetRunRequest")(run_id=run.id)).run
    print(json.dumps({"run": json_format.MessageToDict(final, preserving_proto_field_name=True)}), flush=True)
    sys.exit(0 if state_name(final) == "RUN_STATE_COMPLETED" else 1)


if __name__ == "__main__":
    main()
