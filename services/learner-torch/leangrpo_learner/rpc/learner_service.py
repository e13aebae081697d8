"""leangrpo.v1.LearnerService handlers with the TS learner's semantics (services/learner/src/rpc):
the same validation messages, status codes, metric names and adapter transfer."""
from __future__ import annotations

import hashlib
import math
import os
import resource

import grpc
from google.protobuf import json_format

from .. import proto
from ..algorithms.parameters import js_json, js_number
from ..algorithms.registry import ALGORITHMS
from ..lora.peft_files import ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE
from ..sampling import SamplingMessage, resolve_sampling
from ..artifact_names import adapter_name, checkpoint_name
from .header_field_path import under_header
from ..training.learner import StepRequest
from ..training.training_example import TrainingExample
from .learner_host import LearnerHost
from .status_codes import RpcAbort, abort_with
from ..path_root import PathRoot

# What LoadCheckpoint reads inside the directory: each must be a regular file under checkpoint_dir.

M = proto.message
SERVICE = "leangrpo.v1.LearnerService"
SFT = proto.pool().FindEnumTypeByName("leangrpo.v1.TrainingMode").values_by_name["TRAINING_MODE_SFT"].number
DEFAULT_CHUNK_SIZE = 1 << 20
MAX_SAFE_INTEGER = 2**53 - 1


def _invalid(message: str) -> RpcAbort:
    return RpcAbort(grpc.StatusCode.INVALID_ARGUMENT, message)


class LearnerServicer:
    def __init__(self, host: LearnerHost):
        self.host = host

    # ---- TrainStep -----------------------------------------------------------------------
    def train_step(self, requests, context):
        try:
            header, examples = self._read_stream(requests)
            sampling = SamplingMessage.of(header.sampling) if header.HasField("sampling") else None
            request = StepRequest(
                algorithm=header.algorithm,
                algorithm_config=json_format.MessageToDict(header.algorithm_config) if header.HasField("algorithm_config") else {},
                mode="sft" if header.mode == SFT else "rl",
                examples=examples,
                step=header.step,
                expected_samples=header.expected_samples,
                num_generations=header.num_generations,
                sampling=sampling,
            )
            with self.host.lock:
                learner = self.host.learner()
                learner.check_request(request)  # the other ranks only ever see a valid batch
                self.host.broadcast("train_step", request)
                result = learner.train_step(request)
            return M("leangrpo.v1.TrainStepResponse")(
                step=result.step,
                adapter_version=result.adapter_version,
                adapter_name=result.adapter_name,
                metrics=result.metrics,
                zero_std_groups=result.zero_std_groups,
            )
        except Exception as error:  # noqa: BLE001
            abort_with(context, under_header(error))

    def _read_stream(self, requests):
        header = None
        examples: list[TrainingExample] = []
        limit = self.host.config["max_samples_per_step"]
        for message in requests:
            part = message.WhichOneof("part")
            if part == "header":
                if header is not None:
                    raise _invalid("TrainStep: a second header arrived; send exactly one header, first")
                header = message.header
            elif part == "sample":
                if header is None:
                    raise _invalid("TrainStep: the first message must be the header; a sample came first")
                if len(examples) >= limit:
                    raise RpcAbort(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"TrainStep: more than {limit} samples (max_samples_per_step); split the batch",
                    )
                s = message.sample
                examples.append(
                    TrainingExample(
                        sample_id=s.sample_id or f"#{len(examples)}",
                        group_id=s.group_id,
                        prompt_ids=list(s.prompt_token_ids),
                        completion_ids=list(s.completion_token_ids),
                        sampler_logprobs=list(s.sampler_logprobs) if len(s.sampler_logprobs) > 0 else None,
                        reward=s.reward,
                        truncated=s.truncated,
                        completion_mask=list(s.completion_mask) if len(s.completion_mask) > 0 else None,
                    )
                )
            else:
                raise _invalid(f"TrainStep: message {len(examples) + (1 if header is not None else 0)} has neither header nor sample")
        if header is None:
            raise _invalid("TrainStep: the stream ended without a header")
        return header, examples

    # ---- ComputeLogprobs -----------------------------------------------------------------
    def compute_logprobs(self, request, context):
        try:
            if len(request.sequences) == 0:
                raise _invalid("sequences is empty; send at least one")
            for i, s in enumerate(request.sequences):
                if len(s.prompt_token_ids) == 0:
                    raise _invalid(f"sequences[{i}].prompt_token_ids is empty; at least one prompt token is needed")
                if len(s.completion_token_ids) == 0:
                    raise _invalid(f"sequences[{i}].completion_token_ids is empty")
            if not (request.temperature >= 0) or not math.isfinite(request.temperature):
                raise _invalid(
                    f"temperature {js_number(request.temperature)} must be a positive number (0: not given; the field is deprecated, set sampling instead)"
                )
            # The deprecated `temperature` is read in resolve_sampling, with `sampling`.
            legacy = (request.temperature, "temperature") if request.temperature != 0 else None
            try:
                sampling = resolve_sampling(SamplingMessage.of(request.sampling) if request.HasField("sampling") else None, legacy, "sampling")
            except ValueError as error:
                raise _invalid(str(error)) from None
            pairs = [(list(s.prompt_token_ids), list(s.completion_token_ids)) for s in request.sequences]
            with self.host.lock:
                learner = self.host.learner()
                if self.host.sharded:
                    learner.check_pairs(pairs)  # the other ranks only ever see valid sequences
                    self.host.broadcast("compute_logprobs", (pairs, request.reference, sampling, request.include_entropy))
                logprobs, entropies, version = learner.compute_logprobs(pairs, request.reference, sampling, request.include_entropy)
            response = M("leangrpo.v1.ComputeLogprobsResponse")(adapter_version=version)
            for i, row in enumerate(logprobs):
                response.sequences.add(logprobs=row, entropies=entropies[i] if request.include_entropy else [])
            return response
        except Exception as error:  # noqa: BLE001
            abort_with(context, error)

    # ---- ExportAdapter -------------------------------------------------------------------
    def export_adapter(self, request, context):
        try:
            chunk_size = DEFAULT_CHUNK_SIZE if request.chunk_size == 0 else request.chunk_size
            largest = self.host.config["server"]["limits"]["write_max_bytes"] - 1024
            if chunk_size > largest:
                raise _invalid(
                    f"chunk_size {chunk_size} exceeds the largest response (server.limits.write_max_bytes allows {largest}); "
                    f"send 0 for the default {DEFAULT_CHUNK_SIZE}"
                )
            if request.version > MAX_SAFE_INTEGER:
                raise _invalid(f"version: adapter version {request.version} is not a non-negative safe integer")
            with self.host.lock:
                version, files = self.host.learner().export_adapter(request.version)
        except Exception as error:  # noqa: BLE001
            abort_with(context, error)
            return
        Response = M("leangrpo.v1.ExportAdapterResponse")
        ordered = [(ADAPTER_CONFIG_FILE, files[ADAPTER_CONFIG_FILE]), (ADAPTER_WEIGHTS_FILE, files[ADAPTER_WEIGHTS_FILE])]
        ordered += [(name, data) for name, data in files.items() if name not in (ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE)]  # reasoning_token_map.json
        manifest = Response()
        manifest.manifest.name = adapter_name(version)
        manifest.manifest.version = version
        manifest.manifest.base_model = self.host.base_model
        for path, data in ordered:
            manifest.manifest.files.add(path=path, size=len(data), sha256=hashlib.sha256(data).hexdigest())
        yield manifest
        for path, data in ordered:
            offset = 0
            while True:  # an empty file is one empty eof chunk
                end = min(len(data), offset + chunk_size)
                message = Response()
                message.chunk.path, message.chunk.offset, message.chunk.data, message.chunk.eof = path, offset, data[offset:end], end == len(data)
                yield message
                offset = end
                if offset >= len(data):
                    break

    # ---- checkpoints ---------------------------------------------------------------------
    def save_checkpoint(self, request, context):
        try:
            with self.host.lock:
                learner = self.host.learner()
                # Relative to checkpoint_dir, never outside it, and written through the directory held open (path_root.py); answered as given.
                given = request.path or checkpoint_name(learner.step)
                with self._checkpoint_root().open_directory(given, "path", create=True) as directory:
                    _, step, version, size = learner.save_checkpoint(directory)
            return M("leangrpo.v1.SaveCheckpointResponse")(path=os.path.normpath(given), step=step, adapter_version=version, size_bytes=size)
        except Exception as error:  # noqa: BLE001
            abort_with(context, error)

    def load_checkpoint(self, request, context):
        try:
            if not request.path:
                raise _invalid("path is empty; give the directory SaveCheckpoint wrote, relative to checkpoint_dir")
            with self._checkpoint_root().open_directory(request.path, "path") as directory:
                with self.host.lock:
                    learner = self.host.learner()
                    step, version, algorithm = learner.load_checkpoint(directory)
                    # Each rank opens it under its own checkpoint_dir the same way.
                    self.host.broadcast("load_checkpoint", request.path)
            return M("leangrpo.v1.LoadCheckpointResponse")(step=step, adapter_version=version, algorithm=algorithm)
        except Exception as error:  # noqa: BLE001
            abort_with(context, error)

    def _checkpoint_root(self) -> PathRoot:
        return PathRoot(self.host.config["checkpoint_dir"], "checkpoint_dir")

    # ---- GetStatus, ListAlgorithms -------------------------------------------------------
    def get_status(self, request, context):
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        try:
            with open("/proc/self/statm") as statm:
                rss = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
        Response = M("leangrpo.v1.GetStatusResponse")
        learner = self.host.current
        if learner is None:
            return Response(model=self.host.base_model, rss_bytes=rss)
        params = list(learner.adapter.parameters())
        trainable = sum(p.numel() for p in params)
        base_tensors = list(learner.model.weights.values())
        tensor_bytes = sum(t.numel() * t.element_size() for t in base_tensors + params)
        lora = learner.adapter.config
        response = Response(
            model=self.host.base_model,
            backend=f"torch-{learner.model.device.type}",
            step=learner.step,
            adapter_version=learner.adapter_version,
            algorithm=learner.algorithm,
            trainable_parameters=trainable,
            total_parameters=learner.model.parameter_count() + trainable,
            tensors=len(base_tensors) + len(params),
            tensor_bytes=tensor_bytes,
            rss_bytes=rss,
        )
        response.lora.rank, response.lora.alpha, response.lora.use_rslora, response.lora.dropout = lora.rank, lora.alpha, lora.use_rslora, lora.dropout
        response.lora.target_modules.extend(lora.target_modules)
        vocabulary = learner.vocabulary
        if vocabulary is not None:
            r = response.reasoning_vocabulary
            r.standard_size, r.reasoning_size, r.map_sha256 = vocabulary.standard_size, vocabulary.reasoning_size, vocabulary.map.sha256
            r.start_marker, r.end_marker = vocabulary.markers.start, vocabulary.markers.end
            r.start_marker_ids.extend(vocabulary.markers.start_ids)
            r.end_marker_ids.extend(vocabulary.markers.end_ids)
        return response

    def list_algorithms(self, request, context):
        response = M("leangrpo.v1.ListAlgorithmsResponse")()
        for algorithm in ALGORITHMS:
            info = response.algorithms.add(name=algorithm.name, title=algorithm.title, summary=algorithm.summary)
            for p in algorithm.parameters:
                info.params.add(
                    name=p.name,
                    type=p.type,
                    default_value=js_json(p.default),
                    description=p.description,
                    allowed_values=list(p.allowed or []),
                    aliases=list(p.aliases),
                )
        return response

    # ---- wiring --------------------------------------------------------------------------
    def handler(self) -> grpc.GenericRpcHandler:
        def unary(fn, request, response):
            return grpc.unary_unary_rpc_method_handler(fn, M(request).FromString, M(response).SerializeToString)

        return grpc.method_handlers_generic_handler(
            SERVICE,
            {
                "TrainStep": grpc.stream_unary_rpc_method_handler(
                    self.train_step, M("leangrpo.v1.TrainStepRequest").FromString, M("leangrpo.v1.TrainStepResponse").SerializeToString
                ),
                "ComputeLogprobs": unary(self.compute_logprobs, "leangrpo.v1.ComputeLogprobsRequest", "leangrpo.v1.ComputeLogprobsResponse"),
                "ExportAdapter": grpc.unary_stream_rpc_method_handler(
                    self.export_adapter,
                    M("leangrpo.v1.ExportAdapterRequest").FromString,
                    M("leangrpo.v1.ExportAdapterResponse").SerializeToString,
                ),
                "SaveCheckpoint": unary(self.save_checkpoint, "leangrpo.v1.SaveCheckpointRequest", "leangrpo.v1.SaveCheckpointResponse"),
                "LoadCheckpoint": unary(self.load_checkpoint, "leangrpo.v1.LoadCheckpointRequest", "leangrpo.v1.LoadCheckpointResponse"),
                "GetStatus": unary(self.get_status, "leangrpo.v1.GetStatusRequest", "leangrpo.v1.GetStatusResponse"),
                "ListAlgorithms": unary(self.list_algorithms, "leangrpo.v1.ListAlgorithmsRequest", "leangrpo.v1.ListAlgorithmsResponse"),
            },
        )
