"""Reading a text chunk of a chat-completion stream without parsing all of it.

OpenAI-compatible servers send one chunk per token, and every text chunk repeats the same
envelope: id, object, created, model, fingerprint, choice index, ``logprobs: null``,
``finish_reason: null``. Only the content string changes. Parsing the whole JSON object costs
more than everything else a client does with the chunk.

:class:`TextChunkShape` is learned from one fully parsed text-only chunk: the bytes before its
content string (``head``, up to and including the opening quote) and after it (``tail``, from
the closing quote). A later chunk that starts with ``head`` and ends with ``tail`` is, byte for
byte, that chunk with another content string, provided what lies between is one JSON string
body; it is then parsed alone. JSON tokenises the same bytes the same way, so the result is
exactly what a full parse would give. Anything else (a different envelope, a finish reason,
usage, tool calls, a string body that does not parse on its own) goes through the full parse.

Measured for issue 17 (``bench/README.md``): the client parsing every chunk whole costs 1.46x
what it costs with the shortcut on ``bench_providers``; on OpenAI itself, whose per-chunk
``obfuscation`` field changes the envelope every chunk, the decoder gives up after a few
attempts and the shortcut costs nothing.

Learning is checked, not assumed: the shape is accepted only if putting a probe string between
``head`` and ``tail`` and parsing the whole changes ``choices[0].delta.content`` and nothing
else.
"""

from __future__ import annotations

from typing import Any

from pydantic_core import from_json

_CONTENT_KEY = b'"content":'
_PROBE = '\u2603 probe \\ " \u00e9'
_PROBE_BODY = b'\\u2603 probe \\\\ \\" \\u00e9'


class TextChunkShape:
    """The envelope of one text-only chunk; see the module docstring."""

    __slots__ = ("_cut", "_end", "head", "tail")

    def __init__(self, head: bytes, tail: bytes) -> None:
        self.head = head
        self.tail = tail
        self._cut = len(head)
        self._end = -len(tail)

    def text_of(self, data: bytes) -> str | None:
        """The content string of ``data`` if it has this shape, else None (parse it whole)."""
        if not (data.startswith(self.head) and data.endswith(self.tail)):
            return None
        stop = len(data) + self._end
        if stop < self._cut:  # head and tail overlap: not this shape
            return None
        try:  # the string token with its own quotes: head ends and tail starts with one
            text = from_json(data[self._cut - 1 : stop + 1])
        except ValueError:  # not one string body (an unescaped quote, a dangling escape)
            return None
        return text if type(text) is str else None

    @classmethod
    def learn(cls, data: bytes, chunk: dict[str, Any]) -> TextChunkShape | None:
        """The shape of ``data`` (already parsed as ``chunk``), if it is a plain text chunk."""
        if not _is_plain_text_chunk(chunk) or data.count(_CONTENT_KEY) != 1:
            return None
        start = data.index(_CONTENT_KEY) + len(_CONTENT_KEY)
        while data[start : start + 1] in (b" ", b"\t", b"\n", b"\r"):
            start += 1
        if data[start : start + 1] != b'"':
            return None
        end = _closing_quote(data, start + 1)
        if end < 0:
            return None
        shape = cls(data[: start + 1], data[end:])
        try:
            probed = from_json(shape.head + _PROBE_BODY + shape.tail)
        except ValueError:
            return None
        # The probe changed delta.content and nothing else iff putting the chunk's own
        # content back gives the chunk.
        delta = probed["choices"][0]["delta"] if _is_plain_text_chunk(probed) else None
        if delta is None or delta["content"] != _PROBE:
            return None
        delta["content"] = chunk["choices"][0]["delta"]["content"]
        return shape if probed == chunk else None


def _is_plain_text_chunk(chunk: Any) -> bool:
    """One choice whose delta is only a content string: no role, finish reason or usage."""
    if type(chunk) is not dict:
        return False
    choices = chunk.get("choices")
    if type(choices) is not list or len(choices) != 1 or chunk.get("usage"):
        return False
    choice = choices[0]
    if type(choice) is not dict or choice.get("finish_reason"):
        return False
    delta = choice.get("delta")
    return type(delta) is dict and len(delta) == 1 and type(delta.get("content")) is str


def _closing_quote(data: bytes, index: int) -> int:
    """The index of the quote that ends the JSON string whose body starts at ``index``."""
    while True:
        quote = data.find(b'"', index)
        if quote < 0:
            return -1
        backslashes = 0
        while data[quote - 1 - backslashes] == 0x5C:  # a backslash
            backslashes += 1
        if backslashes % 2 == 0:
            return quote
        index = quote + 1
