"""The stateless agent loop (reference section 2): prompts in, events out, new messages back.

Two nested loops. The inner one runs turns — one model call, then its tool batch — while the
model keeps calling tools or steering messages are waiting. The outer one asks for follow-up
messages when the inner one would stop. Every event goes through ``emit`` and is settled before
the loop goes on: the sink is an ordering barrier. As in Pi, the sink may return an awaitable
(awaited) or nothing (a plain function: no task switch per event).

Policy comes in as callbacks on :class:`AgentLoopConfig`; facts go out as events. The loop
knows nothing of the ``Agent``, sessions or UI.

Abort is cooperative: once the signal is aborted the loop makes no further model request; it
closes the current turn and ends at the next boundary, and it polls no further steering or
follow-up messages, so whatever is still queued stays queued (this follows Pi after 0.86, not
0.82, which made one more request).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from ..ai import (
    REQUEST_ABORTED,
    AbortSignal,
    AgentMessage,
    AssistantMessage,
    Context,
    EventStream,
    Model,
    StreamFunction,
    StreamOptions,
    ToolCall,
    empty_reply,
    maybe_await,
)
from ..ai import stream as default_stream
from ._hooks import field_of
from .events import (
    AgentEndEvent,
    AgentEvent,
    AgentEventSink,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from .tool_batch import ToolBatch
from .types import AgentContext, AgentLoopConfig, TurnContext

_isawaitable = inspect.isawaitable

CANNOT_CONTINUE_EMPTY = "Cannot continue: no messages in context"
CANNOT_CONTINUE_ASSISTANT = "Cannot continue from message role: assistant"

_AGENT_START = AgentStartEvent()
_TURN_START = TurnStartEvent()


async def run_agent_loop(
    prompts: list[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: AgentEventSink,
    signal: AbortSignal | None = None,
    stream_fn: StreamFunction | None = None,
) -> list[AgentMessage]:
    """Run the loop from new prompt messages; returns every message the run added."""
    new_messages: list[AgentMessage] = list(prompts)
    current = AgentContext(
        system_prompt=context.system_prompt,
        messages=[*context.messages, *prompts],
        tools=context.tools,
    )
    run = _LoopRun(current, config, emit, signal, stream_fn, new_messages)
    await run.emit(_AGENT_START)
    await run.emit(_TURN_START)
    for prompt in prompts:
        await run.emit(MessageStartEvent(prompt))
        await run.emit(MessageEndEvent(prompt))
    await run.run()
    return new_messages


def check_can_continue(context: AgentContext) -> None:
    if not context.messages:
        raise ValueError(CANNOT_CONTINUE_EMPTY)
    if getattr(context.messages[-1], "role", None) == "assistant":
        raise ValueError(CANNOT_CONTINUE_ASSISTANT)


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: AgentEventSink,
    signal: AbortSignal | None = None,
    stream_fn: StreamFunction | None = None,
) -> list[AgentMessage]:
    """Continue from the transcript as it is (its last message must not be an assistant's).

    As in Pi, the caller's ``context.messages`` list is extended in place.
    """
    check_can_continue(context)
    new_messages: list[AgentMessage] = []
    run = _LoopRun(context, config, emit, signal, stream_fn, new_messages)
    await run.emit(_AGENT_START)
    await run.emit(_TURN_START)
    await run.run()
    return new_messages


AgentEventStream = EventStream[AgentEvent, list[AgentMessage]]


def _event_stream() -> AgentEventStream:
    return EventStream(
        lambda e: e.type == "agent_end",
        lambda e: e.messages if e.type == "agent_end" else [],
    )


def _background(
    stream: AgentEventStream, run: Callable[[AgentEventSink], Awaitable[list[AgentMessage]]]
) -> AgentEventStream:
    async def drive() -> None:
        try:
            messages = await run(stream.push)
        except BaseException:
            stream.end([])  # unlike Pi, never leave the consumer hanging
            raise
        stream.end(messages)

    task = asyncio.ensure_future(drive())
    _running.add(task)
    task.add_done_callback(_running.discard)
    return stream


_running: set[asyncio.Future[None]] = set()


def agent_loop(
    prompts: list[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFunction | None = None,
) -> AsyncIterator[AgentEvent]:
    """:func:`run_agent_loop` as an async-iterable event stream that always ends.

    The sink here is non-blocking: events are queued and the loop does not wait for the
    consumer. ``await stream.result()`` gives the new messages.
    """
    return _background(
        _event_stream(),
        lambda emit: run_agent_loop(prompts, context, config, emit, signal, stream_fn),
    )


def agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFunction | None = None,
) -> AsyncIterator[AgentEvent]:
    """:func:`run_agent_loop_continue` as an event stream; validates at call time."""
    check_can_continue(context)
    return _background(
        _event_stream(),
        lambda emit: run_agent_loop_continue(context, config, emit, signal, stream_fn),
    )


class _LoopRun:
    """One run of the double loop; holds what changes between turns."""

    def __init__(
        self,
        context: AgentContext,
        config: AgentLoopConfig,
        sink: AgentEventSink,
        signal: AbortSignal | None,
        stream_fn: StreamFunction | None,
        new_messages: list[AgentMessage],
    ) -> None:
        self.context = context
        self.config = config
        self.sink = sink
        self.signal = signal
        self.stream_fn: StreamFunction = stream_fn or default_stream
        self.new_messages = new_messages
        self.model: Model = config.model
        self.reasoning = config.stream_options.reasoning

    @property
    def aborted(self) -> bool:
        return self.signal is not None and self.signal.aborted

    async def emit(self, event: AgentEvent) -> None:
        """Hand ``event`` to the sink and settle what it returns (the ordering barrier)."""
        await maybe_await(self.sink(event))

    async def _poll(self, source: Callable[[], Any] | None) -> list[AgentMessage]:
        if source is None or self.aborted:
            return []
        return list(await maybe_await(source()) or [])

    async def run(self) -> None:
        first_turn = True
        pending = await self._poll(self.config.get_steering_messages)
        while True:
            has_more_tool_calls = True
            while has_more_tool_calls or pending:
                if first_turn:
                    first_turn = False  # the entry point already opened this turn
                elif self.aborted:
                    return await self._end()
                else:
                    await self.emit(_TURN_START)
                for message in pending:
                    if self.aborted:
                        break  # undelivered messages stay with their owner (the Agent's queue)
                    await self.emit(MessageStartEvent(message))
                    await self.emit(MessageEndEvent(message))
                    self.context.messages.append(message)
                    self.new_messages.append(message)
                pending = []

                message = await self._stream_assistant_response()
                self.new_messages.append(message)
                if message.stop_reason in ("error", "aborted"):
                    await self.emit(TurnEndEvent(message, []))
                    return await self._end()

                calls = [b for b in message.content if isinstance(b, ToolCall)]
                tool_results = []
                has_more_tool_calls = False
                if calls:
                    batch = ToolBatch(self.config, self.context, message, self.emit, self.signal)
                    if message.stop_reason == "length":
                        outcome = await batch.fail_truncated(calls)
                    else:
                        outcome = await batch.run(calls)
                    tool_results = outcome.messages
                    has_more_tool_calls = not outcome.terminate
                    self.context.messages.extend(tool_results)
                    self.new_messages.extend(tool_results)
                await self.emit(TurnEndEvent(message, tool_results))
                turn = TurnContext(message, tool_results, self.context, self.new_messages)
                await self._prepare_next_turn(turn)
                turn.context = self.context
                if self.aborted or (
                    self.config.should_stop_after_turn is not None
                    and await maybe_await(self.config.should_stop_after_turn(turn))
                ):
                    return await self._end()
                pending = await self._poll(self.config.get_steering_messages)

            follow_ups = await self._poll(self.config.get_follow_up_messages)
            if not follow_ups:
                break
            pending = follow_ups
        await self._end()

    async def _end(self) -> None:
        await self.emit(AgentEndEvent(self.new_messages))

    async def _prepare_next_turn(self, turn: TurnContext) -> None:
        if self.config.prepare_next_turn is None:
            return
        update = await maybe_await(self.config.prepare_next_turn(turn))
        if update is None:
            return
        self.context = field_of(update, "context") or self.context
        self.model = field_of(update, "model") or self.model
        level = field_of(update, "thinking_level")
        if level is not None:
            self.reasoning = None if level == "off" else level

    def _stream_options(self, api_key: str | None) -> StreamOptions:
        options = self.config.stream_options
        return options.model_copy(
            update={
                "api_key": api_key or options.api_key,
                "signal": self.signal,
                "reasoning": self.reasoning,
            }
        )

    async def _stream_assistant_response(self) -> AssistantMessage:
        if self.aborted:
            # No request after an abort: answer as a conforming provider would, at once.
            return await self._emit_final(
                empty_reply(self.model, "aborted", REQUEST_ABORTED), started=False
            )
        config = self.config
        messages = self.context.messages
        if config.transform_context is not None:
            messages = await maybe_await(config.transform_context(messages, self.signal))
        llm_messages = list(await maybe_await(config.convert_to_llm(messages)))
        llm_context = Context(
            system_prompt=self.context.system_prompt,
            messages=llm_messages,
            tools=list(self.context.tools),
        )
        api_key = None
        if config.get_api_key is not None:
            api_key = await maybe_await(config.get_api_key(self.model.provider))
        response = await maybe_await(
            self.stream_fn(self.model, llm_context, self._stream_options(api_key))
        )

        # The per-token path: events taken in runs (no async step per event), no coroutine per
        # event when the sink is a plain function, and one snapshot of the partial's top-level
        # fields (Pi's ``{...partial}``, a shallow copy) shared by consecutive updates while
        # those fields (the model's field dict) stay the same.
        sink = self.sink
        context_messages = self.context.messages
        live: AssistantMessage | None = None  # the partial in the transcript
        live_fields: dict[str, Any] = {}
        snapshot: AssistantMessage | None = None
        snapshot_fields: dict[str, Any] = {}
        update: MessageStartEvent | MessageUpdateEvent
        async for run in response.runs():
            for event in run:
                if event.type == "done" or event.type == "error":
                    continue  # the last event; the final message comes from result()
                partial = event.partial
                if event.type == "start":
                    context_messages.append(partial)
                    live, live_fields = partial, vars(partial)
                    snapshot = partial.model_copy()
                    snapshot_fields = vars(snapshot)
                    update = MessageStartEvent(snapshot)
                elif snapshot is not None:
                    if partial is not live:  # a provider may push a new object each time
                        context_messages[-1] = live = partial
                        live_fields = vars(partial)
                    if snapshot_fields != live_fields:
                        snapshot = partial.model_copy()
                        snapshot_fields = vars(snapshot)
                    update = MessageUpdateEvent(snapshot, event)
                else:
                    continue
                # maybe_await(), inlined: a coroutine per token cost 30% of bench_loop's loop row.
                pending = sink(update)
                if pending is not None and _isawaitable(pending):
                    await pending
        return await self._emit_final(await response.result(), started=live is not None)

    async def _emit_final(self, final: AssistantMessage, *, started: bool) -> AssistantMessage:
        if started:
            self.context.messages[-1] = final
        else:
            self.context.messages.append(final)
            await self.emit(MessageStartEvent(final.model_copy()))
        await self.emit(MessageEndEvent(final))
        return final


__all__ = [
    "AgentEventStream",
    "agent_loop",
    "agent_loop_continue",
    "run_agent_loop",
    "run_agent_loop_continue",
]
