"""One message's (or one content's) readable text, with options for what it includes.

Transcripts, summaries, the panel, the context view and the queue lines all read a message as
text; they differ only in what they keep (thinking, tool calls, images), how blocks are joined
and how long the text may be. :func:`message_text` is that one reading, so a new block kind or
a changed spelling is decided once.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

#: What an image reads as in a text (``[image image/png]``).
IMAGE_FORMAT = "[image {mime}]"


def message_text(
    source: Any,
    *,
    thinking: bool = False,
    tool_calls: bool = False,
    images: bool = True,
    hidden_images: Collection[str] = (),
    separator: str = "\n",
    one_line: bool = False,
    limit: int | None = None,
) -> str:
    """The text of ``source``: a message (any role) or a content (a string or a list of blocks).

    Text blocks are always kept (an empty one too: it is an empty line); with ``thinking`` a
    thinking block reads ``(thinking) TEXT``; with ``tool_calls`` a tool call reads
    ``→ name({"json": "args"})``; with ``images`` an image reads ``[image MIME]``, except the
    types in ``hidden_images`` (shown some other way). Blocks are joined with ``separator``;
    ``one_line`` collapses all whitespace to single spaces; ``limit`` cuts the text to that many
    characters, the last one an ellipsis.
    """
    content = source if isinstance(source, str | list | tuple) else getattr(source, "content", "")
    if isinstance(content, str):
        text = content
    else:
        parts: list[str] = []
        for block in content or ():
            kind = getattr(block, "type", None)
            if kind == "text":
                parts.append(block.text)
            elif kind == "thinking":
                if thinking:
                    parts.append(f"(thinking) {block.thinking}")
            elif kind == "toolCall":
                if tool_calls:
                    args = json.dumps(block.arguments, ensure_ascii=False, default=str)
                    parts.append(f"→ {block.name}({args})")
            elif kind == "image" and images and block.mime_type not in hidden_images:
                parts.append(IMAGE_FORMAT.format(mime=block.mime_type))
        text = separator.join(parts)
    if one_line:
        text = " ".join(text.split())
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    return text


__all__ = ["IMAGE_FORMAT", "message_text"]
