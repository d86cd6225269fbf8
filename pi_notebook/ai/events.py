"""The assistant-message event protocol (reference 1.5), and Pi's JSON for any stream event.

A stream function yields ``start``, then for each content block ``*_start`` / ``*_delta`` /
``*_end``, then exactly one terminal ``done`` or ``error``. Every partial-carrying event holds
``partial``: the message under construction (the provider's live object, never a snapshot).

Events are made per token, so they are plain slotted dataclasses (cheapest to build
positionally, as providers do): never validated, never copied. ``type`` is a class constant, so
``event.type`` and ``match`` on the class both work and the type checker narrows on either.
Their JSON goes through :func:`dump_event`; messages and blocks inside stay pydantic models.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias

from pydantic import BaseModel

from ._base import camel
from .types import AssistantMessage, ToolCall


@dataclass(slots=True)
class StartEvent:
    type: ClassVar[Literal["start"]] = "start"
    partial: AssistantMessage


@dataclass(slots=True)
class TextStartEvent:
    type: ClassVar[Literal["text_start"]] = "text_start"
    content_index: int
    partial: AssistantMessage


@dataclass(slots=True)
class TextDeltaEvent:
    type: ClassVar[Literal["text_delta"]] = "text_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


@dataclass(slots=True)
class TextEndEvent:
    type: ClassVar[Literal["text_end"]] = "text_end"
    content_index: int
    content: str
    partial: AssistantMessage


@dataclass(slots=True)
class ThinkingStartEvent:
    type: ClassVar[Literal["thinking_start"]] = "thinking_start"
    content_index: int
    partial: AssistantMessage


@dataclass(slots=True)
class ThinkingDeltaEvent:
    type: ClassVar[Literal["thinking_delta"]] = "thinking_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


@dataclass(slots=True)
class ThinkingEndEvent:
    type: ClassVar[Literal["thinking_end"]] = "thinking_end"
    content_index: int
    content: str
    partial: AssistantMessage


@dataclass(slots=True)
class ToolCallStartEvent:
    type: ClassVar[Literal["toolcall_start"]] = "toolcall_start"
    content_index: int
    partial: AssistantMessage


@dataclass(slots=True)
class ToolCallDeltaEvent:
    type: ClassVar[Literal["toolcall_delta"]] = "toolcall_delta"
    content_index: int
    delta: str
    """A raw JSON fragment of the arguments."""
    partial: AssistantMessage


@dataclass(slots=True)
class ToolCallEndEvent:
    type: ClassVar[Literal["toolcall_end"]] = "toolcall_end"
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage


@dataclass(slots=True)
class DoneEvent:
    type: ClassVar[Literal["done"]] = "done"
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage


@dataclass(slots=True)
class ErrorEvent:
    type: ClassVar[Literal["error"]] = "error"
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


def dump_event(event: Any) -> dict[str, Any]:
    """Pi's JSON for a stream or agent event: ``type`` first, camelCase keys, the messages,
    blocks and results inside as their own Pi JSON (absent optionals left out)."""
    data: dict[str, Any] = {"type": event.type}
    for field in dataclasses.fields(event):
        data[camel(field.name)] = _json_value(getattr(event, field.name))
    return data


def _json_value(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dump_event(value)
    if isinstance(value, list | tuple):
        return [_json_value(item) for item in value]
    return value
