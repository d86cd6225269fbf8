"""Cross-provider history hygiene (reference 1.7), run by providers before building a request.

It returns a new list and never mutates the messages it is given: a transcript that went
through an error, an abort or a model switch still becomes a history every provider accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .types import (
    AssistantContent,
    AssistantMessage,
    Model,
    TextContent,
    ToolResultMessage,
)

NO_RESULT = "No result provided"
IMAGE_OMITTED = "(image omitted: model does not support images)"
TOOL_IMAGE_OMITTED = "(tool image omitted: model does not support images)"


def _replace_images(content: list[Any], note: str) -> list[Any]:
    out: list[Any] = []
    previous_was_note = False  # an image right after a note (ours or an earlier one) adds none
    for block in content:
        if block.type == "image":
            if not previous_was_note:
                out.append(TextContent(text=note))
            previous_was_note = True
        else:
            out.append(block)
            previous_was_note = block.type == "text" and block.text == note
    return out


def _same_model(message: AssistantMessage, model: Model) -> bool:
    return (
        message.provider == model.provider
        and message.api == model.api
        and message.model == model.id
    )


def _foreign_assistant(
    message: AssistantMessage, normalize_id: Callable[[str], str] | None, id_map: dict[str, str]
) -> AssistantMessage:
    blocks: list[AssistantContent] = []
    for block in message.content:
        if block.type == "thinking":
            if block.redacted or not block.thinking.strip():
                continue
            blocks.append(TextContent(text=block.thinking))
        elif block.type == "text":
            blocks.append(TextContent(text=block.text))  # provider replay metadata is dropped
        elif block.type == "toolCall":
            new_id = normalize_id(block.id) if normalize_id else block.id
            if new_id != block.id:
                id_map[block.id] = new_id
            if new_id != block.id or block.thought_signature is not None:
                block = block.model_copy(update={"id": new_id, "thought_signature": None})
            blocks.append(block)
        else:
            blocks.append(block)
    return message.model_copy(update={"content": blocks})


def _empty_unsigned_thinking(block: Any) -> bool:
    return (
        block.type == "thinking"
        and not block.redacted
        and not block.thinking_signature
        and not block.thinking.strip()
    )


def _synthetic_result(call_id: str, name: str) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id,
        tool_name=name,
        content=[TextContent(text=NO_RESULT)],
        is_error=True,
    )


def transform_messages(
    messages: Sequence[Any],
    model: Model,
    normalize_tool_call_id: Callable[[str], str] | None = None,
) -> list[Any]:
    """Make ``messages`` safe to send to ``model`` (see the module docstring)."""
    supports_images = "image" in model.input
    id_map: dict[str, str] = {}
    first_pass: list[Any] = []
    for message in messages:
        role = getattr(message, "role", None)
        if role == "user":
            content = message.content
            if (
                not supports_images
                and isinstance(content, list)
                and any(b.type == "image" for b in content)
            ):
                message = message.model_copy(
                    update={"content": _replace_images(content, IMAGE_OMITTED)}
                )
        elif role == "toolResult":
            update: dict[str, Any] = {}
            if not supports_images and any(b.type == "image" for b in message.content):
                update["content"] = _replace_images(message.content, TOOL_IMAGE_OMITTED)
            if message.tool_call_id in id_map:
                update["tool_call_id"] = id_map[message.tool_call_id]
            if update:
                message = message.model_copy(update=update)
        elif role == "assistant":
            if not _same_model(message, model):
                message = _foreign_assistant(message, normalize_tool_call_id, id_map)
            elif any(_empty_unsigned_thinking(b) for b in message.content):
                message = message.model_copy(
                    update={
                        "content": [b for b in message.content if not _empty_unsigned_thinking(b)]
                    }
                )
        first_pass.append(message)

    result: list[Any] = []
    open_calls: dict[str, str] = {}  # id -> name, calls of the last assistant not yet answered

    def close_open_calls() -> None:
        for call_id, name in open_calls.items():
            result.append(_synthetic_result(call_id, name))
        open_calls.clear()

    for message in first_pass:
        role = getattr(message, "role", None)
        if role == "assistant":
            close_open_calls()
            if message.stop_reason in ("error", "aborted"):
                continue
            result.append(message)
            for block in message.content:
                if block.type == "toolCall":
                    open_calls[block.id] = block.name
        elif role == "toolResult":
            open_calls.pop(message.tool_call_id, None)
            result.append(message)
        elif role == "user":
            close_open_calls()
            result.append(message)
        else:
            result.append(message)
    close_open_calls()
    return result


def is_valid_history(messages: Sequence[Any]) -> bool:
    """True when every tool call is answered before the next user or assistant message."""
    open_calls: set[str] = set()
    for message in messages:
        role = getattr(message, "role", None)
        if role in ("user", "assistant") and open_calls:
            return False
        if role == "assistant":
            open_calls = {b.id for b in message.content if b.type == "toolCall"}
        elif role == "toolResult":
            open_calls.discard(message.tool_call_id)
    return not open_calls


__all__ = ["is_valid_history", "transform_messages"]
