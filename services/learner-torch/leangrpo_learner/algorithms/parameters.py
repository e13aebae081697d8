"""algorithm_config keys: types, defaults, ranges, descriptions, and the validation that turns a
caller's JSON object into values (one table drives validation and ListAlgorithms)."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from ..errors import AlgorithmConfigError


@dataclass(frozen=True)
class ParameterSpec:
    name: str
    type: str  # "number" | "integer" | "boolean" | "enum"
    default: object
    description: str
    allowed: tuple[str, ...] | None = None
    min: float | None = None
    max: float | None = None
    above: float | None = None
    nullable: bool = False
    aliases: tuple[str, ...] = field(default_factory=tuple)


def js_number(value) -> str:
    """A number as JavaScript's JSON.stringify writes it (1.0 → 1, 0.0003 → 0.0003)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, float):
        text = repr(value)
        if "e" in text:  # JS writes 1e-7 as 1e-7 and 1e+21 as 1e+21
            mantissa, exponent = text.split("e")
            sign = "-" if exponent.startswith("-") else "+"
            return f"{mantissa}e{sign}{int(exponent.lstrip('+-'))}"
        return text
    return str(value)


def js_json(value) -> str:
    """JSON.stringify of a scalar."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number(value)
    return json.dumps(value, ensure_ascii=False)


def describe_accepted(spec: ParameterSpec) -> str:
    range_parts = [
        f"> {js_number(spec.above)}" if spec.above is not None else "",
        f">= {js_number(spec.min)}" if spec.min is not None else "",
        f"<= {js_number(spec.max)}" if spec.max is not None else "",
    ]
    bounds = " and ".join(p for p in range_parts if p)
    if spec.type == "enum":
        base = "one of " + ", ".join(js_json(v) for v in spec.allowed)
    elif spec.type == "boolean":
        base = "true or false"
    else:
        base = ("an integer" if spec.type == "integer" else "a finite number") + (f" {bounds}" if bounds else "")
    return f"{base}, or null" if spec.nullable else base


def _check(algorithm: str, spec: ParameterSpec, value):
    def bad():
        return AlgorithmConfigError(f'algorithm_config.{spec.name} = {js_json(value)} is not accepted by "{algorithm}"; accepted: {describe_accepted(spec)}')

    if value is None:
        if spec.nullable:
            return None
        raise bad()
    if spec.type == "boolean":
        if not isinstance(value, bool):
            raise bad()
        return value
    if spec.type == "enum":
        if not isinstance(value, str) or value not in spec.allowed:
            raise bad()
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise bad()
    if spec.type == "integer" and not float(value).is_integer():
        raise bad()
    if spec.min is not None and value < spec.min:
        raise bad()
    if spec.max is not None and value > spec.max:
        raise bad()
    if spec.above is not None and not value > spec.above:
        raise bad()
    return int(value) if spec.type == "integer" else float(value)


def resolve_parameters(algorithm: str, specs: list[ParameterSpec], config: dict) -> dict:
    """Each parameter's value: the caller's (checked) or the default. Unknown keys list the valid ones."""
    by_name: dict[str, ParameterSpec] = {}
    for spec in specs:
        by_name[spec.name] = spec
        for alias in spec.aliases:
            by_name[alias] = spec
    values = {spec.name: spec.default for spec in specs}
    seen: dict[str, str] = {}
    for key, value in config.items():
        spec = by_name.get(key)
        if spec is None:
            raise AlgorithmConfigError(f'algorithm_config.{key} is not a key of "{algorithm}"; valid keys: {", ".join(s.name for s in specs)}')
        if spec.name in seen:
            raise AlgorithmConfigError(f'algorithm_config sets "{spec.name}" twice (as "{seen[spec.name]}" and "{key}"); give it once')
        seen[spec.name] = key
        values[spec.name] = _check(algorithm, spec, value)
    return values
