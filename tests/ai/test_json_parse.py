"""Tests for pi_notebook.ai.json_parse (streaming tool-call arguments)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_notebook.ai.json_parse import parse_json_object, parse_streaming_json, repair_json

# --------------------------------------------------------------------------------------------
# The cases Pi 0.82.1's parseStreamingJson was checked against


@pytest.mark.parametrize("text", [None, "", " ", "  \n\t "])
def test_empty_input_is_empty_object(text: str | None) -> None:
    assert parse_streaming_json(text) == {}


@pytest.mark.parametrize("text", ["{", '{"a"', '{"a":', '{"a":-', "not json"])
def test_nothing_usable_is_empty_object(text: str) -> None:
    assert parse_streaming_json(text) == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a":1', {"a": 1}),
        ('{"a":1,', {"a": 1}),
        ('{"a":"hel', {"a": "hel"}),
        ('{"a":"hel\\', {"a": "hel"}),  # a trailing lone backslash
        ('{"a":[1,2', {"a": [1, 2]}),
        ('{"a":{"b":', {"a": {}}),
        ('{"a":tr', {"a": True}),
        ('{"a":fals', {"a": False}),
        ('{"a":nul', {"a": None}),
        ('{"a":1.5e', {"a": 1.5}),
        ('{"a":1} trailing', {"a": 1}),
        ("[1,2", [1, 2]),
        ('"str', "str"),
    ],
)
def test_partial_inputs(text: str, expected: Any) -> None:
    result = parse_streaming_json(text)
    assert result == expected
    assert type(result) is type(expected)


def test_lone_trailing_backslash_really_is_one_character() -> None:
    text = '{"a":"hel' + "\\"
    assert text.endswith("l\\") and not text.endswith("\\\\")
    assert parse_streaming_json(text) == {"a": "hel"}


def test_windows_path_with_invalid_escapes_is_repaired() -> None:
    raw = r'{"p":"C:\Users\x"}'
    assert parse_streaming_json(raw) == {"p": r"C:\Users\x"}


def test_windows_path_while_streaming() -> None:
    assert parse_streaming_json(r'{"p":"C:\Users') == {"p": r"C:\Users"}


def test_raw_control_characters_in_strings_are_escaped() -> None:
    assert parse_streaming_json('{"a":"line1\nline2\r\x01"}') == {"a": "line1\nline2\r\x01"}


def test_literal_tab_is_kept_as_tab() -> None:
    result = parse_streaming_json('{"a":"x\ty"}')
    assert result == {"a": "x\ty"}
    assert "\t" in result["a"]


def test_valid_escapes_survive_repair() -> None:
    raw = '{"a":"q\\"\\n\\u00e9\\\\","b":"C:\\temp\\new"}'
    # \t and \n are valid escapes, so they stay escapes (JSON's meaning wins).
    assert parse_streaming_json(raw) == {"a": 'q"\n\u00e9\\', "b": "C:\temp\new"}


def test_repair_leaves_valid_json_and_outside_text_alone() -> None:
    text = '{"a": [1, 2, {"b": "c\\u00e9"}], "d": null}'
    assert repair_json(text) == text
    assert repair_json("no quotes at all \x01") == "no quotes at all \x01"


def test_repair_keeps_unfinished_escape_at_end() -> None:
    assert repair_json('{"a":"x\\u00') == '{"a":"x\\u00'
    assert repair_json('{"a":"x\\') == '{"a":"x\\'
    assert repair_json('{"a":"x\\u00"}') == '{"a":"x\\\\u00"}'


# --------------------------------------------------------------------------------------------
# More partial shapes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a":"x\\u00', {"a": "x"}),  # partial unicode escape dropped
        ('{"a":"x\\u00e9', {"a": "x\u00e9"}),
        ('{"a":"\\ud83d', {"a": ""}),  # the low surrogate has not arrived
        ('{"a":"\\ud83d\\ude00"', {"a": "\U0001f600"}),
        ('{"a":1,"b', {"a": 1}),  # a key still arriving is dropped
        ('{"a":1,"b"', {"a": 1}),
        ('{"a":1,"b":', {"a": 1}),
        ('{"a":[1,-', {"a": [1]}),
        ('{"a":-1', {"a": -1}),
        ('{"a":1.', {"a": 1}),
        ('{"a":1.5e-', {"a": 1.5}),
        ('{"a":2e5', {"a": 200000.0}),
        ('{"a":[{"b":[1,{"c":"d', {"a": [{"b": [1, {"c": "d"}]}]}),
        ('{"a":{}', {"a": {}}),
        ('{"a":[]', {"a": []}),
        ('  {"a" : 1 , "b" : [ true , n', {"a": 1, "b": [True, None]}),
        ('{"a":1,}', {"a": 1}),
        ("[", []),
        ("tr", True),
        ("nul", None),
        ("12", 12),
        ("-", {}),
    ],
)
def test_more_partial_shapes(text: str, expected: Any) -> None:
    assert parse_streaming_json(text) == expected


@pytest.mark.parametrize(
    "text",
    ['{"a":1 "b":2}', '{"a":01}', '{"a":xyz}', "{1:2}", "[1,,2]", "}", "nulx{", '{"a":1.5e}'],
)
def test_malformed_input_gives_empty_object_without_raising(text: str) -> None:
    assert parse_streaming_json(text) == {}


def test_deep_nesting_does_not_raise() -> None:
    assert parse_streaming_json("[" * 100_000) == {}
    assert isinstance(parse_streaming_json('{"a":' * 50_000), dict)


def test_nan_and_infinity_are_accepted_when_complete() -> None:
    result = parse_streaming_json('{"a":NaN,"b":-Infinity')
    assert math.isnan(result["a"]) and result["b"] == -math.inf
    assert parse_streaming_json('{"a":1,"b":-Inf') == {"a": 1}


def test_parse_json_object_only_returns_objects() -> None:
    assert parse_json_object('{"a":1') == {"a": 1}
    assert parse_json_object("[1,2") == {}
    assert parse_json_object('"str') == {}
    assert parse_json_object("42") == {}
    assert parse_json_object(None) == {}


def test_complete_json_takes_the_fast_path() -> None:
    text = json.dumps({"x": [1, 2.5, "s", None, True, {"y": {}}]})
    assert parse_streaming_json(text) == json.loads(text)


# --------------------------------------------------------------------------------------------
# Properties

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_json_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=12,
)
_json_dicts = st.dictionaries(st.text(), _json_values, max_size=5)


@given(_json_dicts, st.booleans())
def test_complete_dict_round_trips(d: dict[str, Any], ascii_only: bool) -> None:
    assert parse_streaming_json(json.dumps(d, ensure_ascii=ascii_only)) == d


@settings(max_examples=60, deadline=None)  # every prefix: slow on a busy machine
@given(_json_dicts, st.booleans(), st.booleans())
def test_every_prefix_parses_to_a_subset_of_keys(
    d: dict[str, Any], ascii_only: bool, compact: bool
) -> None:
    separators = (",", ":") if compact else None
    text = json.dumps(d, ensure_ascii=ascii_only, separators=separators)
    for end in range(len(text) + 1):
        result = parse_streaming_json(text[:end])
        assert isinstance(result, dict)
        assert set(result) <= set(d)
    assert parse_streaming_json(text) == d


@settings(max_examples=40)
@given(_json_dicts)
def test_prefixes_keep_every_completed_member(d: dict[str, Any]) -> None:
    # Once a member and the comma after it have arrived, it is reported exactly.
    text = json.dumps(d)
    members = [json.dumps({key: value})[1:-1] for key, value in d.items()]
    for count in range(1, len(members)):
        prefix = "{" + ", ".join(members[:count]) + ","
        assert text.startswith(prefix)
        assert parse_streaming_json(prefix) == dict(list(d.items())[:count])


@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    parse_streaming_json(text)
    assert isinstance(parse_json_object(text), dict)


def _reference_order(text: str) -> Any:
    """The documented order, step by step (the module tries the partial parse earlier)."""
    from pi_notebook.ai.json_parse import _partial_parse

    if not text or text.isspace():
        return {}
    repaired = repair_json(text)
    attempts: list[tuple[Callable[[str], Any], str]] = [
        (json.loads, text),
        (json.loads, repaired),
        (_partial_parse, text),
        (_partial_parse, repaired),
    ]
    for parse, source in attempts:
        try:
            return parse(source)
        except (ValueError, RecursionError):
            continue
    return {}


_jsonish = st.text(alphabet='{}[]":,\\ \t\n\x01abnrtu0123456789-.eE', max_size=30)


@settings(max_examples=500)
@given(
    st.one_of(
        _jsonish,
        _json_dicts.map(json.dumps).flatmap(lambda t: st.integers(0, len(t)).map(lambda n: t[:n])),
    )
)
def test_same_answers_as_the_documented_order(text: str) -> None:
    expected = _reference_order(text)
    result = parse_streaming_json(text)
    assert json.dumps(result) == json.dumps(expected)


@pytest.mark.parametrize("insert", ["\\q", "\\", "\n", "\x02", "\t", "C:\\Users\\x", "\\u12"])
def test_raw_text_with_bad_characters_in_strings(insert: str) -> None:
    # A model writing raw text into a string: the value comes back as written.
    raw = '{"k":"a' + insert + 'z"}'
    assert parse_streaming_json(raw) == {"k": "a" + insert + "z"}
