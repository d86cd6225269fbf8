"""The ten agent lifecycle events (reference 1.10).

``agent_start`` … ``agent_end`` bracket a run; ``turn_start`` / ``turn_end`` bracket one model
call and its tool batch; ``message_*`` follow every message entering the transcript
(``message_update`` only for the streaming assistant); ``tool_execution_*`` follow each tool call.

``message_update`` is made per token, so every event is a plain slotted dataclass, built
positionally by the loop, never validated or copied; ``type`` is a class constant. Pi's JSON of
an event is :func:`pi_notebook.ai.dump_event`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias, get_args

from ..ai import AgentMessage, AssistantMessage, AssistantMessageEvent, ToolResultMessage
from .types import AgentToolResult


@dataclass(slots=True)
class AgentStartEvent:
    type: ClassVar[Literal["agent_start"]] = "agent_start"


@dataclass(slots=True)
class AgentEndEvent:
    type: ClassVar[Literal["agent_end"]] = "agent_end"
    messages: list[AgentMessage]
    """Every message this run added to the transcript."""


@dataclass(slots=True)
class TurnStartEvent:
    type: ClassVar[Literal["turn_start"]] = "turn_start"


@dataclass(slots=True)
class TurnEndEvent:
    type: ClassVar[Literal["turn_end"]] = "turn_end"
    message: AssistantMessage
    tool_results: list[ToolResultMessage]


@dataclass(slots=True)
class MessageStartEvent:
    type: ClassVar[Literal["message_start"]] = "message_start"
    message: AgentMessage


@dataclass(slots=True)
class MessageUpdateEvent:
    type: ClassVar[Literal["message_update"]] = "message_update"
    message: AssistantMessage
    """A shallow copy of the partial message: top-level fields frozen, content shared."""
    assistant_message_event: AssistantMessageEvent


@dataclass(slots=True)
class MessageEndEvent:
    type: ClassVar[Literal["message_end"]] = "message_end"
    message: AgentMessage


@dataclass(slots=True)
class ToolExecutionStartEvent:
    type: ClassVar[Literal["tool_execution_start"]] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    """The raw, unvalidated arguments from the model."""


@dataclass(slots=True)
class ToolExecutionUpdateEvent:
    type: ClassVar[Literal["tool_execution_update"]] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    partial_result: AgentToolResult


@dataclass(slots=True)
class ToolExecutionEndEvent:
    type: ClassVar[Literal["tool_execution_end"]] = "tool_execution_end"
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

AgentEventSink: TypeAlias = Callable[[AgentEvent], Awaitable[None] | None]
"""Where the loop's events go (Pi's sink): called with each event; an awaitable it returns is
awaited before the loop goes on. A plain function that returns nothing costs no task switch."""

AGENT_EVENT_TYPES: tuple[str, ...] = tuple(event.type for event in get_args(AgentEvent))
"""The ten ``type`` strings, in the order above."""

__all__ = [
    "AGENT_EVENT_TYPES",
    "AgentEndEvent",
    "AgentEvent",
    "AgentEventSink",
    "AgentStartEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TurnEndEvent",
    "TurnStartEvent",
]
