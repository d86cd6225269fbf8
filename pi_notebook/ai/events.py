"""The assistant-message event protocol (reference 1.5).

A stream function yields ``start``, then for each content block ``*_start`` / ``*_delta`` /
``*_end``, then exactly one terminal ``done`` or ``error``. Every partial-carrying event holds
``partial``: the message under construction (the provider's live object or a shallow copy of
it, never a deep snapshot).
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from ._base import EventModel
from .types import AssistantMessage, ToolCall


class StartEvent(EventModel):
    type: Literal["start"] = "start"
    partial: AssistantMessage


class TextStartEvent(EventModel):
    type: Literal["text_start"] = "text_start"
    content_index: int
    partial: AssistantMessage


class TextDeltaEvent(EventModel):
    type: Literal["text_delta"] = "text_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class TextEndEvent(EventModel):
    type: Literal["text_end"] = "text_end"
    content_index: int
    content: str
    partial: AssistantMessage


class ThinkingStartEvent(EventModel):
    type: Literal["thinking_start"] = "thinking_start"
    content_index: int
    partial: AssistantMessage


class ThinkingDeltaEvent(EventModel):
    type: Literal["thinking_delta"] = "thinking_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class ThinkingEndEvent(EventModel):
    type: Literal["thinking_end"] = "thinking_end"
    content_index: int
    content: str
    partial: AssistantMessage


class ToolCallStartEvent(EventModel):
    type: Literal["toolcall_start"] = "toolcall_start"
    content_index: int
    partial: AssistantMessage


class ToolCallDeltaEvent(EventModel):
    type: Literal["toolcall_delta"] = "toolcall_delta"
    content_index: int
    delta: str
    """A raw JSON fragment of the arguments."""
    partial: AssistantMessage


class ToolCallEndEvent(EventModel):
    type: Literal["toolcall_end"] = "toolcall_end"
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage


class DoneEvent(EventModel):
    type: Literal["done"] = "done"
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage


class ErrorEvent(EventModel):
    type: Literal["error"] = "error"
    reason: Literal["aborted", "error"]
    error: AssistantMessage


PartialEvent: TypeAlias = (
    TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
)
AssistantMessageEvent: TypeAlias = StartEvent | PartialEvent | DoneEvent | ErrorEvent
