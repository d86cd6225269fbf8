"""The model layer's data: content blocks, messages, usage, models, tools, context, options.

These mirror pi-ai 0.82.1 (reference section 1). Messages are plain data: they never hold
callables, never refer to a provider client, and never carry an API key.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter

from ._base import WireModel
from .abort import AbortSignal
from .secrets import redact_data
from .surrogates import clean_surrogates


def now_ms() -> int:
    """Milliseconds since the epoch, as Pi's ``Date.now()``."""
    return int(time.time() * 1000)


# --------------------------------------------------------------------------------------------
# Content blocks

CleanStr: TypeAlias = Annotated[str, AfterValidator(clean_surrogates)]
"""Text whose lone surrogates become U+FFFD when a block or message is validated."""


class TextContent(WireModel):
    type: Literal["text"] = "text"
    text: CleanStr
    text_signature: str | None = None


class ThinkingContent(WireModel):
    type: Literal["thinking"] = "thinking"
    thinking: CleanStr
    thinking_signature: str | None = None
    redacted: bool | None = None


class ImageContent(WireModel):
    type: Literal["image"] = "image"
    data: str
    """Base64-encoded image bytes."""
    mime_type: str


class ToolCall(WireModel):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Always a parsed object, never a JSON string."""
    thought_signature: str | None = None


UserContent: TypeAlias = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantContent: TypeAlias = Annotated[
    TextContent | ThinkingContent | ToolCall, Field(discriminator="type")
]
ToolResultContent: TypeAlias = UserContent

# --------------------------------------------------------------------------------------------
# Usage and cost


class UsageCost(WireModel):
    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    total: float = 0


class Usage(WireModel):
    input: int = 0
    """Input tokens not read from or written to a cache."""
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int | None = None
    reasoning: int | None = None
    """Reasoning tokens, already included in ``output``."""
    total_tokens: int = 0
    cost: UsageCost = Field(default_factory=UsageCost)


def empty_usage() -> Usage:
    return Usage()


StopReason: TypeAlias = Literal["stop", "length", "toolUse", "error", "aborted"]
ThinkingLevel: TypeAlias = Literal["minimal", "low", "medium", "high", "xhigh", "max"]
AgentThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]

# --------------------------------------------------------------------------------------------
# Messages


class UserMessage(WireModel):
    role: Literal["user"] = "user"
    content: CleanStr | list[UserContent]
    timestamp: int = Field(default_factory=now_ms)


class AssistantMessage(WireModel):
    role: Literal["assistant"] = "assistant"
    content: list[AssistantContent] = Field(default_factory=list)
    api: str
    provider: str
    model: str
    response_model: str | None = None
    response_id: str | None = None
    diagnostics: list[Any] | None = None
    usage: Usage = Field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    error_message: CleanStr | None = None
    timestamp: int = Field(default_factory=now_ms)


class ToolResultMessage(WireModel):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[ToolResultContent] = Field(default_factory=list)
    details: Any = None
    usage: Usage | None = None
    added_tool_names: list[str] | None = None
    is_error: bool = False
    timestamp: int = Field(default_factory=now_ms)


class CustomMessage(WireModel):
    """An app-defined message (``role`` of your choosing, any extra fields).

    The agent loop carries custom messages in the transcript like any other;
    ``convert_to_llm`` decides whether and how a model sees them. Subclass it to give a
    custom role its own typed fields.
    """

    role: str
    timestamp: int = Field(default_factory=now_ms)


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
AgentMessage: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage | CustomMessage

_STANDARD_ROLES = {"user", "assistant", "toolResult"}


def _role_of(value: Any) -> str:
    role = value.get("role") if isinstance(value, Mapping) else getattr(value, "role", None)
    return role if role in _STANDARD_ROLES else "custom"


_message_adapter: TypeAdapter[Message] = TypeAdapter(
    Annotated[Message, Field(discriminator="role")]
)
_agent_message_adapter: TypeAdapter[AgentMessage] = TypeAdapter(
    Annotated[
        Annotated[UserMessage, Tag("user")]
        | Annotated[AssistantMessage, Tag("assistant")]
        | Annotated[ToolResultMessage, Tag("toolResult")]
        | Annotated[CustomMessage, Tag("custom")],
        Discriminator(_role_of),
    ]
)


def parse_message(data: Any) -> Message:
    """Validate Pi's JSON (camelCase) or our snake_case dict into a :data:`Message`."""
    return _message_adapter.validate_python(data)


def parse_agent_message(data: Any) -> AgentMessage:
    """Like :func:`parse_message`, but any other role becomes a :class:`CustomMessage`."""
    return _agent_message_adapter.validate_python(data)


def parse_transcript(data: list[Any]) -> list[AgentMessage]:
    return [parse_agent_message(item) for item in data]


def dump_transcript(messages: list[AgentMessage]) -> list[dict[str, Any]]:
    """Pi's JSON for a transcript, to save: every text redacted (``pi_notebook.ai.redact``)."""
    return [redact_data(m.to_json_dict()) for m in messages]


# --------------------------------------------------------------------------------------------
# Models


InputKind: TypeAlias = Literal["text", "image"]


class ModelCostTier(WireModel):
    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    input_tokens_above: int


class ModelCost(WireModel):
    """Prices in dollars per million tokens."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    tiers: list[ModelCostTier] | None = None


class Model(WireModel):
    id: str
    name: str = ""
    api: str
    provider: str
    base_url: str = ""
    reasoning: bool = False
    thinking_level_map: dict[str, str | None] | None = None
    input: list[InputKind] = Field(default_factory=lambda: list[InputKind](["text"]))
    cost: ModelCost = Field(default_factory=ModelCost)
    context_window: int = 0
    max_tokens: int = 0
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    """Per-model compatibility switches for servers that differ (see the providers)."""

    def model_post_init(self, __context: Any) -> None:
        if not self.name:
            self.name = self.id


def empty_reply(
    model: Model,
    stop_reason: StopReason = "stop",
    error_message: str | None = None,
    **fields: Any,
) -> AssistantMessage:
    """A reply of ``model`` with no content yet: a provider's output before its first chunk,
    or the whole answer to a request that failed or was aborted before any output.

    ``fields`` set other fields, or override the model's ``api`` and ``provider``."""
    identity = {"api": model.api, "provider": model.provider, "model": model.id}
    return AssistantMessage(
        **{**identity, **fields}, stop_reason=stop_reason, error_message=error_message
    )


# --------------------------------------------------------------------------------------------
# Tools and context


class Tool(BaseModel):
    """A tool as a model sees it: a name, a description and a JSON schema for the arguments.

    ``parameters`` is a JSON-schema dict or a pydantic model class.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] | type[BaseModel] = Field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )

    def json_schema(self) -> dict[str, Any]:
        if isinstance(self.parameters, dict):
            return self.parameters
        return self.parameters.model_json_schema()


class Context(BaseModel):
    """What one model request sees."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    system_prompt: str | None = None
    messages: list[Any] = Field(default_factory=list)
    """LLM messages (:data:`Message`); typed loosely so custom messages pass through untouched."""
    tools: list[Tool] | None = None


class ProviderResponse(BaseModel):
    status: int
    headers: dict[str, str] = Field(default_factory=dict)


class StreamOptions(BaseModel):
    """Options for one model request (Pi's ``StreamOptions``, plus ``max_event_bytes``).

    ``api_key`` is never shown in a repr. ``timeout_ms`` is the request's timeout, for every
    phase (connect, each read, write); ``None`` keeps 30 s to connect and 600 s per read."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="allow")

    api_key: str | None = Field(default=None, repr=False)
    signal: AbortSignal | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning: ThinkingLevel | None = None
    thinking_budgets: dict[str, int] | None = None
    session_id: str | None = None
    cache_retention: Literal["none", "short", "long"] | None = None
    headers: dict[str, str | None] | None = Field(default=None, repr=False)
    timeout_ms: int | None = None
    max_retries: int | None = None
    max_retry_delay_ms: int | None = None
    metadata: dict[str, Any] | None = None
    on_payload: Callable[[Any, Model], Any] | None = None
    on_response: Callable[[ProviderResponse, Model], Awaitable[None] | None] | None = None
    max_event_bytes: int | None = Field(default=None, ge=1)
    """The largest server-sent event a provider stream may carry (a pi_notebook extension;
    ``None``: ``providers._sse.MAX_EVENT_BYTES``, 16 MiB). A bigger one ends the run with an
    error instead of growing the kernel's memory."""
