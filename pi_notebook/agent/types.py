"""Contracts of the agent layer: tools, context, loop configuration and hook payloads.

Each callable's rule is written where it is declared. Hooks may be plain functions or
coroutine functions; the loop awaits whatever they return when it is awaitable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pydantic import Field

from ..ai import (
    AbortSignal,
    AgentMessage,
    AgentThinkingLevel,
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    StreamOptions,
    TextContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    WireModel,
)

ToolExecutionMode: TypeAlias = Literal["sequential", "parallel"]


class AgentToolResult(WireModel):
    """What a tool returns. ``terminate=True`` on every result of a batch ends the run."""

    content: list[TextContent | ImageContent] = Field(default_factory=list)
    details: Any = None
    usage: Usage | None = None
    added_tool_names: list[str] | None = None
    terminate: bool = False


class ToolFailure(Exception):
    """Raise from a tool to fail the call and keep ``details`` on its error result.

    Any other exception fails the call too (its text is the error result), with empty details,
    as in Pi; this one lets a tool say what it did before failing (say, the variables it wrote).
    """

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.details = details


ToolUpdate: TypeAlias = Callable[[AgentToolResult], None]


class AgentTool(Tool):
    """A tool the agent can run: a :class:`~pi_notebook.ai.Tool` plus ``execute``."""

    label: str = ""
    execute: Callable[..., Any]
    """``execute(tool_call_id, params, signal, on_update)`` returns an
    :class:`AgentToolResult` (or an awaitable of one).

    Raise on failure (the loop turns the exception into an error result); do not encode
    errors in the content. ``on_update(partial)`` (a :data:`ToolUpdate`) streams progress
    (accumulated, not deltas); calls after the tool settled are ignored.
    """
    execution_mode: ToolExecutionMode | None = None
    writes_namespace: bool = False
    """The tool writes notebook variables or runs code: ``--approve writes`` asks before it."""
    prepare_arguments: Callable[[Any], Any] | None = None
    """Compatibility shim run before validation; returning the same object keeps the call."""
    max_result_chars: int | None = Field(default=None, ge=1)
    """At most this much of a result's text goes to the model (None: the default,
    the ``tool_result_chars`` setting, 100,000 by default); the whole text stays in its details."""

    def model_post_init(self, __context: Any) -> None:
        if not self.label:
            self.label = self.name


@dataclass
class AgentContext:
    """What the loop works on: the system prompt, the transcript and the tools."""

    system_prompt: str = ""
    messages: list[AgentMessage] = field(default_factory=list)
    tools: list[AgentTool] = field(default_factory=list)


@dataclass
class BeforeToolCallContext:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    """The raw block from the model."""
    args: Any
    """A validated copy of the arguments; mutate it to change what ``execute`` receives."""
    context: AgentContext


@dataclass
class BeforeToolCallResult:
    block: bool = False
    reason: str | None = None


@dataclass
class AfterToolCallContext:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: Any
    result: AgentToolResult
    is_error: bool
    context: AgentContext


@dataclass
class AfterToolCallResult:
    """Field-wise replacement of the tool's result; ``None`` keeps the original field."""

    content: list[TextContent | ImageContent] | None = None
    details: Any = None
    is_error: bool | None = None
    usage: Usage | None = None
    terminate: bool | None = None


@dataclass
class TurnContext:
    """What ``prepare_next_turn`` and ``should_stop_after_turn`` see after a completed turn."""

    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    context: AgentContext
    new_messages: list[AgentMessage]


@dataclass
class TurnUpdate:
    """Returned by ``prepare_next_turn``: replace the context, model or thinking level."""

    context: AgentContext | None = None
    model: Model | None = None
    thinking_level: AgentThinkingLevel | None = None


TransformContext: TypeAlias = Callable[[list[AgentMessage], AbortSignal | None], Any]


@dataclass
class AgentLoopConfig:
    """Configuration of one loop run: the model, policy callbacks and the stream options.

    ``stream_options`` go to every model request, with ``api_key`` (from ``get_api_key``
    when it gives one), ``signal`` (the run's) and ``reasoning`` (the turn's thinking level)
    set per request: Pi's ``AgentLoopConfig extends SimpleStreamOptions``, here carried whole.
    """

    model: Model
    convert_to_llm: Callable[[list[AgentMessage]], Sequence[Message] | Awaitable[Sequence[Message]]]
    """Decides what the model sees; must not raise (a raise fails the run)."""
    transform_context: TransformContext | None = None
    get_api_key: Callable[[str], str | Awaitable[str | None] | None] | None = None
    get_steering_messages: Callable[[], Any] | None = None
    get_follow_up_messages: Callable[[], Any] | None = None
    tool_execution: ToolExecutionMode = "parallel"
    before_tool_call: Callable[[BeforeToolCallContext, AbortSignal | None], Any] | None = None
    after_tool_call: Callable[[AfterToolCallContext, AbortSignal | None], Any] | None = None
    prepare_next_turn: Callable[[TurnContext], Any] | None = None
    should_stop_after_turn: Callable[[TurnContext], Any] | None = None
    stream_options: StreamOptions = field(default_factory=StreamOptions)
