"""Plain-text rendering of a transcript, for plain mode, ``%agent history`` and nbval.

The notebook context a run sent (a ``notebookContext`` message) is not part of the transcript
as read (``%agent history``): ``%agent context`` shows it as sent, ``%agent status`` names what
the last one held, and a run's own transcript (plain mode, the static transcript's text) has
one line naming what was sent (``notebook context: In[4], In[5] (KeyError: 'BMI')``).
The output is deterministic: no timestamps, timings, ids or token counts, so a notebook run in
plain mode gives the same text every time. Every rendering is redacted once, whole
(``pi_notebook.ai.redact``): the transcript may hold a key a user typed or a model echoed, the
output must not. This module must never print (callers decide where text goes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..ai import message_text, redact
from .context_sent import plain_line
from .failed_calls import never_ran_line, never_ran_reason
from .notebook_context import is_notebook_context

LENGTH_NOTE = "cut off at the output limit; raise it with %%agent --max-tokens N"
PREVIEW_CHARS = 10_000
"""At most this much of one tool result is shown (plain mode, the panel's card)."""


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """A tool result's text as shown: its first ``limit`` characters and how many more."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[… {len(text) - limit} more characters not shown]"


_FENCE_LINE = re.compile(r"\s*(`{3,}|~{3,})[\w+#.-]*\s*")


def shows_nothing(text: str) -> bool:
    """``text`` would show nothing but an empty bar: blank lines and bare code fences (a
    small model's stray "```" before its tool call). Such a text block is not shown."""
    return all(not line.strip() or _FENCE_LINE.fullmatch(line) for line in text.splitlines())


def _indent(text: str) -> str:
    return text.replace("\n", "\n    ")


def _message_lines(message: Any, context: bool = False) -> list[str]:
    role = getattr(message, "role", None)
    if is_notebook_context(message):  # the model's, not the conversation's: %agent context
        return [plain_line(message)] if context else []
    if role == "user":
        return [f"user: {_indent(message_text(message))}"]
    if role == "toolResult":
        flag = " (error)" if message.is_error else ""
        text = preview(message_text(message))
        return [f"tool {message.tool_name}{flag}: {_indent(text)}"]
    if role == "assistant":
        lines: list[str] = []
        # A failed reply's calls never ran (the server could not parse them, say): say so.
        failed = message.stop_reason == "error"
        for block in message.content:
            kind = block.type
            if kind == "text" and block.text and not shows_nothing(block.text):
                lines.append(f"assistant: {_indent(block.text)}")
            elif kind == "thinking" and block.thinking:
                lines.append(f"assistant (thinking): {_indent(block.thinking)}")
            elif kind == "toolCall":
                args = json.dumps(block.arguments, ensure_ascii=False, sort_keys=True)
                call = f"assistant -> {block.name}({args})"
                if failed:
                    call += f" — {never_ran_line(never_ran_reason(message.error_message))}"
                lines.append(call)
        if message.stop_reason in ("error", "aborted"):
            detail = f": {message.error_message}" if message.error_message else ""
            lines.append(f"assistant [{message.stop_reason}]{detail}")
        elif message.stop_reason == "length":  # the provider's note, when it cut the reply
            lines.append(f"assistant [length]: {message.error_message or LENGTH_NOTE}")
        return lines
    text = message_text(message)
    return [f"{role or 'custom'}: {_indent(text)}"] if text else []


def render_message(message: Any) -> list[str]:
    """One message's lines, redacted."""
    return [redact(line) for line in _message_lines(message)]


def render_transcript(
    messages: Sequence[Any],
    markers: Mapping[int, Sequence[str]] | None = None,
    *,
    context: bool = False,
) -> str:
    """The transcript as plain text, redacted (one pass over the whole text); ``markers``
    (such as ``compacted 12 messages``) are lines in brackets before the message at their
    index (or at the end, for the index after the last message); with ``context`` (a run's
    own transcript), a notebook context message is one line naming what was sent."""
    lines: list[str] = []
    for index, message in enumerate(messages):
        if markers:
            lines.extend(f"[{m}]" for m in markers.get(index, ()))
        lines.extend(_message_lines(message, context))
    if markers:
        lines.extend(f"[{m}]" for m in markers.get(len(messages), ()))
    return redact("\n".join(lines))


def final_text(messages: Sequence[Any]) -> str:
    """The text of the last assistant message ('' when there is none)."""
    for message in reversed(messages):
        if getattr(message, "role", None) == "assistant":
            return message_text(message, images=False, separator="")
    return ""


__all__ = [
    "LENGTH_NOTE",
    "PREVIEW_CHARS",
    "final_text",
    "preview",
    "render_message",
    "render_transcript",
    "shows_nothing",
]
