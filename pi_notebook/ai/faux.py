"""The faux provider: Pi's scripted model, for tests, teaching notebooks and nbval.

``register_faux_provider()`` registers a stream function under its own API name and returns
a handle: queue responses with ``set_responses`` / ``append_responses`` (messages built with
``faux_assistant_message`` and friends, or callables that build one from the request), then
use ``handle.get_model()`` like any model. Text is streamed in chunks of ``token_size`` tokens
(one token = 4 characters), optionally paced at ``tokens_per_second``. ``handle.requests``
keeps what the last requests were given (the model, the context and the options, by
reference), so a test can check what a model was sent.

Like every provider it never raises out of a stream: an exhausted script, a raising response
factory and an abort all end with an ``error`` event and a final message.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import random
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

from .abort import AbortSignal
from .awaitables import maybe_await
from .event_stream import AssistantMessageEventStream, terminal_event
from .events import (
    AssistantMessageEvent,
    ErrorEvent,
    StartEvent,
    TextStartEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from .partial import aborted_event, end_event, grow_text, grow_thinking
from .registry import register_api_provider, unregister_api_provider
from .types import (
    AssistantContent,
    AssistantMessage,
    Context,
    Model,
    ModelCost,
    ProviderResponse,
    StopReason,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    UsageCost,
    empty_reply,
    now_ms,
)

DEFAULT_API = "faux"
DEFAULT_PROVIDER = "faux"
DEFAULT_MODEL_ID = "faux-1"
DEFAULT_MODEL_NAME = "Faux Model"
DEFAULT_BASE_URL = "http://localhost:0"
NO_MORE_RESPONSES = "No more faux responses queued"


@dataclass
class FauxState:
    call_count: int = 0


#: Requests a faux provider keeps (the latest; older ones are dropped).
KEPT_REQUESTS = 100


@dataclass(frozen=True, slots=True)
class FauxRequest:
    """What one call of a faux model was given (references, not copies)."""

    model: Model
    context: Context
    options: StreamOptions | None


FauxResponseFactory: TypeAlias = Callable[
    [Context, StreamOptions | None, FauxState, Model],
    AssistantMessage | Awaitable[AssistantMessage],
]
FauxResponseStep: TypeAlias = AssistantMessage | FauxResponseFactory

_id_counter = itertools.count(1)


@dataclass(frozen=True, slots=True)
class _Pause:
    """In a paced script: wait out the pacing of ``chunk`` before sending it."""

    chunk: str


def faux_text(text: str) -> TextContent:
    return TextContent(text=text)


def faux_thinking(thinking: str) -> ThinkingContent:
    return ThinkingContent(thinking=thinking)


def faux_tool_call(name: str, arguments: dict[str, Any], id: str | None = None) -> ToolCall:
    return ToolCall(id=id or f"tool_{next(_id_counter)}", name=name, arguments=arguments)


def faux_assistant_message(
    content: str | AssistantContent | Sequence[AssistantContent],
    stop_reason: StopReason = "stop",
    error_message: str | None = None,
    response_id: str | None = None,
    timestamp: int | None = None,
) -> AssistantMessage:
    if isinstance(content, str):
        blocks: list[AssistantContent] = [faux_text(content)]
    elif isinstance(content, TextContent | ThinkingContent | ToolCall):
        blocks = [content]
    else:
        blocks = list(content)
    return AssistantMessage(
        content=blocks,
        api=DEFAULT_API,
        provider=DEFAULT_PROVIDER,
        model=DEFAULT_MODEL_ID,
        stop_reason=stop_reason,
        error_message=error_message,
        response_id=response_id,
        timestamp=timestamp if timestamp is not None else now_ms(),
    )


# --------------------------------------------------------------------------------------------
# Usage estimation (as Pi: 4 characters a token over a text rendering of the request)


def _js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units (an emoji counts twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def estimate_tokens(text: str) -> int:
    return math.ceil(_js_length(text) / 4)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if block.type == "text":
            parts.append(block.text)
        else:
            parts.append(f"[image:{block.mime_type}:{len(block.data)}]")
    return "\n".join(parts)


def _assistant_text(content: Sequence[AssistantContent]) -> str:
    parts = []
    for block in content:
        if block.type == "text":
            parts.append(block.text)
        elif block.type == "thinking":
            parts.append(block.thinking)
        else:
            parts.append(f"{block.name}:{_compact_json(block.arguments)}")
    return "\n".join(parts)


def _message_text(message: Any) -> str:
    if message.role == "user":
        return _content_text(message.content)
    if message.role == "assistant":
        return _assistant_text(message.content)
    if message.role == "toolResult":
        return "\n".join([message.tool_name, *(_content_text([b]) for b in message.content)])
    return _content_text(getattr(message, "content", ""))


def _message_part(message: Any) -> str:
    return f"{message.role}:{_message_text(message)}"


def _tools_part(context: Context) -> str | None:
    if not context.tools:
        return None
    tools = [
        {"name": t.name, "description": t.description, "parameters": t.json_schema()}
        for t in context.tools
    ]
    return f"tools:{_compact_json(tools)}"


def _serialize_context(context: Context) -> str:
    """Pi's text rendering of a request, on which its usage estimate is based."""
    parts = []
    if context.system_prompt:
        parts.append(f"system:{context.system_prompt}")
    parts.extend(_message_part(message) for message in context.messages)
    tools = _tools_part(context)
    if tools is not None:
        parts.append(tools)
    return "\n\n".join(parts)


class _PromptLength:
    """``len(_serialize_context(context))`` without rendering the whole transcript each time.

    A message does not change once it is in a transcript, so each message's rendered length
    is remembered (by identity); a request then costs one step per message, not per character.
    """

    _LIMIT = 50_000

    def __init__(self) -> None:
        self._parts: dict[int, tuple[Any, int]] = {}

    def __call__(self, context: Context) -> int:
        lengths = []
        if context.system_prompt:
            lengths.append(_js_length(f"system:{context.system_prompt}"))
        cache = self._parts
        if len(cache) > self._LIMIT:
            cache.clear()
        for message in context.messages:
            hit = cache.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, _js_length(_message_part(message)))
                cache[id(message)] = hit
            lengths.append(hit[1])
        tools = _tools_part(context)
        if tools is not None:
            lengths.append(_js_length(tools))
        return sum(lengths) + 2 * max(0, len(lengths) - 1)


def _compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _common_prefix_length(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


# --------------------------------------------------------------------------------------------


class FauxProvider:
    """A registered faux provider (see :func:`register_faux_provider`)."""

    def __init__(
        self,
        *,
        api: str,
        provider: str,
        models: list[Model],
        token_size: tuple[int, int],
        tokens_per_second: float | None,
        seed: int | None = None,
    ) -> None:
        self.api = api
        self.provider = provider
        self.models = models
        self.min_token_size, self.max_token_size = token_size
        self.tokens_per_second = tokens_per_second
        self.state = FauxState()
        self.requests: deque[FauxRequest] = deque(maxlen=KEPT_REQUESTS)
        """What the latest calls were given, oldest first."""
        self._pending: list[FauxResponseStep] = []
        self._prompt_cache: dict[str, str] = {}
        self._prompt_length = _PromptLength()
        self._random = random.Random(seed)

    # -- scripting ---------------------------------------------------------------------------

    @property
    def call_count(self) -> int:
        return self.state.call_count

    def set_responses(self, responses: Sequence[FauxResponseStep]) -> None:
        self._pending = list(responses)

    def append_responses(self, responses: Sequence[FauxResponseStep]) -> None:
        self._pending.extend(responses)

    def pending_response_count(self) -> int:
        return len(self._pending)

    def get_model(self, model_id: str | None = None) -> Model:
        if model_id is None:
            return self.models[0]
        for model in self.models:
            if model.id == model_id:
                return model
        raise KeyError(f"Faux model not found: {model_id}")

    def unregister(self) -> None:
        unregister_api_provider(self.api)

    # -- streaming ---------------------------------------------------------------------------

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        step = self._pending.pop(0) if self._pending else None
        self.state.call_count += 1
        self.requests.append(FauxRequest(model, context, options))
        return AssistantMessageEventStream.from_event_runs(
            self._runs(step, model, context, options)
        )

    async def _resolve(
        self,
        step: FauxResponseStep | None,
        model: Model,
        context: Context,
        options: StreamOptions | None,
    ) -> tuple[AssistantMessage, bool]:
        """The scripted reply to this request, or (an error message, True); never raises."""
        try:
            if options is not None and options.on_response is not None:
                await maybe_await(options.on_response(ProviderResponse(status=200), model))
            if step is None:
                message = self._error_message(NO_MORE_RESPONSES, model)
                message.usage = self._estimate_usage(message, context, options)
                return message, True
            resolved = step
            if callable(step) and not isinstance(step, AssistantMessage):
                resolved = await maybe_await(step(context, options, self.state, model))
            assert isinstance(resolved, AssistantMessage)
            message = resolved.model_copy(deep=True)
            message.api, message.provider, message.model = self.api, self.provider, model.id
            message.usage = self._estimate_usage(message, context, options)
            return message, False
        except Exception as exc:  # a raising factory or callback becomes an error event
            return self._error_message(str(exc) or type(exc).__name__, model), True

    async def _runs(
        self,
        step: FauxResponseStep | None,
        model: Model,
        context: Context,
        options: StreamOptions | None,
    ) -> AsyncIterator[Iterable[AssistantMessageEvent]]:
        """Unpaced, the whole reply is one run; paced, one run per event, pauses between."""
        message, failed = await self._resolve(step, model, context, options)
        if failed:
            yield (ErrorEvent("error", message),)
            return
        signal = options.signal if options else None
        if not self.tokens_per_second:
            yield cast(Iterator[AssistantMessageEvent], self._script(message, signal, paced=False))
            return
        for item in self._script(message, signal, paced=True):
            if isinstance(item, _Pause):
                await self._pause(item.chunk, signal)
            else:
                yield (item,)

    def _script(
        self, message: AssistantMessage, signal: AbortSignal | None, *, paced: bool
    ) -> Iterator[AssistantMessageEvent | _Pause]:
        """The reply's events, made one by one as they are taken; paced, a pause before each
        chunk. A chunk is never sent once the signal is aborted."""
        partial = message.model_copy(update={"content": []})
        content: list[AssistantContent] = partial.content
        if signal is not None and signal.aborted:
            yield aborted_event(partial)
            return
        yield StartEvent(partial)
        for index, block in enumerate(message.content):
            if signal is not None and signal.aborted:
                yield aborted_event(partial)
                return
            if block.type == "toolCall":
                content.append(ToolCall(id=block.id, name=block.name, arguments={}))
                kind, full = _TOOLCALL_EVENTS, _compact_json(block.arguments)
            elif block.type == "thinking":
                content.append(ThinkingContent(thinking=""))
                kind, full = _THINKING_EVENTS, block.thinking
            else:
                content.append(TextContent(text=""))
                kind, full = _TEXT_EVENTS, block.text
            live = content[index]
            start_event, grow = kind
            yield start_event(index, partial)
            for chunk in self._chunks(full):
                if paced:
                    yield _Pause(chunk)
                if signal is not None and signal.aborted:
                    yield aborted_event(partial)
                    return
                yield grow(partial, index, chunk)
            if block.type == "toolCall":
                # The end event carries the scripted block itself (its id, extras and all).
                live.arguments = block.arguments  # type: ignore[union-attr]
                yield ToolCallEndEvent(index, block, partial)
            else:
                yield end_event(partial, index)  # content: ``full``, grown chunk by chunk
        yield terminal_event(message)

    async def _pause(self, chunk: str, signal: AbortSignal | None) -> None:
        """Wait out the pacing for ``chunk``; an abort ends the wait early."""
        assert self.tokens_per_second
        delay = estimate_tokens(chunk) / self.tokens_per_second
        if signal is None:
            await asyncio.sleep(delay)
        else:
            await signal.sleep(delay)

    def _chunks(self, text: str) -> list[str]:
        low, high = self.min_token_size, self.max_token_size
        if not text:
            return [""]
        if low == high:
            size = max(1, low * 4)
            return [text[i : i + size] for i in range(0, len(text), size)]
        chunks = []
        i = 0
        while i < len(text):
            size = max(1, self._random.randint(low, high) * 4)
            chunks.append(text[i : i + size])
            i += size
        return chunks

    def _estimate_usage(
        self, message: AssistantMessage, context: Context, options: StreamOptions | None
    ) -> Usage:
        output = estimate_tokens(_assistant_text(message.content))
        session = options.session_id if options else None
        if not session or (options is not None and options.cache_retention == "none"):
            prompt_tokens = math.ceil(self._prompt_length(context) / 4)
            return Usage(
                input=prompt_tokens,
                output=output,
                total_tokens=prompt_tokens + output,
                cost=UsageCost(),
            )
        prompt = _serialize_context(context)
        prompt_tokens = estimate_tokens(prompt)
        input_tokens, cache_read, cache_write = prompt_tokens, 0, 0
        previous = self._prompt_cache.get(session)
        if previous is not None:
            cached = _common_prefix_length(previous, prompt)
            cache_read = estimate_tokens(previous[:cached])
            cache_write = estimate_tokens(prompt[cached:])
            input_tokens = max(0, prompt_tokens - cache_read)
        else:
            cache_write = prompt_tokens
        self._prompt_cache[session] = prompt
        return Usage(
            input=input_tokens,
            output=output,
            cache_read=cache_read,
            cache_write=cache_write,
            total_tokens=input_tokens + output + cache_read + cache_write,
            cost=UsageCost(),
        )

    def _error_message(self, text: str, model: Model) -> AssistantMessage:
        return empty_reply(model, "error", text, api=self.api, provider=self.provider)


def _toolcall_delta(partial: AssistantMessage, index: int, delta: str) -> ToolCallDeltaEvent:
    # Faux tool calls keep ``arguments == {}`` until ``toolcall_end`` (Pi does not parse them).
    return ToolCallDeltaEvent(index, delta, partial)


# Per block kind: its start event, and how one delta grows the partial.
_KindEvents: TypeAlias = tuple[
    Callable[[int, AssistantMessage], AssistantMessageEvent],
    Callable[[AssistantMessage, int, str], AssistantMessageEvent],
]
_TEXT_EVENTS: _KindEvents = (TextStartEvent, grow_text)
_THINKING_EVENTS: _KindEvents = (ThinkingStartEvent, grow_thinking)
_TOOLCALL_EVENTS: _KindEvents = (ToolCallStartEvent, _toolcall_delta)


_registered = itertools.count(1)


def register_faux_provider(
    token_size: tuple[int, int] = (3, 5),
    tokens_per_second: float | None = None,
    models: Sequence[Model | dict[str, Any]] | None = None,
    *,
    api: str | None = None,
    provider: str = DEFAULT_PROVIDER,
    seed: int | None = None,
) -> FauxProvider:
    """Register a scripted model and return its handle.

    ``token_size=(min, max)`` is the chunk size in tokens (4 characters each); with
    ``min == max`` chunking is deterministic. ``seed`` fixes the random chunk sizes otherwise.
    Each registration gets its own API name (``faux``, then ``faux-2``...), so several can
    coexist in one process.
    """
    n = next(_registered)
    api_name = api or (DEFAULT_API if n == 1 else f"{DEFAULT_API}-{n}")
    low = max(1, min(token_size[0], token_size[1]))
    high = max(low, token_size[1])
    definitions = list(models) if models else [{"id": DEFAULT_MODEL_ID, "name": DEFAULT_MODEL_NAME}]
    built = []
    for definition in definitions:
        data = (
            definition.model_dump(exclude={"api", "provider"})
            if isinstance(definition, Model)
            else dict(definition)
        )
        data.setdefault("base_url", DEFAULT_BASE_URL)
        data.setdefault("input", ["text", "image"])
        data.setdefault("cost", ModelCost())
        data.setdefault("context_window", 128000)
        data.setdefault("max_tokens", 16384)
        built.append(Model(**{**data, "api": api_name, "provider": provider}))
    handle = FauxProvider(
        api=api_name,
        provider=provider,
        models=built,
        token_size=(low, high),
        tokens_per_second=tokens_per_second,
        seed=seed,
    )
    register_api_provider(api_name, handle.stream)
    return handle


__all__ = [
    "FauxProvider",
    "FauxRequest",
    "FauxResponseFactory",
    "FauxResponseStep",
    "FauxState",
    "faux_assistant_message",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
    "register_faux_provider",
]
