"""Checking a tool call's arguments against the tool's parameter schema before the tool runs.

:func:`validate_tool_arguments` mirrors Pi's ``validateToolArguments``: it coerces the
arguments the way TypeBox's ``Value.Convert`` would (``"5"`` -> ``5`` for a number, ``7`` ->
``"7"`` for a string, ...), then validates them, and on failure raises
:class:`ToolArgumentsError` whose text lists every problem followed by the arguments the model
sent, so the model can correct itself.

``tool.parameters`` is either a JSON-schema dict (checked by the compact validator below, which
covers the subset tool schemas use) or a pydantic model class (coerced with its JSON schema,
then ``model_validate``-d; the tool receives the model instance).

This module must never mutate ``tool_call.arguments`` (it works on a deep copy), never run
tool code, and never touch the network: it is pure data in, data (or an error) out.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
import weakref
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Protocol, TypeGuard

from pydantic import BaseModel, PydanticUserError, ValidationError

__all__ = ["ToolArgumentsError", "coerce_arguments", "validate_tool_arguments"]

Path = tuple[str | int, ...]
"""Where in the arguments a problem is: property names and array indices."""

_MAX_DEPTH = 200
"""Schema/value nesting beyond this is not followed (guards against ``$ref`` cycles)."""


class ToolLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def parameters(self) -> Any: ...


class ToolCallLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> Any: ...


class ToolArgumentsError(ValueError):
    """A tool call's arguments do not match the tool's schema.

    ``str()`` is the text Pi sends back to the model as the tool result::

        Validation failed for tool "<name>":
          - <path>: <message>

        Received arguments:
        <the arguments as the model sent them, indented JSON>
    """

    def __init__(self, tool_name: str, errors: list[tuple[str, str]], arguments: Any) -> None:
        self.tool_name = tool_name
        self.errors = errors
        """``(dotted path, message)`` pairs, in the order they were found."""
        self.arguments = arguments
        lines = "\n".join(f"  - {path}: {message}" for path, message in errors)
        received = json.dumps(arguments, indent=2, default=str)
        super().__init__(
            f'Validation failed for tool "{tool_name}":\n'
            f"{lines or 'Unknown validation error'}\n\n"
            f"Received arguments:\n{received}"
        )


def format_path(path: Path) -> str:
    """``("point", "x")`` -> ``point.x``; the empty path is ``root``."""
    return ".".join(str(part) for part in path) if path else "root"


# --------------------------------------------------------------------------------------------
# JSON helpers


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _js_number(value: float) -> str:
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


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``, objects compare by content."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) or _is_number(b):
        return _is_number(a) and _is_number(b) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_json_equal(value, b[key]) for key, value in a.items())
        )
    if isinstance(a, (list, tuple)):
        return (
            isinstance(b, (list, tuple))
            and len(a) == len(b)
            and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    return type(a) is type(b) and bool(a == b)


def _is_type(type_name: Any, value: Any) -> bool:
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


def _resolve_ref(root: Mapping[str, Any], ref: str) -> Any:
    """Follow a local ``$ref`` (``#/$defs/Point``); ``None`` if it cannot be followed."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    for raw in ref[1:].split("/"):
        if not raw:
            continue
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


# --------------------------------------------------------------------------------------------
# Coercion (TypeBox ``Value.Convert``-like)

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
        return _js_number(value)
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


def _coerce(schema: Any, value: Any, root: Mapping[str, Any], depth: int) -> Any:
    """Return ``value`` converted towards ``schema``; containers are rebuilt, never mutated."""
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str):
        value = _coerce(_resolve_ref(root, ref), value, root, depth + 1)
    all_of = schema.get("allOf")
    if isinstance(all_of, list):
        for sub in all_of:
            value = _coerce(sub, value, root, depth + 1)
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list) and branches:
            value = _coerce_union(branches, value, root, depth + 1)

    types = schema.get("type")
    if isinstance(types, str):
        value = _to_type(types, value)
    elif isinstance(types, list) and not any(_is_type(t, value) for t in types):
        for type_name in types:
            converted = _to_type(type_name, value)
            if _is_type(type_name, converted):
                value = converted
                break

    if "const" in schema and not _json_equal(value, schema["const"]):
        converted = _to_like(schema["const"], value)
        if _json_equal(converted, schema["const"]):
            value = converted
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(_json_equal(value, member) for member in enum):
        for member in enum:
            converted = _to_like(member, value)
            if _json_equal(converted, member):
                value = converted
                break

    if isinstance(value, dict):
        value = _coerce_object(schema, value, root, depth)
    elif isinstance(value, list):
        value = _coerce_array(schema, value, root, depth)
    return value


def _coerce_object(
    schema: Mapping[str, Any],
    value: dict[str, Any],
    root: Mapping[str, Any],
    depth: int,
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
            result[key] = _coerce(properties[key], item, root, depth + 1)
        elif isinstance(extra, Mapping):
            result[key] = _coerce(extra, item, root, depth + 1)
        else:
            result[key] = item
    return result


def _coerce_array(
    schema: Mapping[str, Any], value: list[Any], root: Mapping[str, Any], depth: int
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
        result.append(_coerce(sub, item, root, depth + 1))
    return result


def _coerce_union(branches: list[Any], value: Any, root: Mapping[str, Any], depth: int) -> Any:
    # A value some branch already accepts is left alone ("5" stays a string for
    # ``string | number``); otherwise the first branch it converts into wins.
    if any(_is_valid(branch, value, root, depth) for branch in branches):
        return value
    for branch in branches:
        converted = _coerce(branch, value, root, depth)
        if _is_valid(branch, converted, root, depth):
            return converted
    return value


def coerce_arguments(schema: Mapping[str, Any], arguments: Any) -> Any:
    """``arguments`` converted towards the JSON ``schema`` (a new value; input untouched)."""
    return _coerce(schema, copy.deepcopy(arguments), schema, 0)


# --------------------------------------------------------------------------------------------
# Validation (the subset of JSON Schema tool parameters use)

Errors = list[tuple[Path, str]]


def _is_valid(schema: Any, value: Any, root: Mapping[str, Any], depth: int = 0) -> bool:
    errors: Errors = []
    _check(schema, value, (), root, errors, depth)
    return not errors


def _check(
    schema: Any,
    value: Any,
    path: Path,
    root: Mapping[str, Any],
    errors: Errors,
    depth: int,
) -> None:
    if schema is False:
        errors.append((path, "boolean schema is false"))
        return
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return

    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = _resolve_ref(root, ref)
        if target is not None:
            _check(target, value, path, root, errors, depth + 1)

    types = schema.get("type")
    if isinstance(types, (str, list)):
        names = [types] if isinstance(types, str) else types
        if not any(_is_type(name, value) for name in names):
            errors.append((path, f"must be {','.join(str(name) for name in names)}"))

    if "const" in schema and not _json_equal(value, schema["const"]):
        errors.append((path, "must be equal to constant"))
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(_json_equal(value, member) for member in enum):
        errors.append((path, "must be equal to one of the allowed values"))

    if _is_number(value):
        _check_number(schema, value, path, errors)
    elif isinstance(value, str):
        _check_string(schema, value, path, errors)
    elif isinstance(value, dict):
        _check_object(schema, value, path, root, errors, depth)
    elif isinstance(value, (list, tuple)):
        _check_array(schema, list(value), path, root, errors, depth)

    _check_combinators(schema, value, path, root, errors, depth)


def _check_number(schema: Mapping[str, Any], value: float, path: Path, errors: Errors) -> None:
    minimum, maximum = schema.get("minimum"), schema.get("maximum")
    exclusive_min, exclusive_max = (
        schema.get("exclusiveMinimum"),
        schema.get("exclusiveMaximum"),
    )
    if exclusive_min is True and _is_number(minimum):  # draft-04 boolean form
        exclusive_min, minimum = minimum, None
    if exclusive_max is True and _is_number(maximum):
        exclusive_max, maximum = maximum, None
    if _is_number(minimum) and value < minimum:
        errors.append((path, f"must be >= {_js_number(minimum)}"))
    if _is_number(maximum) and value > maximum:
        errors.append((path, f"must be <= {_js_number(maximum)}"))
    if _is_number(exclusive_min) and value <= exclusive_min:
        errors.append((path, f"must be > {_js_number(exclusive_min)}"))
    if _is_number(exclusive_max) and value >= exclusive_max:
        errors.append((path, f"must be < {_js_number(exclusive_max)}"))
    multiple = schema.get("multipleOf")
    if _is_number(multiple) and multiple > 0 and math.isfinite(value):
        quotient = value / multiple
        if abs(quotient - round(quotient)) > 1e-9 * max(1.0, abs(quotient)):
            errors.append((path, f"must be multiple of {_js_number(multiple)}"))


def _check_string(schema: Mapping[str, Any], value: str, path: Path, errors: Errors) -> None:
    min_length, max_length = schema.get("minLength"), schema.get("maxLength")
    if _is_number(min_length) and len(value) < min_length:
        errors.append((path, f"must NOT have fewer than {_js_number(min_length)} characters"))
    if _is_number(max_length) and len(value) > max_length:
        errors.append((path, f"must NOT have more than {_js_number(max_length)} characters"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        compiled = _compiled(pattern)
        if compiled is not None and compiled.search(value) is None:
            errors.append((path, f'must match pattern "{pattern}"'))


def _check_object(
    schema: Mapping[str, Any],
    value: dict[str, Any],
    path: Path,
    root: Mapping[str, Any],
    errors: Errors,
    depth: int,
) -> None:
    required = schema.get("required")
    if isinstance(required, list):
        for name in required:
            if isinstance(name, str) and name not in value:
                errors.append(((*path, name), f"must have required property '{name}'"))

    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        properties = {}
    patterns = schema.get("patternProperties")
    if not isinstance(patterns, Mapping):
        patterns = {}
    extra = schema.get("additionalProperties")

    for key, item in value.items():
        matched = key in properties
        if matched:
            _check(properties[key], item, (*path, key), root, errors, depth + 1)
        for pattern, sub in patterns.items():
            compiled = _compiled(pattern)
            if compiled is not None and compiled.search(key) is not None:
                matched = True
                _check(sub, item, (*path, key), root, errors, depth + 1)
        if matched:
            continue
        if extra is False:
            errors.append((path, "must NOT have additional properties"))
        elif isinstance(extra, Mapping):
            _check(extra, item, (*path, key), root, errors, depth + 1)


def _check_array(
    schema: Mapping[str, Any],
    value: list[Any],
    path: Path,
    root: Mapping[str, Any],
    errors: Errors,
    depth: int,
) -> None:
    min_items, max_items = schema.get("minItems"), schema.get("maxItems")
    if _is_number(min_items) and len(value) < min_items:
        errors.append((path, f"must NOT have fewer than {_js_number(min_items)} items"))
    if _is_number(max_items) and len(value) > max_items:
        errors.append((path, f"must NOT have more than {_js_number(max_items)} items"))

    prefix = schema.get("prefixItems")
    items = schema.get("items")
    if isinstance(items, list):  # draft-04 tuple form
        prefix, items = items, schema.get("additionalItems")
    if not isinstance(prefix, list):
        prefix = []
    if items is False and len(value) > len(prefix):
        errors.append((path, f"must NOT have more than {len(prefix)} items"))
    for index, item in enumerate(value):
        sub = prefix[index] if index < len(prefix) else items
        if isinstance(sub, Mapping):
            _check(sub, item, (*path, index), root, errors, depth + 1)

    if schema.get("uniqueItems") is True:
        for later in range(len(value)):
            for earlier in range(later):
                if _json_equal(value[earlier], value[later]):
                    message = (
                        "must NOT have duplicate items "
                        f"(items ## {earlier} and {later} are identical)"
                    )
                    errors.append((path, message))
                    return


def _check_combinators(
    schema: Mapping[str, Any],
    value: Any,
    path: Path,
    root: Mapping[str, Any],
    errors: Errors,
    depth: int,
) -> None:
    all_of = schema.get("allOf")
    if isinstance(all_of, list):
        for sub in all_of:
            _check(sub, value, path, root, errors, depth + 1)

    any_of = schema.get("anyOf")
    if isinstance(any_of, list) and any_of:
        branch_errors: Errors = []
        for sub in any_of:
            attempt: Errors = []
            _check(sub, value, path, root, attempt, depth + 1)
            if not attempt:
                break
            branch_errors.extend(attempt)
        else:
            errors.extend(branch_errors)
            errors.append((path, "must match a schema in anyOf"))

    one_of = schema.get("oneOf")
    if isinstance(one_of, list) and one_of:
        branch_errors = []
        passing = 0
        for sub in one_of:
            attempt = []
            _check(sub, value, path, root, attempt, depth + 1)
            if attempt:
                branch_errors.extend(attempt)
            else:
                passing += 1
        if passing == 0:
            errors.extend(branch_errors)
        if passing != 1:
            errors.append((path, "must match exactly one schema in oneOf"))

    negated = schema.get("not")
    if isinstance(negated, Mapping) and _is_valid(negated, value, root, depth + 1):
        errors.append((path, "must NOT be valid"))


def schema_errors(schema: Mapping[str, Any], value: Any) -> list[tuple[str, str]]:
    """Every way ``value`` fails the JSON ``schema``, as ``(dotted path, message)`` pairs."""
    errors: Errors = []
    _check(schema, value, (), schema, errors, 0)
    return [(format_path(path), message) for path, message in errors]


# --------------------------------------------------------------------------------------------
# Tool arguments

_model_schemas: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]] = (
    weakref.WeakKeyDictionary()
)


def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema, computed once per model class (``{}`` if it has none)."""
    schema = _model_schemas.get(model)
    if schema is None:
        try:
            schema = model.model_json_schema()
        except PydanticUserError:  # a type with no JSON schema: pydantic does all the work
            schema = {}
        _model_schemas[model] = schema
    return schema


def _is_model_class(parameters: Any) -> bool:
    return isinstance(parameters, type) and issubclass(parameters, BaseModel)


def validate_tool_arguments(tool: ToolLike, tool_call: ToolCallLike) -> Any:
    """Coerce and validate ``tool_call.arguments`` against ``tool.parameters``.

    Returns the coerced arguments dict (JSON-schema parameters) or a validated model
    instance (pydantic parameters). Raises :class:`ToolArgumentsError` when they do not fit.
    ``tool_call.arguments`` itself is never modified.
    """
    original = tool_call.arguments
    parameters = tool.parameters
    name = tool_call.name or tool.name

    if _is_model_class(parameters):
        model: type[BaseModel] = parameters
        schema = _model_schema(model)
        coerced = coerce_arguments(schema, original)
        try:
            return model.model_validate(coerced)
        except ValidationError as exc:
            problems = [
                (format_path(tuple(error["loc"])), error["msg"])
                for error in exc.errors(include_url=False)
            ]
            raise ToolArgumentsError(name, problems, original) from exc

    if not isinstance(parameters, Mapping):
        return copy.deepcopy(original)
    coerced = coerce_arguments(parameters, original)
    problems = schema_errors(parameters, coerced)
    if problems:
        raise ToolArgumentsError(name, problems, original)
    return coerced
