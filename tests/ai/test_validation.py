"""Tests for pi_notebook.ai.validation (tool-call argument coercion and validation)."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from pi_notebook.ai import validation
from pi_notebook.ai.validation import (
    ToolArgumentsError,
    coerce_arguments,
    schema_errors,
    validate_tool_arguments,
)


@dataclass
class FakeTool:
    name: str
    parameters: Any


@dataclass
class FakeCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


def run(parameters: Any, arguments: dict[str, Any], name: str = "calc") -> Any:
    return validate_tool_arguments(FakeTool(name, parameters), FakeCall(name, arguments))


def failure(parameters: Any, arguments: dict[str, Any], name: str = "calc") -> ToolArgumentsError:
    with pytest.raises(ToolArgumentsError) as info:
        run(parameters, arguments, name)
    return info.value


def obj(
    properties: dict[str, Any], required: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    if required is not None:
        schema["required"] = required
    return schema


# --------------------------------------------------------------------------------------------
# Coercion


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        ({"type": "number"}, "5", 5),
        ({"type": "number"}, "2.5", 2.5),
        ({"type": "number"}, " -1e3 ", -1000.0),
        ({"type": "number"}, True, 1),
        ({"type": "number"}, 3, 3),
        ({"type": "integer"}, "3", 3),
        ({"type": "integer"}, 2.5, 2),
        ({"type": "integer"}, -2.5, -2),
        ({"type": "integer"}, "2.7", 2),
        ({"type": "integer"}, 4.0, 4),
        ({"type": "boolean"}, "true", True),
        ({"type": "boolean"}, "false", False),
        ({"type": "boolean"}, "TRUE", True),
        ({"type": "boolean"}, "1", True),
        ({"type": "boolean"}, 0, False),
        ({"type": "string"}, 7, "7"),
        ({"type": "string"}, 2.5, "2.5"),
        ({"type": "string"}, 7.0, "7"),
        ({"type": "string"}, True, "true"),
        ({"type": "string"}, None, "null"),
        ({"type": "null"}, "null", None),
        ({"type": ["integer", "null"]}, "4", 4),
        ({"type": ["string", "integer"]}, "4", "4"),  # already fits: left alone
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "4", 4),
        ({"anyOf": [{"type": "number"}, {"type": "string"}]}, "4", "4"),
        ({"oneOf": [{"type": "boolean"}, {"type": "array"}]}, "false", False),
        ({"enum": [1, 2, 3]}, "2", 2),
        ({"const": True}, "true", True),
        ({"type": "string", "enum": ["1", "2"]}, 1, "1"),
        ({"type": "number"}, "abc", "abc"),  # not convertible: validation reports it
        ({"type": "integer"}, "1e400", "1e400"),
    ],
)
def test_scalar_coercion(schema: dict[str, Any], value: Any, expected: Any) -> None:
    result = coerce_arguments(schema, value)
    assert result == expected
    assert type(result) is type(expected)


def test_nested_objects_and_arrays_follow_the_schema() -> None:
    schema = obj(
        {
            "point": obj({"x": {"type": "number"}, "y": {"type": "integer"}}),
            "tags": {"type": "array", "items": {"type": "string"}},
            "pairs": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "boolean"}]},
            "meta": {"type": "object", "additionalProperties": {"type": "number"}},
        }
    )
    args = {
        "point": {"x": "1.5", "y": "2", "z": "kept"},
        "tags": [1, True, None],
        "pairs": ["1", "true", "extra"],
        "meta": {"a": "1", "b": "2.5"},
        "other": "7",
    }
    assert run(schema, args) == {
        "point": {"x": 1.5, "y": 2, "z": "kept"},
        "tags": ["1", "true", "null"],
        "pairs": [1, True, "extra"],
        "meta": {"a": 1, "b": 2.5},
        "other": "7",
    }


def test_refs_into_defs_are_followed() -> None:
    schema = {
        "$defs": {"Point": obj({"x": {"type": "integer"}}, ["x"])},
        "type": "object",
        "properties": {
            "p": {"$ref": "#/$defs/Point"},
            "q": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]},
            "r": {"allOf": [{"$ref": "#/$defs/Point"}]},
        },
    }
    assert run(schema, {"p": {"x": "1"}, "q": {"x": 2.9}, "r": {"x": "3"}}) == {
        "p": {"x": 1},
        "q": {"x": 2},
        "r": {"x": 3},
    }
    err = failure(schema, {"p": {}, "q": None, "r": {"x": 1}})
    assert err.errors == [("p.x", "must have required property 'x'")]


def test_self_referencing_schema_terminates() -> None:
    schema = {
        "$defs": {"Node": obj({"v": {"type": "integer"}, "next": {"$ref": "#/$defs/Node"}})},
        "$ref": "#/$defs/Node",
    }
    args = {"v": "1", "next": {"v": "2", "next": {"v": 3.5}}}
    assert run(schema, args) == {"v": 1, "next": {"v": 2, "next": {"v": 3}}}
    loop = {"$ref": "#"}
    assert run(loop, {"a": 1}) == {"a": 1}


def test_extra_properties_are_allowed_unless_forbidden() -> None:
    schema = obj({"a": {"type": "integer"}})
    assert run(schema, {"a": 1, "b": "x"}) == {"a": 1, "b": "x"}
    strict = obj({"a": {"type": "integer"}}, additionalProperties=False)
    err = failure(strict, {"a": 1, "b": "x"})
    assert err.errors == [("root", "must NOT have additional properties")]


# --------------------------------------------------------------------------------------------
# Failures and the message the model sees


def test_missing_required_message_is_exact() -> None:
    schema = obj({"value": {"type": "number"}}, ["value"])
    err = failure(schema, {"other": 1})
    assert str(err) == (
        'Validation failed for tool "calc":\n'
        "  - value: must have required property 'value'\n"
        "\n"
        "Received arguments:\n"
        '{\n  "other": 1\n}'
    )
    assert isinstance(err, ValueError)
    assert err.tool_name == "calc"
    assert err.arguments == {"other": 1}


def test_several_failures_are_listed_in_order() -> None:
    schema = obj(
        {
            "value": {"type": "number"},
            "name": {"type": "string"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "point": obj({"x": {"type": "number"}, "y": {"type": "number"}}, ["x", "y"]),
        },
        ["value", "name"],
    )
    args = {"value": "abc", "name": {"n": 1}, "mode": "medium", "point": {"y": []}}
    err = failure(schema, args, name="plot")
    text = str(err)
    assert text.startswith(
        'Validation failed for tool "plot":\n'
        "  - value: must be number\n"
        "  - name: must be string\n"
        "  - mode: must be equal to one of the allowed values\n"
        "  - point.x: must have required property 'x'\n"
        "  - point.y: must be number\n"
        "\n"
        "Received arguments:\n"
    )
    assert text.endswith("Received arguments:\n" + json.dumps(args, indent=2))


def test_received_arguments_are_the_original_not_the_coerced() -> None:
    schema = obj({"a": {"type": "integer"}, "b": {"type": "string", "maxLength": 2}})
    err = failure(schema, {"a": "5", "b": 12345})
    assert err.errors == [("b", "must NOT have more than 2 characters")]
    assert str(err).endswith('Received arguments:\n{\n  "a": "5",\n  "b": 12345\n}')


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        ({"type": "integer"}, 1.5, "must be integer"),
        ({"type": "integer"}, "x", "must be integer"),
        ({"type": "boolean"}, "yes", "must be boolean"),
        ({"type": "object"}, [1], "must be object"),
        ({"type": "array"}, {"a": 1}, "must be array"),
        ({"type": "null"}, 0, "must be null"),
        ({"type": ["string", "null"]}, {}, "must be string,null"),
        ({"const": "x"}, "y", "must be equal to constant"),
        ({"enum": ["a", "b"]}, "c", "must be equal to one of the allowed values"),
        ({"enum": [1, 2]}, True, "must be equal to one of the allowed values"),
        ({"type": "number", "minimum": 0}, -1, "must be >= 0"),
        ({"type": "number", "maximum": 10}, 11, "must be <= 10"),
        ({"type": "number", "exclusiveMinimum": 0}, 0, "must be > 0"),
        ({"type": "number", "exclusiveMaximum": 1.5}, 1.5, "must be < 1.5"),
        ({"type": "number", "multipleOf": 5}, 7, "must be multiple of 5"),
        ({"type": "string", "minLength": 1}, "", "must NOT have fewer than 1 characters"),
        ({"type": "string", "maxLength": 3}, "abcd", "must NOT have more than 3 characters"),
        ({"type": "string", "pattern": "^[a-z]+$"}, "ab1", 'must match pattern "^[a-z]+$"'),
        ({"type": "array", "minItems": 2}, [1], "must NOT have fewer than 2 items"),
        ({"type": "array", "maxItems": 1}, [1, 2], "must NOT have more than 1 items"),
        (
            {"type": "array", "uniqueItems": True},
            [1, 2, 1],
            "must NOT have duplicate items (items ## 0 and 2 are identical)",
        ),
        ({"not": {"type": "string"}}, "s", "must NOT be valid"),
    ],
)
def test_keyword_messages(schema: dict[str, Any], value: Any, message: str) -> None:
    # Plain validation (no coercion): ``1.5`` would otherwise be truncated to ``1``.
    assert schema_errors(obj({"v": schema}), {"v": value})[-1] == ("v", message)


def test_keyword_message_in_the_error_text() -> None:
    err = failure(obj({"v": {"type": "string", "pattern": "^[a-z]+$"}}), {"v": "ab1"})
    assert '  - v: must match pattern "^[a-z]+$"\n' in str(err)


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "number", "minimum": 0, "maximum": 10}, 10),
        ({"type": "integer", "multipleOf": 0.5}, 3),
        ({"type": "number", "multipleOf": 0.1}, 0.3),
        ({"type": "string", "pattern": "b"}, "abc"),
        ({"type": "array", "uniqueItems": True}, [1, True, "1"]),
        ({"enum": [{"a": [1]}, 2]}, {"a": [1.0]}),
        ({"type": "integer"}, 10**30),
        ({"type": "array", "items": {"type": "integer"}}, []),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, 3),
        ({"allOf": [{"type": "integer"}, {"minimum": 1}]}, 2),
        (True, {"anything": 1}),
    ],
)
def test_valid_values_pass(schema: Any, value: Any) -> None:
    assert run(obj({"v": schema}), {"v": value}) == {"v": value}


def test_any_of_failure_lists_every_branch() -> None:
    schema = obj({"limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]}})
    err = failure(schema, {"limit": "many"})
    assert err.errors == [
        ("limit", "must be integer"),
        ("limit", "must be null"),
        ("limit", "must match a schema in anyOf"),
    ]


def test_one_of_must_match_exactly_one() -> None:
    schema = obj({"v": {"oneOf": [{"type": "integer"}, {"type": "number"}]}})
    err = failure(schema, {"v": 3})
    assert err.errors == [("v", "must match exactly one schema in oneOf")]
    assert run(schema, {"v": 2.5}) == {"v": 2.5}


def test_root_type_failure_and_array_paths() -> None:
    schema = obj({"items": {"type": "array", "items": obj({"id": {"type": "integer"}}, ["id"])}})
    err = failure(schema, {"items": [{"id": 1}, {"id": "x"}, {}]})
    assert err.errors == [
        ("items.1.id", "must be integer"),
        ("items.2.id", "must have required property 'id'"),
    ]
    assert schema_errors({"type": "object"}, [1]) == [("root", "must be object")]


def test_unknown_error_text_when_no_details() -> None:
    err = ToolArgumentsError("t", [], {"a": 1})
    assert str(err) == (
        'Validation failed for tool "t":\nUnknown validation error\n\n'
        'Received arguments:\n{\n  "a": 1\n}'
    )


def test_name_falls_back_to_the_tool() -> None:
    schema = obj({"a": {"type": "integer"}}, ["a"])
    with pytest.raises(ToolArgumentsError, match=r'^Validation failed for tool "bash"'):
        validate_tool_arguments(FakeTool("bash", schema), FakeCall("", {}))


def test_parameters_that_are_not_a_schema_pass_arguments_through() -> None:
    args = {"a": [1]}
    result = run(None, args)
    assert result == args
    assert result is not args and result["a"] is not args["a"]


# --------------------------------------------------------------------------------------------
# Not mutating the tool call


def test_original_arguments_are_not_mutated() -> None:
    schema = obj(
        {
            "n": {"type": "integer"},
            "point": obj({"x": {"type": "number"}}),
            "list": {"type": "array", "items": {"type": "string"}},
            "free": {"type": "object"},
        }
    )
    args: dict[str, Any] = {"n": "5", "point": {"x": "1"}, "list": [1, 2], "free": {"deep": [1]}}
    snapshot = copy.deepcopy(args)
    call = FakeCall("calc", args)
    result = validate_tool_arguments(FakeTool("calc", schema), call)
    assert call.arguments == snapshot
    assert call.arguments is args
    assert result == {"n": 5, "point": {"x": 1}, "list": ["1", "2"], "free": {"deep": [1]}}
    result["free"]["deep"].append(2)
    assert args["free"]["deep"] == [1]


def test_arguments_not_mutated_on_failure() -> None:
    schema = obj({"n": {"type": "integer"}, "s": {"type": "string", "minLength": 5}})
    args = {"n": "5", "s": 12}
    snapshot = copy.deepcopy(args)
    err = failure(schema, args)
    assert args == snapshot
    assert err.arguments == snapshot


# --------------------------------------------------------------------------------------------
# Pydantic model parameters


class Point(BaseModel):
    x: int
    y: int = 0


class DrawArgs(BaseModel):
    path: str
    mode: Literal["r", "w"] = "r"
    limit: int | None = None
    scale: float = 1.0
    point: Point | None = None
    points: list[Point] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    verbose: bool = False


def test_pydantic_model_receives_its_model() -> None:
    result = run(DrawArgs, {"path": "a.txt"}, name="draw")
    assert isinstance(result, DrawArgs)
    assert result == DrawArgs(path="a.txt")
    assert result.mode == "r" and result.limit is None and result.tags == []  # defaults


def test_pydantic_coercion_before_validation() -> None:
    args = {
        "path": 5,
        "mode": "w",
        "limit": "7",
        "scale": "2.5",
        "point": {"x": "2.7"},
        "points": [{"x": 1.9, "y": "3"}],
        "tags": [1, True],
        "verbose": "true",
    }
    result = run(DrawArgs, args, name="draw")
    assert result == DrawArgs(
        path="5",
        mode="w",
        limit=7,
        scale=2.5,
        point=Point(x=2),
        points=[Point(x=1, y=3)],
        tags=["1", "true"],
        verbose=True,
    )
    assert args["path"] == 5 and args["point"] == {"x": "2.7"}  # not mutated


def test_pydantic_failures_use_loc_and_msg() -> None:
    args = {"mode": "x", "point": {"y": "q"}, "points": [{"x": 1}, {}]}
    err = failure(DrawArgs, args, name="draw")
    assert str(err).startswith(
        'Validation failed for tool "draw":\n'
        "  - path: Field required\n"
        "  - mode: Input should be 'r' or 'w'\n"
        "  - point.x: Field required\n"
        "  - point.y: Input should be a valid integer, unable to parse string as an integer\n"
        "  - points.1.x: Field required\n"
        "\n"
        "Received arguments:\n"
    )
    assert str(err).endswith(json.dumps(args, indent=2))


def test_pydantic_root_error_path() -> None:
    class Strict(BaseModel):
        model_config = {"extra": "forbid"}
        a: int

    err = failure(Strict, {"a": 1, "b": 2})
    assert err.errors == [("b", "Extra inputs are not permitted")]


def test_pydantic_schema_is_cached_per_model() -> None:
    class Cached(BaseModel):
        n: int

    calls = 0
    original = Cached.model_json_schema

    def counting(*args: Any, **kwargs: Any) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        return original(*args, **kwargs)

    Cached.model_json_schema = counting  # type: ignore[method-assign]
    assert run(Cached, {"n": "1"}).n == 1
    assert run(Cached, {"n": 2.5}).n == 2
    assert calls == 1
    assert Cached in validation._model_schemas


def test_pydantic_model_without_json_schema_is_validated_by_pydantic() -> None:
    class Opaque:
        pass

    class WithOpaque(BaseModel):
        model_config = {"arbitrary_types_allowed": True}
        thing: Opaque | None = None
        n: int

    assert run(WithOpaque, {"n": "3"}).n == 3
    assert failure(WithOpaque, {"n": "x"}).errors[0][0] == "n"


def test_works_with_the_real_tool_types() -> None:
    from pi_notebook.ai.types import Tool, ToolCall

    tool = Tool(name="add", parameters=obj({"a": {"type": "integer"}}, ["a"]))
    call = ToolCall(id="1", name="add", arguments={"a": "4"})
    assert validate_tool_arguments(tool, call) == {"a": 4}
    assert call.arguments == {"a": "4"}
    model_tool = Tool(name="draw", parameters=DrawArgs)
    assert validate_tool_arguments(
        model_tool, ToolCall(id="2", name="draw", arguments={"path": 1})
    ) == (DrawArgs(path="1"))
