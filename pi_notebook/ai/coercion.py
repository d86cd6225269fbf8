"""Converting a tool call's arguments towards the tool's JSON schema, as Pi does before validating.

:func:`coerce` mirrors TypeBox's ``Value.Convert`` as Pi's ``validateToolArguments`` uses it:
``"5"`` -> ``5`` for a number, ``7`` -> ``"7"`` for a string, ``"true"`` -> ``True``, ``2.5``
-> ``2`` for an integer, ``"null"`` -> ``None``; through ``$ref``, ``allOf``, ``anyOf``/``oneOf``
(the first branch the value converts into, unless a branch already accepts it), ``const``,
``enum``, object properties and array items. Whatever cannot be converted is left for the
validator to report. Hand-written because no JSON Schema library converts values.

This module must never mutate its input (containers are rebuilt) and never validate: whether a
union branch accepts a value, and where a ``$ref`` leads, it asks the :class:`SchemaOracle`.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Protocol, TypeGuard

__all__ = ["SchemaOracle", "coerce", "is_json_type", "js_number", "json_equal"]

MAX_DEPTH = 200
"""Schema/value nesting beyond this is not followed (guards against ``$ref`` cycles)."""


class SchemaOracle(Protocol):
    def resolve(self, ref: str) -> Any:
        """The schema a ``$ref`` points to, or ``None`` if it points nowhere."""
        ...

    def is_valid(self, schema: Any, value: Any) -> bool:
        """Whether ``value`` is valid against ``schema``, a part of the tool's schema."""
        ...


# --------------------------------------------------------------------------------------------
# JSON helpers


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def js_number(value: float) -> str:
    """A number as JavaScript's ``String(n)`` writes it (``7.0`` -> ``7``, ``1e-7`` -> ``1e-7``)."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if 1e-6 <= abs(value) < 1e21:
        return format(Decimal(text), "f")
    mantissa, _, exponent = text.partition("e")
    power = int(exponent)
    return f"{mantissa}e{'+' if power >= 0 else '-'}{abs(power)}"


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``, objects compare by content."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) or _is_number(b):
        return _is_number(a) and _is_number(b) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(json_equal(value, b[key]) for key, value in a.items())
        )
    if isinstance(a, (list, tuple)):
        return (
            isinstance(b, (list, tuple))
            and len(a) == len(b)
            and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    return type(a) is type(b) and bool(a == b)


def is_json_type(type_name: Any, value: Any) -> bool:
    """Whether ``value`` is of the JSON Schema type ``type_name`` (numbers must be finite)."""
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "number":
        return _is_number(value) and math.isfinite(value)
    if type_name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (
            isinstance(value, float) and math.isfinite(value) and value.is_integer()
        )
    if type_name == "boolean":
        return isinstance(value, bool)
    if type_name == "object":
        return isinstance(value, dict)
    if type_name == "array":
        return isinstance(value, (list, tuple))
    if type_name == "null":
        return value is None
    return True  # an unknown type name constrains nothing


# --------------------------------------------------------------------------------------------
# Conversions

_NUMERIC = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")
_INTEGRAL = re.compile(r"\s*[+-]?\d+\s*")


def _to_number(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and _NUMERIC.fullmatch(value):
        if _INTEGRAL.fullmatch(value):
            return int(value)
        number = float(value)
        return number if math.isfinite(number) else value
    return value


def _to_integer(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return math.trunc(value) if math.isfinite(value) else value
    if isinstance(value, str) and _NUMERIC.fullmatch(value):
        if _INTEGRAL.fullmatch(value):
            return int(value)
        number = float(value)
        return math.trunc(number) if math.isfinite(number) else value
    return value


def _to_boolean(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in ("true", "1"):
            return True
        if lowered in ("false", "0"):
            return False
    elif _is_number(value):
        if value == 1:
            return True
        if value == 0:
            return False
    return value


def _to_string(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if _is_number(value):
        return js_number(value)
    if value is None:
        return "null"
    return value


def _to_null(value: Any) -> Any:
    if isinstance(value, str) and value.lower() == "null":
        return None
    return value


_CONVERTERS = {
    "number": _to_number,
    "integer": _to_integer,
    "boolean": _to_boolean,
    "string": _to_string,
    "null": _to_null,
}


def _to_type(type_name: Any, value: Any) -> Any:
    converter = _CONVERTERS.get(type_name) if isinstance(type_name, str) else None
    return converter(value) if converter is not None else value


def _to_like(target: Any, value: Any) -> Any:
    """Convert ``value`` to the JSON type of ``target`` (for ``const``/``enum``)."""
    if isinstance(target, bool):
        return _to_boolean(value)
    if isinstance(target, int):
        return _to_integer(value)
    if isinstance(target, float):
        return _to_number(value)
    if isinstance(target, str):
        return _to_string(value)
    if target is None:
        return _to_null(value)
    return value


# --------------------------------------------------------------------------------------------
# Walking the schema


def _coerce(schema: Any, value: Any, oracle: SchemaOracle, depth: int) -> Any:
    """Return ``value`` converted towards ``schema``; containers are rebuilt, never mutated."""
    if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str):
        value = _coerce(oracle.resolve(ref), value, oracle, depth + 1)
    all_of = schema.get("allOf")
    if isinstance(all_of, list):
        for sub in all_of:
            value = _coerce(sub, value, oracle, depth + 1)
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list) and branches:
            value = _coerce_union(branches, value, oracle, depth + 1)

    types = schema.get("type")
    if isinstance(types, str):
        value = _to_type(types, value)
    elif isinstance(types, list) and not any(is_json_type(t, value) for t in types):
        for type_name in types:
            converted = _to_type(type_name, value)
            if is_json_type(type_name, converted):
                value = converted
                break

    if "const" in schema and not json_equal(value, schema["const"]):
        converted = _to_like(schema["const"], value)
        if json_equal(converted, schema["const"]):
            value = converted
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(json_equal(value, member) for member in enum):
        for member in enum:
            converted = _to_like(member, value)
            if json_equal(converted, member):
                value = converted
                break

    if isinstance(value, dict):
        value = _coerce_object(schema, value, oracle, depth)
    elif isinstance(value, list):
        value = _coerce_array(schema, value, oracle, depth)
    return value


def _coerce_object(
    schema: Mapping[str, Any], value: dict[str, Any], oracle: SchemaOracle, depth: int
) -> dict[str, Any]:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        properties = {}
    extra = schema.get("additionalProperties")
    if not properties and not isinstance(extra, Mapping):
        return value
    result: dict[str, Any] = {}
    for key, item in value.items():
        if key in properties:
            result[key] = _coerce(properties[key], item, oracle, depth + 1)
        elif isinstance(extra, Mapping):
            result[key] = _coerce(extra, item, oracle, depth + 1)
        else:
            result[key] = item
    return result


def _coerce_array(
    schema: Mapping[str, Any], value: list[Any], oracle: SchemaOracle, depth: int
) -> list[Any]:
    prefix = schema.get("prefixItems")
    items = schema.get("items")
    if isinstance(items, list):  # draft-04 tuple form
        prefix, items = items, None
    if not isinstance(prefix, list):
        prefix = []
    if not prefix and not isinstance(items, Mapping):
        return value
    result: list[Any] = []
    for index, item in enumerate(value):
        sub = prefix[index] if index < len(prefix) else items
        result.append(_coerce(sub, item, oracle, depth + 1))
    return result


def _coerce_union(branches: list[Any], value: Any, oracle: SchemaOracle, depth: int) -> Any:
    # A value some branch already accepts is left alone ("5" stays a string for
    # ``string | number``); otherwise the first branch it converts into wins.
    if any(oracle.is_valid(branch, value) for branch in branches):
        return value
    for branch in branches:
        converted = _coerce(branch, value, oracle, depth)
        if oracle.is_valid(branch, converted):
            return converted
    return value


def coerce(schema: Mapping[str, Any], arguments: Any, oracle: SchemaOracle) -> Any:
    """``arguments`` converted towards the JSON ``schema`` (a new value; input untouched)."""
    return _coerce(schema, copy.deepcopy(arguments), oracle, 0)
