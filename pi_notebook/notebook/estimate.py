"""Token estimates where the provider has not reported usage: Pi's 4 characters a token
(``pi-ai``'s ``utils/estimate``).

:func:`estimate_context_tokens` is Pi's ``estimateContextTokens``: the usage the last finished
assistant reply reported, plus an estimate of the messages after it; with no such reply, every
message, the system prompt and the tools' JSON. The panel calls it once per model request
(never per token), on what the request sent (:func:`estimate_request_tokens`: a compacted
request is estimated message by message), to show the prompt's size while the model thinks,
and counts the streamed reply as it arrives (:data:`CHARS_PER_TOKEN`); the output limit is
clamped with it to the context window, as Pi does. Estimates are shown as such, never written
into a message's ``usage``. This module must stay pure: it reads messages and never changes
them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..agent import estimate_tokens, is_summary, message_chars

CHARS_PER_TOKEN = 4


def tokens_of_chars(chars: int) -> int:
    return estimate_tokens(chars)


def estimate_message_tokens(message: Any) -> int:
    """A message's tokens as Pi estimates them (its characters, an image as 4,800, over 4)."""
    return estimate_tokens(message_chars(message))


def _json(value: Any) -> str:
    try:
        return json.dumps(value, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return "[unserializable]"


def _reported(message: Any) -> int:
    usage = getattr(message, "usage", None)
    if usage is None:
        return 0
    total = int(usage.total_tokens or 0)
    return total or usage.input + usage.output + usage.cache_read + usage.cache_write


def estimate_context_tokens(
    messages: Sequence[Any],
    system_prompt: str = "",
    tools: Sequence[Any] = (),
    *,
    reported: bool = True,
) -> int:
    """About how many tokens a request with these messages, system prompt and tools has
    (without ``reported``, the usage replies reported is not used: every message is estimated)."""
    last = _last_reported(messages) if reported else None
    if last is not None:
        trailing = sum(estimate_message_tokens(m) for m in messages[last + 1 :])
        return _reported(messages[last]) + trailing
    tokens = sum(estimate_message_tokens(m) for m in messages)
    if system_prompt:
        tokens += tokens_of_chars(len(system_prompt))
    if tools:
        described = [
            {"name": t.name, "description": t.description, "parameters": _schema(t)}
            for t in tools
        ]
        tokens += tokens_of_chars(len(_json(described)))
    return tokens


def estimate_request_tokens(
    messages: Sequence[Any], system_prompt: str = "", tools: Sequence[Any] = ()
) -> int:
    """About how many tokens the request that was sent with these messages has.

    As :func:`estimate_context_tokens`, except for a compacted request (its messages open with
    a compaction summary): the usage an earlier reply reported counted the messages the summary
    replaced, so every message sent is estimated instead.
    """
    compacted = bool(messages) and is_summary(messages[0])
    return estimate_context_tokens(messages, system_prompt, tools, reported=not compacted)


def _last_reported(messages: Sequence[Any]) -> int | None:
    """The index of the last finished assistant reply that reported its usage, or None."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if (
            getattr(message, "role", None) == "assistant"
            and message.stop_reason not in ("aborted", "error")
            and _reported(message) > 0
        ):
            return index
    return None


def _schema(tool: Any) -> Any:
    schema = getattr(tool, "json_schema", None)
    try:
        return schema() if callable(schema) else getattr(tool, "parameters", {})
    except Exception:  # a tool whose schema cannot be built still counts its name
        return {}


__all__ = [
    "CHARS_PER_TOKEN",
    "estimate_context_tokens",
    "estimate_message_tokens",
    "estimate_request_tokens",
    "tokens_of_chars",
]
