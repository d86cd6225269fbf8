"""Growing a partial assistant message by one streamed delta, for every provider.

Each function appends the delta to the block in place (amortised O(len(delta)), never a copy
of the block, the message or the transcript) and returns the event to push. Providers, the
faux model and replay call these on the per-token path; they never validate, but a delta
carrying a lone surrogate (a JSON ``"\ud800"`` escape) is cleaned first (an ASCII delta costs
one O(1) ``isascii``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .events import (
    ErrorEvent,
    TextDeltaEvent,
    TextEndEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
)
from .json_incremental import IncrementalJsonObject
from .surrogates import clean_surrogates
from .types import AssistantMessage, now_ms

D = TypeVar("D", TextDeltaEvent, ThinkingDeltaEvent)

RawArguments = dict[int, IncrementalJsonObject]
"""A provider's scratch for its streaming tool calls: content index -> arguments so far."""

REQUEST_ABORTED = "Request was aborted"
"""The ``error_message`` of every reply cut short by an abort (Pi's text)."""


def _grower(event_class: type[D], field: str) -> Callable[[AssistantMessage, int, str], D]:
    def grow(partial: AssistantMessage, index: int, delta: str) -> D:
        if not delta.isascii():
            delta = clean_surrogates(delta)
        # Taking the string out of the block's dict leaves ``value`` its only reference, so
        # CPython grows it in place: amortised O(len(delta)), where ``block.text += delta``
        # would copy the whole text on every token.
        fields = partial.content[index].__dict__
        value: str = fields.pop(field)
        value += delta
        fields[field] = value
        return event_class(index, delta, partial)

    return grow


grow_text = _grower(TextDeltaEvent, "text")
"""Append ``delta`` to the text block ``partial.content[index]``; returns its ``text_delta``."""

grow_thinking = _grower(ThinkingDeltaEvent, "thinking")
"""Append ``delta`` to the thinking block ``partial.content[index]``; its ``thinking_delta``."""


def grow_tool_call(
    partial: AssistantMessage, index: int, raw: RawArguments, fragment: str
) -> ToolCallDeltaEvent:
    """Append ``fragment`` to ``raw[index]``, the raw JSON arguments of the tool call
    ``partial.content[index]``, and set its ``arguments`` to their partial parse (``{}`` unless
    an object); returns its ``toolcall_delta``.

    ``raw`` is the caller's scratch (content index -> arguments so far, with the parser's
    state, so a fragment costs work in proportion to its length), kept off the block.
    """
    if not fragment.isascii():
        fragment = clean_surrogates(fragment)
    arguments = raw.get(index)
    if arguments is None:
        arguments = raw[index] = IncrementalJsonObject()
    block: Any = partial.content[index]
    block.arguments = arguments.feed(fragment)
    return ToolCallDeltaEvent(index, fragment, partial)


def end_event(
    partial: AssistantMessage, index: int
) -> TextEndEvent | ThinkingEndEvent | ToolCallEndEvent:
    """The ``*_end`` event of the block ``partial.content[index]``, as it stands."""
    block = partial.content[index]
    if block.type == "text":
        return TextEndEvent(index, block.text, partial)
    if block.type == "thinking":
        return ThinkingEndEvent(index, block.thinking, partial)
    return ToolCallEndEvent(index, block, partial)


def aborted_event(partial: AssistantMessage) -> ErrorEvent:
    """The terminal ``error`` event of a stream aborted mid-reply: ``partial`` as it stands."""
    message = partial.model_copy(
        update={"stop_reason": "aborted", "error_message": REQUEST_ABORTED, "timestamp": now_ms()}
    )
    return ErrorEvent("aborted", message)
