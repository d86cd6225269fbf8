"""Incremental partial-JSON parsing of one tool call's arguments while they stream in.

:class:`IncrementalJsonObject` is fed a tool call's argument fragments one by one and, after
each, answers exactly what :func:`.json_parse.parse_json_object` would answer for the whole
text so far (Pi's ``parseStreamingJson``, then ``{}`` unless an object). Unlike it, it keeps its
tokenizer state between fragments, so a fragment costs work in proportion to its own length
(plus a shallow copy of the containers still open and of the string still arriving: every
answer is a fresh object, as Pi's is) instead of a re-parse of everything received so far.

Why the answers match the batch parser's: that parser tries a strict partial parse first and
only when it fails (a raw control character or an invalid escape in some string) parses the
*repaired* text, whose strings mean the same as the raw ones read leniently (a raw control
character is itself, a backslash that starts no valid escape is a backslash). Repair never
changes structure, so the answer is always the lenient parse, or ``{}`` when the text is not
a prefix of a JSON object; this module reads strings leniently from the start. An unfinished
escape at the end (``\\``, ``\\u12``) waits for the next fragment; a high surrogate at the end
of the string still arriving is left out, as the batch parser does.

Hand-written because no library parses incrementally with these semantics: jiter (pydantic-
core's ``from_json(allow_partial=...)``) re-reads the whole text on every call and differs
from Pi on partial literals (``tr``), partial numbers and the repair of strings.

It must never raise, never answer differently from ``parse_json_object`` on the same text
(what it does not model - nesting deeper than :data:`MAX_DEPTH`, a number token longer than
:data:`MAX_NUMBER` - it hands to ``parse_json_object`` for the rest of the call), and never
change a container after handing it out: successive answers share only closed containers.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .json_parse import parse_json_object

__all__ = ["MAX_DEPTH", "MAX_NUMBER", "IncrementalJsonObject"]

MAX_DEPTH = 64
"""Deeper nesting is left to the batch parser (whose recursion limit decides its answer)."""

MAX_NUMBER = 64
"""A longer number token is left to the batch parser (Python limits int() to 4300 digits)."""

_WS = re.compile(r"[ \t\n\r]*")
_PLAIN = re.compile(r'[^"\\]*')  # string characters that need no decoding (read leniently)
_NUMBER_CHARS = re.compile(r"[0-9eE.+\-]*")
_VALID_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
# What may follow ``\\u`` at the end of the text while the escape is still arriving (a lone
# backslash after it is dropped with it, as the batch parser does).
_UNICODE_TAIL = re.compile(r"[0-9a-fA-F]{0,3}\\?")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERAL_WORDS = {"t": "true", "f": "false", "n": "null", "N": "NaN", "I": "Infinity"}
_LITERAL_VALUES: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "NaN": math.nan,
    "Infinity": math.inf,
    "-Infinity": -math.inf,
}
_COMPLETED_WHEN_PARTIAL = ("true", "false", "null")  # "tr" is true; "Na" is dropped

# What the tokenizer expects at ``self._pos``.
_VALUE = 0  # a value: the top-level object, or an object member's value after ':'
_VALUE_OR_CLOSE = 1  # in an array, after '[' or ','
_KEY_OR_CLOSE = 2  # in an object, after '{' or ','
_COLON = 3
_COMMA_OR_CLOSE = 4  # after a value inside a container
_STRING = 5  # inside a string (a key when ``_in_key``)
_NUMBER = 6
_LITERAL = 7
_DONE = 8  # the top-level object is closed: the rest of the text is ignored
_INVALID = 9  # not a prefix of any JSON object: {} for good
_DELEGATED = 10  # past what this module models: every answer comes from parse_json_object


class IncrementalJsonObject:
    """The growing raw arguments of one tool call and their partial parse.

    ``feed(fragment)`` appends and returns the parse of everything fed so far (a new dict).
    ``examined`` counts the characters the tokenizer has read: about the text's length.
    """

    __slots__ = (
        "_containers",
        "_high",
        "_in_key",
        "_keys",
        "_pos",
        "_root",
        "_start",
        "_state",
        "_string",
        "_text",
        "_word",
        "examined",
    )

    def __init__(self) -> None:
        self._text = ""
        self._pos = 0  # everything before it is in the state below
        self._state = _VALUE
        self._containers: list[dict[str, Any] | list[Any]] = []  # the open ones, outermost first
        self._keys: list[str | None] = []  # per open container: the key awaiting its value
        self._root: dict[str, Any] = {}
        self._string = ""  # the string being read, decoded so far
        self._in_key = False
        self._high = False  # the string's last character came from a high-surrogate escape
        self._start = 0  # where the number or literal being read starts
        self._word = ""  # the literal being read
        self.examined = 0

    @property
    def text(self) -> str:
        """The raw JSON fed so far."""
        return self._text

    def feed(self, fragment: str) -> dict[str, Any]:
        """Append ``fragment``; the partial parse of the whole text (``{}`` unless an object)."""
        # Drop the attribute's reference first so CPython grows the string in place.
        text = self._text
        self._text = ""
        fed = len(text)
        text += fragment
        self._text = text
        state = self._state
        if (
            state == _STRING
            and self._pos == fed
            and not self._in_key
            and '"' not in fragment
            and "\\" not in fragment
        ):
            # The common case: more of a string value, with nothing in it to decode.
            if fragment:
                self._string += fragment
                self._high = False
            self._pos = len(text)
            self.examined += len(fragment)
        elif state == _DELEGATED:
            return parse_json_object(text)
        else:
            self.examined += len(text) - self._pos
            self._advance(text)
        return self._answer(text)

    # ----------------------------------------------------------------------------------------
    # Tokenizer

    def _advance(self, text: str) -> None:
        n = len(text)
        pos = self._pos
        while pos < n:
            state = self._state
            if state == _STRING:
                pos = self._read_string(text, pos, n)
                if self._state == _STRING:
                    break  # the string (or an escape in it) continues in the next fragment
                continue
            if state >= _DONE:
                break
            if state == _NUMBER:
                pos = self._read_number(text, pos, n)
                continue
            if state == _LITERAL:
                pos = self._read_literal(text, n)
                continue
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if pos >= n:
                break
            char = text[pos]
            if state == _COMMA_OR_CLOSE:
                is_object = isinstance(self._containers[-1], dict)
                if char == ",":
                    self._state = _KEY_OR_CLOSE if is_object else _VALUE_OR_CLOSE
                    pos += 1
                elif char == ("}" if is_object else "]"):
                    self._close()
                    pos += 1
                else:
                    self._state = _INVALID
            elif state == _KEY_OR_CLOSE:
                if char == '"':
                    self._begin_string(in_key=True)
                    pos += 1
                elif char == "}":
                    self._close()
                    pos += 1
                else:
                    self._state = _INVALID
            elif state == _COLON:
                if char == ":":
                    self._state = _VALUE
                    pos += 1
                else:
                    self._state = _INVALID
            elif state == _VALUE_OR_CLOSE and char == "]":
                self._close()
                pos += 1
            else:
                pos = self._begin_value(char, pos)
        self._pos = pos

    def _begin_value(self, char: str, pos: int) -> int:
        if not self._containers and char != "{":  # only a top-level object answers anything
            self._state = _INVALID
            return pos
        if char == "{" or char == "[":
            if len(self._containers) >= MAX_DEPTH:
                self._state = _DELEGATED
                return pos
            self._containers.append({} if char == "{" else [])
            self._keys.append(None)
            self._state = _KEY_OR_CLOSE if char == "{" else _VALUE_OR_CLOSE
            return pos + 1
        if char == '"':
            self._begin_string(in_key=False)
            return pos + 1
        if char == "-" or "0" <= char <= "9":
            self._state = _NUMBER
            self._start = pos
            return pos
        word = _LITERAL_WORDS.get(char)
        if word is None:
            self._state = _INVALID
            return pos
        self._state = _LITERAL
        self._word = word
        self._start = pos
        return pos

    def _begin_string(self, in_key: bool) -> None:
        self._state = _STRING
        self._in_key = in_key
        self._string = ""
        self._high = False

    def _read_string(self, text: str, pos: int, n: int) -> int:
        """Decode from ``pos``; stops at the closing quote or before an unfinished escape."""
        pieces: list[str] = []
        high = self._high
        closed = False
        while True:
            end = _PLAIN.match(text, pos).end()  # type: ignore[union-attr]
            if end > pos:
                pieces.append(text[pos:end])
                high = False
            if end >= n:
                pos = n
                break
            if text[end] == '"':
                pos = end + 1
                closed = True
                break
            # A backslash.
            if end + 1 >= n:
                pos = end  # a lone backslash at the end: an escape still arriving
                break
            code = text[end + 1]
            simple = _ESCAPES.get(code)
            if simple is not None:
                pieces.append(simple)
                high = False
                pos = end + 2
                continue
            if code == "u":
                digits = text[end + 2 : end + 6]
                if len(digits) == 4 and _HEX4.fullmatch(digits):
                    point = int(digits, 16)
                    if high and 0xDC00 <= point <= 0xDFFF:
                        # The low half right after a high-surrogate escape: one character
                        # (json's scanstring joins them too).
                        if pieces:
                            first = pieces.pop()  # the high half, alone in its piece
                        else:
                            first = self._string[-1]
                            self._string = self._string[:-1]
                        pieces.append(chr(0x10000 + ((ord(first) - 0xD800) << 10) + point - 0xDC00))
                        high = False
                    else:
                        pieces.append(chr(point))
                        high = 0xD800 <= point <= 0xDBFF
                    pos = end + 6
                    continue
                if _UNICODE_TAIL.fullmatch(text, end + 2):
                    pos = end  # ``\\u12`` at the end: a unicode escape still arriving
                    break
            # An invalid escape: the backslash is itself (what repair makes of it).
            pieces.append("\\")
            high = False
            pos = end + 1
        if pieces:
            self._string += "".join(pieces)
        self._high = high
        if closed:
            self._end_string()
        return pos

    def _end_string(self) -> None:
        value = self._string
        self._string = ""
        if self._in_key:
            self._keys[-1] = value
            self._state = _COLON
        else:
            self._put(value)

    def _read_number(self, text: str, pos: int, n: int) -> int:
        end = _NUMBER_CHARS.match(text, pos).end()  # type: ignore[union-attr]
        if end - self._start > MAX_NUMBER:
            self._state = _DELEGATED
            return end
        if end >= n:
            return end  # more digits may follow
        token = text[self._start : end]
        if token == "-" and text[end] == "I":
            self._state = _LITERAL
            self._word = "-Infinity"
            return end
        value = _number(token)
        if value is None:
            self._state = _INVALID
            return end
        self._put(value)
        return end

    def _read_literal(self, text: str, n: int) -> int:
        word, start = self._word, self._start
        seen = text[start : start + len(word)]
        if not word.startswith(seen):
            self._state = _INVALID
            return n
        if len(seen) < len(word):
            return n  # partially typed, at the end of the text
        self._put(_LITERAL_VALUES[word])
        return start + len(word)

    def _put(self, value: Any) -> None:
        container = self._containers[-1]
        if isinstance(container, dict):
            key = self._keys[-1]
            assert key is not None
            container[key] = value
            self._keys[-1] = None
        else:
            container.append(value)
        self._state = _COMMA_OR_CLOSE

    def _close(self) -> None:
        container = self._containers.pop()
        self._keys.pop()
        if self._containers:
            self._put(container)
        else:
            assert isinstance(container, dict)
            self._root = container
            self._state = _DONE

    # ----------------------------------------------------------------------------------------
    # Answer

    def _answer(self, text: str) -> dict[str, Any]:
        state = self._state
        if state == _DONE:
            return dict(self._root)
        if state == _INVALID:
            return {}
        if state == _DELEGATED:
            return parse_json_object(text)
        if not self._containers:
            return {}
        # The value still arriving at the innermost open container, if it counts yet.
        present = False
        value: Any = None
        if state == _STRING and not self._in_key:
            value = self._string
            if value and "\ud800" <= value[-1] <= "\udbff":
                value = value[:-1]  # the low half of a surrogate pair has not arrived yet
            present = True
        elif state == _NUMBER:
            token = text[self._start :].rstrip("eE+-.")
            if token:
                value = _number(token)
                if value is None:
                    return {}  # '{"a":01' is no JSON prefix
                present = True
        elif state == _LITERAL and self._word in _COMPLETED_WHEN_PARTIAL:
            value = _LITERAL_VALUES[self._word]
            present = True
        for container, key in zip(reversed(self._containers), reversed(self._keys), strict=True):
            if isinstance(container, dict):
                snapshot: Any = dict(container)
                if present and key is not None:
                    snapshot[key] = value
            else:
                snapshot = list(container)
                if present:
                    snapshot.append(value)
            value, present = snapshot, True
        result: dict[str, Any] = value
        return result


def _number(token: str) -> int | float | None:
    """The JSON number ``token`` (as ``json.loads`` reads it), or ``None`` if it is none."""
    if _VALID_NUMBER.fullmatch(token) is None:
        return None
    if "." in token or "e" in token or "E" in token:
        return float(token)
    return int(token)
