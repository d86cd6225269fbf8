"""Checking a tool call's arguments against the tool's parameter schema before the tool runs.

:func:`validate_tool_arguments` mirrors Pi's ``validateToolArguments``: it coerces the
arguments the way TypeBox's ``Value.Convert`` would (``"5"`` -> ``5`` for a number, ``7`` ->
``"7"`` for a string, ...), then validates them, and on failure raises
:class:`ToolArgumentsError` whose text lists every problem followed by the arguments the model
sent, so the model can correct itself.

``tool.parameters`` is either a JSON-schema dict (coerced by :mod:`.coercion`, then checked by
``jsonschema`` through :mod:`.json_schema`: every keyword of Draft 2020-12, or of the draft the
schema declares, compiled once per schema) or a pydantic model class (coerced with its JSON
schema, then ``model_validate``-d; the tool receives the model instance).

This module must never mutate ``tool_call.arguments`` (it works on a deep copy), never run
tool code, and never touch the network: it is pure data in, data (or an error) out.
"""

from __future__ import annotations

import copy
import json
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, PydanticUserError, ValidationError

from .coercion import coerce

if TYPE_CHECKING:
    from .json_schema import CompiledSchema, Path

__all__ = ["ToolArgumentsError", "coerce_arguments", "schema_errors", "validate_tool_arguments"]


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
# JSON schemas


def compile_schema(schema: Mapping[str, Any]) -> CompiledSchema:
    """:func:`.json_schema.compile_schema`, imported on the first schema: ``jsonschema`` with
    its format extras costs about a second of CPU to import (``rfc3987_syntax`` compiles a
    grammar), which a notebook's first cell must not pay when no tool is ever called."""
    from .json_schema import compile_schema as compile_now

    return compile_now(schema)


def coerce_arguments(schema: Mapping[str, Any], arguments: Any) -> Any:
    """``arguments`` converted towards the JSON ``schema`` (a new value; input untouched)."""
    compiled = compile_schema(schema)
    return coerce(compiled.schema, arguments, compiled)


def schema_errors(schema: Mapping[str, Any], value: Any) -> list[tuple[str, str]]:
    """Every way ``value`` fails the JSON ``schema``, as ``(dotted path, message)`` pairs."""
    return [(format_path(path), message) for path, message in compile_schema(schema).errors(value)]


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
    compiled = compile_schema(parameters)
    coerced = coerce(compiled.schema, original, compiled)
    problems = [(format_path(path), message) for path, message in compiled.errors(coerced)]
    if problems:
        raise ToolArgumentsError(name, problems, original)
    return coerced
