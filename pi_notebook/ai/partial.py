"""Growing a partial assistant message by one streamed delta, for every provider.

Each function appends the delta to the block in place (amortised O(len(delta)), never a copy
of the block, the message or the transcript) and returns the event to push. Providers call
these on the per-token path; they never validate.
"""

from __future__ import annotations

from ._base import trusted
from .events import ErrorEvent, TextDeltaEvent, ThinkingDeltaEvent
from .types import AssistantMessage, now_ms

REQUEST_ABORTED = "Request was aborted"
"""The ``error_message`` of every reply cut short by an abort (Pi's text)."""


def grow_text(partial: AssistantMessage, index: int, delta: str) -> TextDeltaEvent:
    """Append ``delta`` to the text block ``partial.content[index]``."""
    fields = partial.content[index].__dict__  # append_str() inlined: this runs per token
    text: str = fields.pop("text")
    text += delta
    fields["text"] = text
    return trusted(
        TextDeltaEvent,
        {"type": "text_delta", "content_index": index, "delta": delta, "partial": partial},
    )


def grow_thinking(partial: AssistantMessage, index: int, delta: str) -> ThinkingDeltaEvent:
    """Append ``delta`` to the thinking block ``partial.content[index]``."""
    fields = partial.content[index].__dict__
    thinking: str = fields.pop("thinking")
    thinking += delta
    fields["thinking"] = thinking
    return trusted(
        ThinkingDeltaEvent,
        {"type": "thinking_delta", "content_index": index, "delta": delta, "partial": partial},
    )


def aborted_event(partial: AssistantMessage) -> ErrorEvent:
    """The terminal ``error`` event of a stream aborted mid-reply: ``partial`` as it stands."""
    message = partial.model_copy(
        update={"stop_reason": "aborted", "error_message": REQUEST_ABORTED, "timestamp": now_ms()}
    )
    return trusted(ErrorEvent, {"type": "error", "reason": "aborted", "error": message})
