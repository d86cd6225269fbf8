"""pi_notebook.agent — the agent loop, its events, and the stateful ``Agent``.

Public names are re-exported here; import from ``pi_notebook.agent``.
"""

from ..ai import AbortController, AbortSignal
from ._hooks import field_of
from .agent import Agent, AgentBusyError, AgentState, default_convert_to_llm
from .compaction import (
    DEFAULT_KEEP_FRACTION,
    DEFAULT_THRESHOLD,
    Compaction,
    Compactor,
    overflow_retrying,
)
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
from .limits import (
    BudgetExceededError,
    RunLimits,
    budget_note,
    conversation_cost,
    format_usd,
    reply_cost,
    turn_note,
)
from .loop import (
    AgentEventStream,
    agent_loop,
    agent_loop_continue,
    run_agent_loop,
    run_agent_loop_continue,
)
from .queue import MessageQueue, QueueMode
from .request_purpose import RequestPurpose, request_purpose, requesting
from .sizes import estimate_tokens, message_chars, messages_tokens
from .summarise import SUMMARY_MARK, is_summary, summary_message
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
    "DEFAULT_KEEP_FRACTION",
    "DEFAULT_THRESHOLD",
    "SUMMARY_MARK",
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
    "BudgetExceededError",
    "Compaction",
    "Compactor",
    "MessageEndEvent",
    "MessageQueue",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "QueueMode",
    "RequestPurpose",
    "RunLimits",
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
    "budget_note",
    "conversation_cost",
    "default_convert_to_llm",
    "estimate_tokens",
    "field_of",
    "format_usd",
    "is_summary",
    "message_chars",
    "messages_tokens",
    "overflow_retrying",
    "reply_cost",
    "request_purpose",
    "requesting",
    "run_agent_loop",
    "run_agent_loop_continue",
    "summary_message",
    "truncated_call_text",
    "turn_note",
]
