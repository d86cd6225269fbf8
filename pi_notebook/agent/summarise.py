"""The summary request of a compaction: the older part of a transcript, written out as text,
sent to the model with instructions to summarise it, and the summary message that replaces it.

The part to summarise goes as one user message of plain text (roles in brackets, tool calls
and results written out, long texts cut in the middle), so the request needs no tools and
never carries a tool call without its result. This module must never change the messages it
reads, and never raises for a failed request: the reply (an ``error`` / ``aborted`` one too)
is the caller's to judge.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..ai import (
    AgentMessage,
    AssistantMessage,
    Context,
    Model,
    StreamFunction,
    StreamOptions,
    TextContent,
    UserMessage,
    maybe_await,
    message_text,
    now_ms,
)

SUMMARY_SYSTEM = (
    "You summarise the earlier part of a conversation between a user and an AI assistant "
    "working in a Jupyter notebook, so that the assistant can continue the conversation "
    "from the summary alone. Write only the summary."
)
SUMMARY_INSTRUCTIONS = (
    "Summarise the conversation above. Keep: the user's goals and requests; decisions made; "
    "facts found (names of variables, DataFrames and columns, numbers, file paths, errors); "
    "what the tools did and what they returned, briefly; what is still open. Be concise; "
    "use short bullet points."
)
#: The first line of every summary message: how the model, a listener or a test knows it.
SUMMARY_MARK = "[compacted conversation: a summary of {count} earlier messages]"
#: Longest text of one message in the summary request (longer ones are cut in the middle).
MESSAGE_CHARS = 4_000


def summary_message(text: str, count: int) -> UserMessage:
    """The message the model sees instead of the ``count`` messages summarised."""
    body = f"{SUMMARY_MARK.format(count=count)}\n<summary>\n{text.strip()}\n</summary>"
    return UserMessage(content=[TextContent(text=body)], timestamp=now_ms())


def is_summary(message: Any) -> bool:
    content = getattr(message, "content", None)
    if getattr(message, "role", None) != "user" or not isinstance(content, list) or not content:
        return False
    first = content[0]
    return getattr(first, "type", None) == "text" and first.text.startswith(
        "[compacted conversation: "
    )


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - 2 * half} characters left out …]\n{text[-half:]}"


def _lines(message: Any) -> list[str]:
    role = getattr(message, "role", None)
    if role == "assistant":
        lines = []
        for block in message.content:
            if block.type == "text" and block.text:
                lines.append(f"[assistant]: {_cut(block.text, MESSAGE_CHARS)}")
            elif block.type == "thinking" and block.thinking:
                lines.append(f"[assistant thinking]: {_cut(block.thinking, MESSAGE_CHARS)}")
            elif block.type == "toolCall":
                args = json.dumps(block.arguments, ensure_ascii=False, default=str)
                lines.append(f"[assistant calls {block.name}]: {_cut(args, MESSAGE_CHARS)}")
        if message.stop_reason in ("error", "aborted"):
            lines.append(f"[assistant {message.stop_reason}]: {message.error_message or ''}")
        return lines
    text = _cut(message_text(message), MESSAGE_CHARS)
    if role == "toolResult":
        flag = " (error)" if message.is_error else ""
        return [f"[tool result of {message.tool_name}{flag}]: {text}"]
    if role == "user" and is_summary(message):
        return [f"[summary of what came before]: {text}"]
    return [f"[{role or 'custom'}]: {text}"] if text else []


def conversation_text(messages: Sequence[AgentMessage], limit: int) -> str:
    """The messages as plain text, at most about ``limit`` characters (cut in the middle)."""
    lines = [line for message in messages for line in _lines(message)]
    return _cut("\n\n".join(lines), max(limit, 1_000))


def summary_request(messages: Sequence[AgentMessage], limit: int) -> Context:
    """The request that summarises ``messages`` (no tools; one user message)."""
    text = conversation_text(messages, limit)
    prompt = f"<conversation>\n{text}\n</conversation>\n\n{SUMMARY_INSTRUCTIONS}"
    return Context(
        system_prompt=SUMMARY_SYSTEM,
        messages=[UserMessage(content=[TextContent(text=prompt)], timestamp=now_ms())],
        tools=[],
    )


async def request_summary(
    stream_fn: StreamFunction, model: Model, context: Context, options: StreamOptions
) -> AssistantMessage:
    """Run the summary request to its final message (which may be an error or aborted)."""
    response = await maybe_await(stream_fn(model, context, options))
    return await response.result()


def reply_text(message: AssistantMessage) -> str:
    return message_text(message, images=False, separator="").strip()


__all__ = [
    "SUMMARY_INSTRUCTIONS",
    "SUMMARY_MARK",
    "SUMMARY_SYSTEM",
    "conversation_text",
    "is_summary",
    "reply_text",
    "request_summary",
    "summary_message",
    "summary_request",
]
