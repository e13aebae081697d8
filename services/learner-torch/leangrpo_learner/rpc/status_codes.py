"""Maps the learner's errors to gRPC status codes. Messages already name what was wrong and what
is accepted; they pass through unchanged. Anything else is INTERNAL, without a stack trace."""
import logging

import grpc

from ..path_root import PathError
from ..errors import (
    AdapterError,
    AlgorithmConfigError,
    CheckpointError,
    ModelError,
    SampleError,
    StepOrderError,
    UnknownVersionError,
)

CODES = [
    (AlgorithmConfigError, grpc.StatusCode.INVALID_ARGUMENT),
    (SampleError, grpc.StatusCode.INVALID_ARGUMENT),
    (ModelError, grpc.StatusCode.INVALID_ARGUMENT),
    (AdapterError, grpc.StatusCode.INVALID_ARGUMENT),
    (CheckpointError, grpc.StatusCode.INVALID_ARGUMENT),
    (StepOrderError, grpc.StatusCode.FAILED_PRECONDITION),
    (UnknownVersionError, grpc.StatusCode.NOT_FOUND),
]

log = logging.getLogger("leangrpo_learner")


class RpcAbort(Exception):
    """An error already carrying its gRPC code."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(message)
        self.code = code


def abort_with(context, error: BaseException):
    if isinstance(error, RpcAbort):
        context.abort(error.code, str(error))
    if isinstance(error, PathError):
        codes = {"missing": grpc.StatusCode.NOT_FOUND, "too_large": grpc.StatusCode.RESOURCE_EXHAUSTED}
        context.abort(codes.get(error.code, grpc.StatusCode.INVALID_ARGUMENT), str(error))
    for kind, code in CODES:
        if isinstance(error, kind):
            context.abort(code, str(error))
    log.exception("internal error")
    context.abort(grpc.StatusCode.INTERNAL, f"internal error: {type(error).__name__}")
