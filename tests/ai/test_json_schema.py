"""Tests for pi_notebook.ai.json_schema: the keywords the compact validator used to let through,
schemas it cannot fully check (warned, never a crash), and compiling once per schema."""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass
from typing import Any

import pytest

from pi_notebook.ai import json_schema
from pi_notebook.ai.json_schema import SchemaWarning, compile_schema
from pi_notebook.ai.validation import ToolArgumentsError, schema_errors, validate_tool_arguments


@dataclass
class Tool:
    name: str
    parameters: Any


@dataclass
class Call:
    name: str
    arguments: Any


def errors(schema: dict[str, Any], value: Any) -> list[tuple[str, str]]:
    return schema_errors(schema, value)


# --------------------------------------------------------------------------------------------
# Keywords beyond the old subset: each must fail what it forbids and pass what it allows


@pytest.mark.parametrize(
    ("schema", "bad", "good", "expected"),
    [
        (
            {"type": "object", "minProperties": 2},
            {"a": 1},
            {"a": 1, "b": 2},
            [("root", "must NOT have fewer than 2 properties")],
        ),
        (
            {"type": "object", "maxProperties": 1},
            {"a": 1, "b": 2},
            {"a": 1},
            [("root", "must NOT have more than 1 properties")],
        ),
        (
            {"type": "object", "dependentRequired": {"start": ["end", "step"]}},
            {"start": 1, "step": 1},
            {"start": 1, "end": 2, "step": 1},
            [("root", "must have property end when property start is present")],
        ),
        (
            {"type": "object", "propertyNames": {"pattern": "^[a-z_]+$"}},
            {"ok": 1, "Not-OK": 2},
            {"ok": 1, "also_ok": 2},
            [("root", "property name 'Not-OK' must match pattern \"^[a-z_]+$\"")],
        ),
        (
            {"type": "array", "contains": {"type": "integer"}},
            ["a", "b"],
            ["a", 1],
            [("root", "must contain at least 1 valid item(s)")],
        ),
        (
            {"type": "array", "contains": {"type": "integer"}, "maxContains": 1},
            [1, 2],
            [1, "b"],
            [("root", "must contain at most 1 valid item(s)")],
        ),
        (
            {
                "type": "object",
                "properties": {"kind": {"enum": ["file", "url"]}},
                "if": {"properties": {"kind": {"const": "file"}}},
                "then": {"required": ["path"]},
                "else": {"required": ["url"]},
            },
            {"kind": "file", "url": "x"},
            {"kind": "url", "url": "x"},
            [("path", "must have required property 'path'")],
        ),
        (
            {
                "type": "object",
                "allOf": [{"properties": {"a": {"type": "integer"}}}],
                "unevaluatedProperties": False,
            },
            {"a": 1, "b": 2},
            {"a": 1},
            [("root", "Unevaluated properties are not allowed ('b' was unexpected)")],
        ),
        (
            {
                "$defs": {"count": {"$anchor": "count", "type": "integer", "minimum": 0}},
                "type": "object",
                "properties": {"n": {"$ref": "#count"}},
            },
            {"n": -1},
            {"n": 3},
            [("n", "must be >= 0")],
        ),
        (
            {"type": "array", "prefixItems": [{"type": "string"}], "items": False},
            ["a", "b"],
            ["a"],
            [("root", "must NOT have more than 1 items")],
        ),
        (
            {"type": "object", "dependentSchemas": {"a": {"required": ["b"]}}},
            {"a": 1},
            {"a": 1, "b": 2},
            [("b", "must have required property 'b'")],
        ),
    ],
)
def test_keywords_the_old_validator_ignored(
    schema: dict[str, Any], bad: Any, good: Any, expected: list[tuple[str, str]]
) -> None:
    assert errors(schema, bad) == expected
    assert errors(schema, good) == []


def test_new_keywords_reach_the_model_with_the_argument_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "rows": {
                "type": "array",
                "items": {"type": "object", "minProperties": 1, "propertyNames": {"maxLength": 3}},
            }
        },
    }
    with pytest.raises(ToolArgumentsError) as info:
        validate_tool_arguments(
            Tool("t", schema), Call("t", {"rows": [{"ab": 1}, {}, {"long": 2}]})
        )
    assert info.value.errors == [
        ("rows.1", "must NOT have fewer than 1 properties"),
        ("rows.2", "property name 'long' must NOT have more than 3 characters"),
    ]
    assert str(info.value).startswith('Validation failed for tool "t":\n  - rows.1: must NOT')


def test_every_additional_property_is_reported() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {}},
        "patternProperties": {"^x_": {}},
        "additionalProperties": False,
    }
    assert errors(schema, {"a": 1, "x_1": 2, "b": 3, "c": 4}) == [
        ("root", "must NOT have additional properties"),
        ("root", "must NOT have additional properties"),
    ]


def test_coercion_follows_anchor_refs() -> None:
    schema = {
        "$defs": {"n": {"$anchor": "n", "type": "integer"}},
        "type": "object",
        "properties": {"a": {"$ref": "#n"}},
    }
    assert validate_tool_arguments(Tool("t", schema), Call("t", {"a": "4"})) == {"a": 4}


# --------------------------------------------------------------------------------------------
# Drafts


def test_a_declared_draft_07_schema_is_validated_as_draft_07() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}
        },
        "dependencies": {"a": ["b"]},
    }
    assert errors(schema, {"pair": ["x", "y"], "a": 1}) == [
        ("root", "must have property b when property a is present"),
        ("pair.1", "must be integer"),
    ]


def test_draft_04_spellings_in_an_undeclared_schema_still_work() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
            "t": {"type": "array", "items": [{"type": "integer"}], "additionalItems": False},
        },
        "dependencies": {"a": ["b"]},
    }
    assert errors(schema, {"n": 0, "t": [1, 2], "a": 1}) == [
        ("root", "must have property b when property a is present"),
        ("n", "must be > 0"),
        ("t", "must NOT have more than 1 items"),
    ]
    assert errors(schema, {"n": 0.5, "t": [1]}) == []


# --------------------------------------------------------------------------------------------
# What cannot be checked is skipped with a warning, never a crash


def test_an_ecma_only_pattern_is_skipped_with_a_warning() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "pattern": "^\\p{L}+$", "maxLength": 5}},
    }
    with pytest.warns(SchemaWarning, match=r"'\^\\\\p\{L\}\+\$' is not a Python regular"):
        result = validate_tool_arguments(Tool("t", schema), Call("t", {"name": "Zoë"}))
    assert result == {"name": "Zoë"}
    with pytest.raises(ToolArgumentsError) as info:
        validate_tool_arguments(Tool("t", schema), Call("t", {"name": "Zoë" * 3}))
    assert info.value.errors == [("name", "must NOT have more than 5 characters")]


def test_an_unusable_pattern_property_also_skips_additional_properties() -> None:
    schema = {
        "type": "object",
        "patternProperties": {"^\\p{Lu}": {"type": "integer"}, "^n_": {"type": "integer"}},
        "additionalProperties": False,
    }
    with pytest.warns(SchemaWarning, match="nor is additionalProperties"):
        compiled = compile_schema(schema)
    # "Ä" is neither checked against the skipped pattern nor reported as additional.
    assert compiled.errors({"Ä": "x", "n_1": "y"}) == [(("n_1",), "must be integer")]


def test_broken_schemas_warn_instead_of_raising() -> None:
    cases: list[tuple[dict[str, Any], Any]] = [
        ({"$ref": "#"}, {"a": 1}),  # a $ref that loops without consuming anything
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}, {"a": 1}),
        ({"type": "object", "properties": {"a": {"type": "strng"}}}, {"a": 1}),
        ({"type": "object", "properties": {"a": {"minLength": "5"}}}, {"a": "abc"}),
        ({"$ref": "https://example.com/remote.json"}, {"a": 1}),  # never fetched
    ]
    for schema, value in cases:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert validate_tool_arguments(Tool("t", schema), Call("t", value)) == value
        assert caught and all(issubclass(w.category, SchemaWarning) for w in caught), schema


# --------------------------------------------------------------------------------------------
# Compiled once per schema, never mutated


def test_a_schema_is_compiled_once_and_left_untouched() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMinimum": True}},
        "required": ["n"],
    }
    original = copy.deepcopy(schema)
    built = []
    real = json_schema.CompiledSchema

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, schema: Any) -> None:
            built.append(schema)
            super().__init__(schema)

    json_schema.CompiledSchema = Counting  # type: ignore[misc]
    try:
        tool = Tool("t", schema)
        for value in ({"n": "1"}, {"n": 2}, {"n": 3.0}):
            validate_tool_arguments(tool, Call("t", value))
        with pytest.raises(ToolArgumentsError):
            validate_tool_arguments(tool, Call("t", {"n": 0}))
    finally:
        json_schema.CompiledSchema = real  # type: ignore[misc]
    assert len(built) == 1
    assert schema == original
    assert compile_schema(schema) is compile_schema(schema)
