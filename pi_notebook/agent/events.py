"""The ten agent lifecycle events (reference 1.10).

``agent_start`` … ``agent_end`` bracket a run; ``turn_start`` / ``turn_end`` bracket one model
call and its tool batch; ``message_*`` follow every message entering the transcript
(``message_update`` only for the streaming assistant); ``tool_execution_*`` follow each tool call.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from ..ai import AgentMessage, AssistantMessage, AssistantMessageEvent, ToolResultMessage
from ..ai._base import EventModel
from .types import AgentToolResult


class AgentStartEvent(EventModel):
    type: Literal["agent_start"] = "agent_start"


class AgentEndEvent(EventModel):
    type: Literal["agent_end"] = "agent_end"
    messages: list[Any]
    """Every message this run added to the transcript."""


class TurnStartEvent(EventModel):
    type: Literal["turn_start"] = "turn_start"


class TurnEndEvent(EventModel):
    type: Literal["turn_end"] = "turn_end"
    message: AssistantMessage
    tool_results: list[ToolResultMessage]


class MessageStartEvent(EventModel):
    type: Literal["message_start"] = "message_start"
    message: Any


class MessageUpdateEvent(EventModel):
    type: Literal["message_update"] = "message_update"
    message: AssistantMessage
    """A shallow copy of the partial message: top-level fields frozen, content shared."""
    assistant_message_event: Any


class MessageEndEvent(EventModel):
    type: Literal["message_end"] = "message_end"
    message: Any


class ToolExecutionStartEvent(EventModel):
    type: Literal["tool_execution_start"] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: Any
    """The raw, unvalidated arguments from the model."""


class ToolExecutionUpdateEvent(EventModel):
    type: Literal["tool_execution_update"] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    args: Any
    partial_result: AgentToolResult


class ToolExecutionEndEvent(EventModel):
    type: Literal["tool_execution_end"] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: AgentToolResult
    is_error: bool


AgentEvent: TypeAlias = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
)

AGENT_EVENT_TYPES = (
    "agent_start",
    "agent_end",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
)

__all__ = [
    "AGENT_EVENT_TYPES",
    "AgentEndEvent",
    "AgentEvent",
    "AgentMessage",
    "AgentStartEvent",
    "AssistantMessageEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TurnEndEvent",
    "TurnStartEvent",
]
