"""The names of what a learner writes, as packages/adapter-files/src/artifact-names.ts builds them.

An adapter is named by its policy version ("policy-v3"), a checkpoint by its step ("step-10");
the learner conformance suite checks that both learners give the same names.
"""


def adapter_name(version: int) -> str:
    """The name of adapter version `version` ("policy-v12")."""
    if version < 0:
        raise ValueError(f"adapter version {version} is not a non-negative integer")
    return f"policy-v{version}"


def checkpoint_name(step: int) -> str:
    """The name of the checkpoint saved after optimizer step `step` ("step-10")."""
    if step < 0:
        raise ValueError(f"checkpoint step {step} is not a non-negative integer")
    return f"step-{step}"


# Folder of the PEFT adapter inside a checkpoint (step-<N>/adapter/).
CHECKPOINT_ADAPTER_DIR = "adapter"
