"""Errors whose messages go to the caller unchanged; rpc/status_codes.py maps them to gRPC codes."""


class LearnerError(Exception):
    """Base of the learner's caller-facing errors."""


class ModelError(LearnerError):
    """A model directory or config.json the learner cannot run (INVALID_ARGUMENT / FAILED_PRECONDITION)."""


class AdapterError(LearnerError):
    """A PEFT adapter the learner cannot load."""


class AlgorithmConfigError(LearnerError):
    """A bad algorithm name or algorithm_config value; the message names the key and what is accepted."""


class SampleError(LearnerError):
    """A training batch the learner refuses; the message names the sample and the field."""


class CheckpointError(LearnerError):
    """A checkpoint directory that cannot be read."""


class StepOrderError(LearnerError):
    """The caller's step does not follow the learner's (FAILED_PRECONDITION)."""


class UnknownVersionError(LearnerError):
    """An adapter version that is not (or no longer) held (NOT_FOUND)."""
