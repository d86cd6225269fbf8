"""pi_notebook.agent — the agent loop, its events, and the stateful ``Agent``.

Public names are re-exported here; import from ``pi_notebook.agent``.
"""

from ..ai import AbortController, AbortSignal
from ._hooks import field_of
from .agent import Agent, AgentBusyError, AgentState, default_convert_to_llm
from .events import (
    AGENT_EVENT_TYPES,
    AgentEndEvent,
    AgentEvent,
    AgentEventSink,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from .loop import (
    AgentEventStream,
    agent_loop,
    agent_loop_continue,
    run_agent_loop,
    run_agent_loop_continue,
)
from .queue import MessageQueue, QueueMode
from .tool_batch import truncated_call_text
from .types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    ToolExecutionMode,
    ToolFailure,
    ToolUpdate,
    TurnContext,
    TurnUpdate,
)

__all__ = [
    "AGENT_EVENT_TYPES",
    "AbortController",
    "AbortSignal",
    "AfterToolCallContext",
    "AfterToolCallResult",
    "Agent",
    "AgentBusyError",
    "AgentContext",
    "AgentEndEvent",
    "AgentEvent",
    "AgentEventSink",
    "AgentEventStream",
    "AgentLoopConfig",
    "AgentStartEvent",
    "AgentState",
    "AgentTool",
    "AgentToolResult",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "MessageEndEvent",
    "MessageQueue",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "QueueMode",
    "ToolExecutionEndEvent",
    "ToolExecutionMode",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolFailure",
    "ToolUpdate",
    "TurnContext",
    "TurnEndEvent",
    "TurnStartEvent",
    "TurnUpdate",
    "agent_loop",
    "agent_loop_continue",
    "default_convert_to_llm",
    "field_of",
    "run_agent_loop",
    "run_agent_loop_continue",
    "truncated_call_text",
]
