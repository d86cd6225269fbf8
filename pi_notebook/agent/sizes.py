"""Size estimates of messages, in characters and tokens (Pi's 4 characters a token).

Used where no provider figure exists: the cost of a reply whose provider reported no usage,
and the context size before a request (compaction). An estimate only: it must stay cheap (one
pass over a message's blocks, no rendering of the transcript) and must never raise on a
message it does not know (custom roles count their text, or nothing).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

#: Characters an image counts for (Pi's compaction estimate: 1,200 tokens an image).
IMAGE_CHARS = 4_800


def message_chars(message: Any) -> int:
    """The characters of a message's text, thinking, tool-call arguments and images."""
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content or ():
        kind = getattr(block, "type", None)
        if kind == "text":
            total += len(block.text)
        elif kind == "thinking":
            total += len(block.thinking)
        elif kind == "toolCall":
            total += len(block.name) + len(_json(block.arguments))
        elif kind == "image":
            total += IMAGE_CHARS
    return total


def estimate_tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def messages_tokens(messages: Iterable[Any]) -> int:
    """Estimated tokens of ``messages`` (chars / 4)."""
    return estimate_tokens(sum(message_chars(m) for m in messages))


def _json(value: Any) -> str:
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


__all__ = ["IMAGE_CHARS", "estimate_tokens", "message_chars", "messages_tokens"]
