"""Stopping a reply that streams far past the output limit its request asked for.

A server that ignores ``max_tokens`` (a local server in a repetition loop, a proxy that drops
the field) would otherwise be read for as long as it streams. :class:`OutputMeter` sits between
a provider's decoder and the event stream, counts the characters of every streamed delta (text,
thinking, tool-call arguments) and says when they pass :func:`runaway_chars` of the limit the
request carried: :data:`CHARS_PER_TOKEN` characters a token, times :data:`RUNAWAY_FACTOR`, so
the cap scales with the limit and a reply the server kept within it is never touched. When the
server sends more after that (a reply that ended in the same read is left as it ended), the
driver stops reading and ends the reply as stop reason ``length`` with
:func:`ignored_limit_note` as its ``error_message``. The same rule covers every wire API, since
all of them stream through :func:`~pi_notebook.ai.providers._driver.run_provider`.

Counting costs one type lookup and one ``len`` per event; the meter never copies a message.
"""

from __future__ import annotations

from typing import Any

from ..events import (
    AssistantMessageEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from ..partial import end_event
from ..types import AssistantMessage

CHARS_PER_TOKEN = 4
"""A generous average of characters per token (English text is nearer 4, code 3, CJK 1-2)."""
RUNAWAY_FACTOR = 2
"""How far past the requested limit (in estimated characters) a reply may run before it is cut."""
MIN_RUNAWAY_CHARS = 4_096
"""The cap never goes below this, so a tiny limit cannot cut a reply the server kept to it."""

_DELTAS = frozenset({TextDeltaEvent, ThinkingDeltaEvent, ToolCallDeltaEvent})
_STARTS = frozenset({TextStartEvent, ThinkingStartEvent, ToolCallStartEvent})
_ENDS = frozenset({TextEndEvent, ThinkingEndEvent, ToolCallEndEvent})


def requested_tokens(body: Any) -> int | None:
    """The output limit a request body carries (any of the four wire APIs' fields), else None
    (a request without one has no limit for the server to ignore: it is read as it comes)."""
    if isinstance(body, dict):
        for key in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
            value = body.get(key)
            if isinstance(value, int) and value > 0:
                return value
        config = body.get("generationConfig")
        value = config.get("maxOutputTokens") if isinstance(config, dict) else None
        if isinstance(value, int) and value > 0:
            return value
    return None


def runaway_chars(tokens: int) -> int:
    """How many streamed characters a reply limited to ``tokens`` may reach before it is cut."""
    return max(tokens * CHARS_PER_TOKEN * RUNAWAY_FACTOR, MIN_RUNAWAY_CHARS)


def ignored_limit_note(tokens: int, chars: int) -> str:
    return (
        f"the server ignored the output limit of {tokens} tokens: stopped reading the reply "
        f"after {chars} characters"
    )


class OutputMeter:
    """A ``push`` that counts streamed characters and keeps track of the open blocks."""

    __slots__ = ("chars", "limit", "open", "push")

    def __init__(self, push: Any, limit: int) -> None:
        self.push = push
        self.limit = limit
        self.chars = 0
        self.open: dict[int, None] = {}

    def __call__(self, event: AssistantMessageEvent) -> None:
        kind = type(event)
        if kind in _DELTAS:
            self.chars += len(event.delta)  # type: ignore[union-attr]
        elif kind in _STARTS:
            self.open[event.content_index] = None  # type: ignore[union-attr]
        elif kind in _ENDS:
            self.open.pop(event.content_index, None)  # type: ignore[union-attr]
        self.push(event)

    @property
    def over(self) -> bool:
        return self.chars > self.limit

    def cut(self, output: AssistantMessage, tokens: int) -> None:
        """End the open blocks as they stand and mark ``output`` cut at the limit."""
        for index in sorted(self.open):
            if index < len(output.content):
                self.push(end_event(output, index))
        self.open.clear()
        output.stop_reason = "length"
        output.error_message = ignored_limit_note(tokens, self.chars)


__all__ = [
    "CHARS_PER_TOKEN",
    "MIN_RUNAWAY_CHARS",
    "RUNAWAY_FACTOR",
    "OutputMeter",
    "ignored_limit_note",
    "requested_tokens",
    "runaway_chars",
]
