"""The algorithms by name, as TrainStepHeader.algorithm names them."""
from ..errors import AlgorithmConfigError
from .algorithm import Algorithm
from .cispo import cispo
from .dapo import dapo
from .dgpo import dgpo
from .drgrpo import drgrpo
from .grpo import grpo
from .gspo import gspo
from .sapo import sapo

ALGORITHMS: list[Algorithm] = [grpo, drgrpo, dapo, gspo, dgpo, cispo, sapo]
ALGORITHM_NAMES = [a.name for a in ALGORITHMS]


def algorithm_named(name: str) -> Algorithm:
    """Case-insensitive, as the seed's factory; unknown names list the known ones."""
    for algorithm in ALGORITHMS:
        if algorithm.name == name.strip().lower():
            return algorithm
    raise AlgorithmConfigError(f"algorithm {js_quote(name)} is not known; accepted: {', '.join(ALGORITHM_NAMES)}")


def js_quote(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)
