"""The algorithm code names the header's fields as TrainStepHeader has them (`algorithm`,
`algorithm_config.beta`); in a TrainStep request they sit under `header`, and a message names
a field by its path in the request, as the TS learner's (tests/conformance/learner/bad-input.spec.ts)."""

from ..errors import AlgorithmConfigError


def under_header(error: Exception) -> Exception:
    """`error` with its field path rooted at the request: "header.algorithm_config.beta = ..."."""
    if not isinstance(error, AlgorithmConfigError) or str(error).startswith("header."):
        return error
    return AlgorithmConfigError(f"header.{error}")
