"""Growing a partial assistant message by one streamed delta, for every provider.

Each function appends the delta to the block in place (amortised O(len(delta)), never a copy
of the block, the message or the transcript) and returns the event to push. Providers call
these on the per-token path; they never validate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ._base import bare_instance, set_fields, trusted
from .events import ErrorEvent, TextDeltaEvent, ThinkingDeltaEvent
from .types import AssistantMessage, now_ms

D = TypeVar("D", TextDeltaEvent, ThinkingDeltaEvent)

REQUEST_ABORTED = "Request was aborted"
"""The ``error_message`` of every reply cut short by an abort (Pi's text)."""


def _grower(
    event_class: type[D], event_type: str, field: str
) -> Callable[[AssistantMessage, int, str], D]:
    def grow(partial: AssistantMessage, index: int, delta: str) -> D:
        # Taking the string out of the block's dict leaves ``value`` its only reference, so
        # CPython grows it in place: amortised O(len(delta)), where ``block.text += delta``
        # would copy the whole text on every token.
        fields = partial.content[index].__dict__
        value: str = fields.pop(field)
        value += delta
        fields[field] = value
        event = bare_instance(event_class)  # trusted(), inlined
        set_fields(
            event,
            {"type": event_type, "content_index": index, "delta": delta, "partial": partial},
        )
        return event

    return grow


grow_text = _grower(TextDeltaEvent, "text_delta", "text")
"""Append ``delta`` to the text block ``partial.content[index]``; returns its ``text_delta``."""

grow_thinking = _grower(ThinkingDeltaEvent, "thinking_delta", "thinking")
"""Append ``delta`` to the thinking block ``partial.content[index]``; its ``thinking_delta``."""


def aborted_event(partial: AssistantMessage) -> ErrorEvent:
    """The terminal ``error`` event of a stream aborted mid-reply: ``partial`` as it stands."""
    message = partial.model_copy(
        update={"stop_reason": "aborted", "error_message": REQUEST_ABORTED, "timestamp": now_ms()}
    )
    return trusted(ErrorEvent, {"type": "error", "reason": "aborted", "error": message})
