"""Best-effort parsing of partial JSON: tool-call arguments while a model is still streaming them.

It defines what a tool call's ``arguments`` are while they stream in, so a UI can show them as
they grow. Providers do not call it per delta: :mod:`.json_incremental` gives the same answers
for work in proportion to each delta, and hands what it does not model back to this module.
The answer is that of the first of these to succeed (as Pi's ``parseStreamingJson``):

1. strict ``json.loads`` (the fast path: complete, well-formed arguments);
2. strict parse of the *repaired* text (raw control characters inside strings escaped,
   invalid backslash escapes such as ``C:\\Users`` doubled);
3. a partial parse of the text, which stops cleanly at the end of input;
4. a partial parse of the repaired text;
5. ``{}``.

The partial parser keeps every complete key/value, closes open strings, arrays and objects,
completes a partially typed ``true``/``false``/``null``, trims a partial number back to its
longest valid prefix (``1.5e`` -> ``1.5``; a bare ``-`` is dropped) and drops an incomplete
trailing key or value. Text after a complete top-level value is ignored.

This module must never raise (whatever the input, the answer is a value, ``{}`` at worst),
never mutate anything, and never do more than linear work per call.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

__all__ = ["parse_json_object", "parse_streaming_json", "repair_json"]

# The C string scanner behind ``json.loads`` (typeshed does not declare it).
_scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

# --------------------------------------------------------------------------------------------
# Repair


# A string literal, possibly unterminated: the body is any run of non-quote, non-backslash
# characters and backslash pairs (a trailing lone backslash is left outside the match).
_STRING_LITERAL = re.compile(r'"([^"\\]*(?:\\[\s\S][^"\\]*)*)("?)')
# Inside a string body: a valid escape, a backslash that starts something else, or a raw
# control character.
_BODY_FIX = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])|\\|[\x00-\x1f]')
# A string body that needs no repair: no control characters, only valid escapes.
_CLEAN = r'[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*'
_CLEAN_BODY = re.compile(_CLEAN)
_PARTIAL_UNICODE_AT_END = re.compile(r"\\u[0-9a-fA-F]{0,3}\Z")
_CONTROL_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _fix_body_match(match: re.Match[str]) -> str:
    token = match.group(0)
    if len(token) > 1:  # a valid escape
        return token
    if token == "\\":
        return "\\\\"
    return _CONTROL_ESCAPES.get(token) or f"\\u{ord(token):04x}"


def _fix_body(body: str, terminated: bool) -> str:
    keep = ""
    if not terminated:
        # ``\u12`` at the very end of the input is a unicode escape still arriving, not an
        # invalid escape: leave it for the partial parser to drop.
        tail = _PARTIAL_UNICODE_AT_END.search(body)
        if tail is not None and _escape_starts_at(body, tail.start()):
            body, keep = body[: tail.start()], body[tail.start() :]
    return _BODY_FIX.sub(_fix_body_match, body) + keep


def _escape_starts_at(body: str, index: int) -> bool:
    """Whether the backslash at ``index`` starts an escape (is preceded by an even run)."""
    run = 0
    while index - run - 1 >= 0 and body[index - run - 1] == "\\":
        run += 1
    return run % 2 == 0


def _fix_string_literal(match: re.Match[str]) -> str:
    body, closing = match.group(1), match.group(2)
    if _CLEAN_BODY.fullmatch(body) is not None:
        return match.group(0)
    return '"' + _fix_body(body, terminated=bool(closing)) + closing


def repair_json(text: str) -> str:
    """Escape raw control characters and double invalid backslash escapes inside strings.

    Text outside string literals is left alone; an unfinished escape at the very end of the
    input (a lone ``\\`` or ``\\u12``) is kept, since more of it may still be streaming in.
    """
    if '"' not in text:
        return text
    return _STRING_LITERAL.sub(_fix_string_literal, text)


# --------------------------------------------------------------------------------------------
# Partial parser


class _Invalid(ValueError):
    """The text is not a prefix of any JSON value."""


class _Incomplete(ValueError):
    """The text ends before a value could start (or only ``-`` of a number arrived)."""


_WS = re.compile(r"[ \t\n\r]*")
_STRING_BODY = re.compile(r'[^"\\]*(?:\\[\s\S][^"\\]*)*')
_NUMBER_CHARS = re.compile(r"[0-9eE.+\-]*")
_VALID_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS: tuple[tuple[str, Any], ...] = (
    ("true", True),
    ("false", False),
    ("null", None),
)
_COMPLETE_ONLY_LITERALS: tuple[tuple[str, float], ...] = (
    ("NaN", math.nan),
    ("Infinity", math.inf),
    ("-Infinity", -math.inf),
)


class _PartialParser:
    __slots__ = ("n", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)

    def skip_ws(self, i: int) -> int:
        match = _WS.match(self.text, i)
        return match.end() if match is not None else i

    def parse(self) -> Any:
        i = self.skip_ws(0)
        if i >= self.n:
            raise _Incomplete
        value, _ = self.value(i)
        return value  # anything after a complete top-level value is ignored

    def value(self, i: int) -> tuple[Any, int]:
        """Parse the value starting at ``i`` (not whitespace, not end of input)."""
        char = self.text[i]
        if char == "{":
            return self.object(i)
        if char == "[":
            return self.array(i)
        if char == '"':
            string, end, _ = self.string(i)
            return string, end
        if char == "-" or "0" <= char <= "9":
            return self.number(i)
        return self.literal(i)

    def object(self, i: int) -> tuple[dict[str, Any], int]:
        text, n = self.text, self.n
        result: dict[str, Any] = {}
        i += 1
        while True:
            i = self.skip_ws(i)
            if i >= n:
                return result, n
            char = text[i]
            if char == "}":
                return result, i + 1
            if char != '"':
                raise _Invalid
            key, i, complete = self.string(i)
            if not complete:
                return result, n  # a key still arriving is dropped
            i = self.skip_ws(i)
            if i >= n:
                return result, n
            if text[i] != ":":
                raise _Invalid
            i = self.skip_ws(i + 1)
            if i >= n:
                return result, n
            try:
                value, i = self.value(i)
            except _Incomplete:
                return result, n
            result[key] = value
            i = self.skip_ws(i)
            if i >= n:
                return result, n
            char = text[i]
            if char == ",":
                i += 1
            elif char == "}":
                return result, i + 1
            else:
                raise _Invalid

    def array(self, i: int) -> tuple[list[Any], int]:
        text, n = self.text, self.n
        result: list[Any] = []
        i += 1
        while True:
            i = self.skip_ws(i)
            if i >= n:
                return result, n
            if text[i] == "]":
                return result, i + 1
            try:
                value, i = self.value(i)
            except _Incomplete:
                return result, n
            result.append(value)
            i = self.skip_ws(i)
            if i >= n:
                return result, n
            char = text[i]
            if char == ",":
                i += 1
            elif char == "]":
                return result, i + 1
            else:
                raise _Invalid

    def string(self, i: int) -> tuple[str, int, bool]:
        """Parse the string whose opening quote is at ``i``: ``(value, end, terminated)``."""
        text, n = self.text, self.n
        match = _STRING_BODY.match(text, i + 1)
        end = match.end() if match is not None else i + 1
        if end < n and text[end] == '"':
            value, after = _scanstring(text, i + 1, True)
            return value, after, True
        # Unterminated: the body runs to the end of input, perhaps followed by a lone
        # backslash (an escape still arriving), which is dropped with any partial \uXXXX.
        body = text[i + 1 : end]
        tail = _PARTIAL_UNICODE_AT_END.search(body)
        if tail is not None and _escape_starts_at(body, tail.start()):
            body = body[: tail.start()]
        value = _scanstring(body + '"', 0, True)[0]
        if value and "\ud800" <= value[-1] <= "\udbff":
            value = value[:-1]  # the low half of a surrogate pair has not arrived yet
        return value, n, False

    def number(self, i: int) -> tuple[int | float, int]:
        text = self.text
        if text.startswith("-I", i):
            return self.literal(i)
        match = _NUMBER_CHARS.match(text, i)
        end = match.end() if match is not None else i
        token = text[i:end]
        if end >= self.n:
            # At the end of input: trim back to the longest valid number.
            token = token.rstrip("eE+-.")
            if not token:
                raise _Incomplete
        if _VALID_NUMBER.fullmatch(token) is None:
            raise _Invalid
        if "." in token or "e" in token or "E" in token:
            return float(token), end
        return int(token), end

    def literal(self, i: int) -> tuple[Any, int]:
        text, n = self.text, self.n
        for word, value in _LITERALS:
            if text.startswith(word, i):
                return value, i + len(word)
            if n - i < len(word) and word.startswith(text[i:]):
                return value, n  # partially typed: complete it
        for word, number in _COMPLETE_ONLY_LITERALS:
            if text.startswith(word, i):
                return number, i + len(word)
            if n - i < len(word) and word.startswith(text[i:]):
                raise _Incomplete  # not JSON anyway; drop it rather than guess
        raise _Invalid


def _partial_parse(text: str) -> Any:
    return _PartialParser(text).parse()


# --------------------------------------------------------------------------------------------
# Public API


_FAILED: Any = object()


def _attempt(parse: Callable[[str], Any], text: str) -> Any:
    # Every way the parsers fail is a ValueError (JSONDecodeError, _Invalid, _Incomplete,
    # an over-long integer) or a RecursionError (absurdly deep nesting).
    try:
        return parse(text)
    except (ValueError, RecursionError):
        return _FAILED


def parse_streaming_json(text: str | None) -> Any:
    """Parse JSON that may be cut off anywhere; never raises.

    Empty, whitespace-only, ``None`` or unparseable input gives ``{}``.
    """
    if not text or not isinstance(text, str) or text.isspace():
        return {}
    result = _attempt(json.loads, text)
    if result is not _FAILED:
        return result
    # The documented order is strict, strict-repaired, partial, partial-repaired. Trying the
    # partial parse before repairing gives the same answers: when it succeeds, every string
    # it read was clean (it rejects raw control characters and bad escapes, the only things
    # repair changes), so the repaired text is still truncated or still has trailing text
    # and its strict parse would fail. Streaming prefixes then never pay for a repair.
    result = _attempt(_partial_parse, text)
    if result is not _FAILED:
        return result
    repaired = repair_json(text)
    if repaired == text:
        return {}
    result = _attempt(json.loads, repaired)
    if result is _FAILED:
        result = _attempt(_partial_parse, repaired)
    return {} if result is _FAILED else result


def parse_json_object(text: str | None) -> dict[str, Any]:
    """:func:`parse_streaming_json`, but ``{}`` whenever the result is not an object."""
    result = parse_streaming_json(text)
    return result if isinstance(result, dict) else {}
