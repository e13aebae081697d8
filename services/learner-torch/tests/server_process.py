"""Starts the learner as the integration does (a child process printing `listening on HOST:PORT`)."""
import json
import os
import subprocess
import sys

import grpc

from conftest import PACKAGE_ROOT
from leangrpo_learner import proto

M = proto.message


class LearnerProcess:
    def __init__(self, config: dict, launcher: list[str] | None = None, env: dict | None = None, host="127.0.0.1", credentials=None):
        """`credentials`: grpc.ssl_channel_credentials for a learner that serves TLS (dialled as localhost)."""
        command = (launcher or [sys.executable]) + [
            "-m",
            "leangrpo_learner",
            "serve",
            "--port",
            "0",
            "--host",
            host,
            "--config-json",
            json.dumps(config),
        ]
        self.process = subprocess.Popen(command, cwd=PACKAGE_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
        line = self.process.stdout.readline()
        if not line.startswith("listening on "):
            self.process.kill()
            raise RuntimeError(f"learner did not start: {line!r} {self.process.stderr.read()}")
        self.address = line.split("listening on ", 1)[1].strip()
        options = [("grpc.max_receive_message_length", 64 << 20)]
        if credentials is None:
            self.channel = grpc.insecure_channel(self.address, options=options)
        else:
            self.address = f"localhost:{self.address.rsplit(':', 1)[1]}"
            self.channel = grpc.secure_channel(self.address, credentials, options=options)

    def unary(self, method: str, request, response: str, service="leangrpo.v1.LearnerService"):
        return self.channel.unary_unary(
            f"/{service}/{method}", request_serializer=lambda m: m.SerializeToString(), response_deserializer=M(response).FromString
        )(request, timeout=120)

    def train_step(self, header: dict, samples: list[dict]):
        Request = M("leangrpo.v1.TrainStepRequest")
        messages = [Request(header=M("leangrpo.v1.TrainStepHeader")(**header))] + [Request(sample=M("leangrpo.v1.TrainingSample")(**s)) for s in samples]
        call = self.channel.stream_unary(
            "/leangrpo.v1.LearnerService/TrainStep",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=M("leangrpo.v1.TrainStepResponse").FromString,
        )
        return call(iter(messages), timeout=300)

    def export_adapter(self, version=0, chunk_size=0) -> tuple[object, dict[str, bytes]]:
        call = self.channel.unary_stream(
            "/leangrpo.v1.LearnerService/ExportAdapter",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=M("leangrpo.v1.ExportAdapterResponse").FromString,
        )
        manifest, files = None, {}
        for message in call(M("leangrpo.v1.ExportAdapterRequest")(version=version, chunk_size=chunk_size), timeout=60):
            if message.WhichOneof("part") == "manifest":
                manifest = message.manifest
            else:
                assert message.chunk.offset == len(files.get(message.chunk.path, b""))
                files[message.chunk.path] = files.get(message.chunk.path, b"") + message.chunk.data
        return manifest, files

    def stop(self) -> int:
        self.channel.close()
        self.process.terminate()
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return -9
