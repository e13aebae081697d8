"""A Python grpcio client for the interop test: no generated code, the messages
come from a FileDescriptorSet that `buf build` wrote. Prints one JSON object with
what each call returned, for tests/interop/python-grpcio.spec.ts to check.

usage: python3 grpcio_client.py HOST:PORT DESCRIPTOR_SET.binpb
"""
import json
import sys

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, json_format
from google.protobuf import message_factory


def message_classes(fds_path):
    fds = descriptor_pb2.FileDescriptorSet.FromString(open(fds_path, "rb").read())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)

    def cls(name):
        descriptor = pool.FindMessageTypeByName(name)
        if hasattr(message_factory, "GetMessageClass"):
            return message_factory.GetMessageClass(descriptor)
        return message_factory.MessageFactory(pool).GetPrototype(descriptor)

    return cls


def main():
    target, fds_path = sys.argv[1], sys.argv[2]
    cls = message_classes(fds_path)
    VerifyRequest = cls("leangrpo.v1.VerifyRequest")
    VerifyResponse = cls("leangrpo.v1.VerifyResponse")
    PoolStatsRequest = cls("leangrpo.v1.PoolStatsRequest")
    PoolStatsResponse = cls("leangrpo.v1.PoolStatsResponse")
    HealthCheckRequest = cls("grpc.health.v1.HealthCheckRequest")
    HealthCheckResponse = cls("grpc.health.v1.HealthCheckResponse")

    channel = grpc.insecure_channel(target)

    def unary(path, req_cls, res_cls):
        return channel.unary_unary(
            path,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=res_cls.FromString,
        )

    verify = unary("/leangrpo.v1.LeanVerifierService/Verify", VerifyRequest, VerifyResponse)
    pool_stats = unary("/leangrpo.v1.LeanVerifierService/PoolStats", PoolStatsRequest, PoolStatsResponse)
    check = unary("/grpc.health.v1.Health/Check", HealthCheckRequest, HealthCheckResponse)

    def outcome(fn, request, **kwargs):
        try:
            res = fn(request, **kwargs)
            return {"code": "OK", "response": json_format.MessageToDict(res)}
        except grpc.RpcError as err:
            return {"code": err.code().name, "details": err.details()}

    results = {
        "ok": outcome(verify, VerifyRequest(proof="by simp"), timeout=5),
        "invalid": outcome(verify, VerifyRequest(proof="bad"), timeout=5),
        "unimplemented": outcome(pool_stats, PoolStatsRequest(), timeout=5),
        "deadline": outcome(verify, VerifyRequest(proof="wait-for-abort"), timeout=0.2),
        "too_big": outcome(verify, VerifyRequest(proof="x" * (2 << 20)), timeout=5),
        "health": outcome(check, HealthCheckRequest(service=""), timeout=5),
        "traced": outcome(
            verify,
            VerifyRequest(proof="trace me"),
            timeout=5,
            metadata=[("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")],
        ),
    }
    print(json.dumps(results))


if __name__ == "__main__":
    main()
