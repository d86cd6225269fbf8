"""``Agent``: the stateful wrapper around the loop (reference section 3).

It owns the transcript, the steering and follow-up queues and the abort controller of the
active run; it reduces every loop event into ``agent.state`` and then awaits its listeners in
subscription order. An exception escaping the loop becomes a failure assistant message with the
full closing events, so ``prompt()`` returns and the transcript stays usable. Cancelling the
task that awaits ``prompt()`` (a kernel interrupt) aborts the run, lets it close its events,
then re-raises the cancellation.

Limits (``max_turns`` and ``max_cost`` per run, ``budget`` per conversation) run as the loop's
``should_stop_after_turn`` after the user's hook (see ``limits``); ``limit_note`` says which one
ended the last run. A run is refused with :class:`BudgetExceededError` when the budget is
already spent.

Compaction (``compaction``, a :class:`~.compaction.Compactor`) runs as the loop's
``transform_context`` after the user's hook, and a context-overflow refusal (before any content)
compacts once and sends the turn's request once more, where the Agent makes its requests
(:meth:`Agent._requester`); the loop never sees the refusal. ``state.messages`` keeps the whole
history.

Per-run settings come as a :class:`~.run_config.RunConfig` (``prompt(text, run=...)``), merged
over the Agent's own values for that run only; the request hook (``on_request``) is awaited with
each model request the Agent makes (a turn's, a compaction summary, an overflow retry).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, assert_never, cast

from ..ai import (
    REQUEST_ABORTED,
    AbortController,
    AbortSignal,
    AgentMessage,
    AgentThinkingLevel,
    AssistantMessage,
    AssistantMessageEventStream,
    Context,
    ErrorEvent,
    ImageContent,
    Message,
    Model,
    StreamFunction,
    StreamOptions,
    TextContent,
    UserMessage,
    empty_reply,
    is_context_overflow,
    maybe_await,
    now_ms,
    redact,
)
from ..ai import stream as default_stream
from .compaction import DEFAULT_THRESHOLD, Compaction, Compactor
from .events import (
    AgentEndEvent,
    AgentEvent,
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
    affordable_output,
    budget_note,
    conversation_cost,
    refusal_note,
    reply_cost,
    would_continue,
)
from .loop import CANNOT_CONTINUE_ASSISTANT, run_agent_loop, run_agent_loop_continue
from .queue import MessageQueue, QueueMode
from .run_config import MaxTokens, ModelRequest, RequestHook, RequestPurpose, RunConfig, pick
from .sizes import estimate_tokens, message_chars
from .summarise import request_summary
from .types import AgentContext, AgentLoopConfig, AgentTool, ToolExecutionMode, TurnContext

_isawaitable = inspect.isawaitable

PROMPT_BUSY = (
    "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, "
    "or wait for completion."
)
CONTINUE_BUSY = "Agent is already processing. Wait for completion before continuing."
RESET_BUSY = "Agent is already processing. Wait for completion before resetting."
RUN_BUSY = "Agent is already processing."
NOTHING_TO_CONTINUE = "No messages to continue from"
LISTENER_OUTSIDE_RUN = "Agent listener invoked outside active run"

#: Seconds a cancelled ``prompt()`` waits for the aborted run to close its events.
CANCEL_GRACE_SECONDS = 5.0

UNKNOWN_MODEL = Model(
    id="unknown", name="unknown", api="unknown", provider="unknown", base_url="", input=[]
)

Listener = Callable[[AgentEvent, AbortSignal], Any]
"""A subscriber: called with each event (and the run's signal) after the state is reduced;
an awaitable it returns is awaited before the next listener and the next event."""


class AgentBusyError(RuntimeError):
    """``prompt()``, ``continue_()`` or ``reset()`` while a run is active."""


_LLM_ROLES = frozenset(("user", "assistant", "toolResult"))


def default_convert_to_llm(messages: list[AgentMessage]) -> list[Message]:
    """Keep the messages a model understands (user, assistant, tool results)."""
    return [m for m in messages if m.role in _LLM_ROLES]  # type: ignore[misc]


class AgentState:
    """What the agent knows; reduced from each event before listeners run."""

    def __init__(
        self,
        system_prompt: str,
        model: Model,
        thinking_level: AgentThinkingLevel,
        tools: Sequence[AgentTool],
        messages: Sequence[AgentMessage],
    ) -> None:
        self.system_prompt = system_prompt
        self.model = model
        self.thinking_level: AgentThinkingLevel = thinking_level
        self._tools = list(tools)
        self._messages = list(messages)
        self.is_streaming = False
        self.streaming_message: AgentMessage | None = None
        self.pending_tool_calls: frozenset[str] = frozenset()
        self.error_message: str | None = None

    @property
    def tools(self) -> list[AgentTool]:
        return self._tools

    @tools.setter
    def tools(self, value: Sequence[AgentTool]) -> None:
        self._tools = list(value)

    @property
    def messages(self) -> list[AgentMessage]:
        """The live transcript (appending to it works)."""
        return self._messages

    @messages.setter
    def messages(self, value: Sequence[AgentMessage]) -> None:
        self._messages = list(value)


@dataclass(slots=True)
class _Settings:
    """One run's settings: a :class:`RunConfig` merged over the Agent's own values."""

    max_turns: int | None
    max_cost: float | None
    budget: float | None
    max_tokens: MaxTokens
    compaction: bool
    before_tool_call: Callable[..., Any] | None
    listeners: tuple[_Subscription, ...]
    on_request: RequestHook | None
    convert_to_llm: Callable[[list[AgentMessage]], Any]


@dataclass(slots=True)
class _ActiveRun:
    controller: AbortController
    idle: asyncio.Future[None]
    settings: _Settings
    turns: int = 0
    """``turn_start`` events so far (what a request's turn number is)."""
    limits: RunLimits | None = None
    """The run's turn and dollar limits (set with the loop's configuration)."""
    extra: tuple[_Subscription, ...] = ()
    """The run's own listeners (``RunConfig.listeners``)."""
    own: tuple[_Subscription, ...] | None = None
    everyone: tuple[_Subscription, ...] = ()
    """``own`` (the Agent's subscribers when last looked at) then the run's listeners."""


class _Subscription:
    """One ``subscribe()``: the listener, called as ``call(event, signal)`` whatever it takes."""

    __slots__ = ("call",)

    def __init__(self, listener: Listener | Callable[[AgentEvent], Any]) -> None:
        if _takes_two_arguments(listener):
            self.call = cast(Listener, listener)
        else:
            one = cast(Callable[[AgentEvent], Any], listener)
            self.call = lambda event, signal: one(event)


class Agent:
    """A conversation with a model, its tools and its queues."""

    def __init__(
        self,
        *,
        system_prompt: str = "",
        model: Model | None = None,
        thinking_level: AgentThinkingLevel = "off",
        tools: Sequence[AgentTool] = (),
        messages: Sequence[AgentMessage] = (),
        convert_to_llm: Callable[[list[AgentMessage]], Any] | None = None,
        transform_context: Callable[[list[AgentMessage], AbortSignal | None], Any] | None = None,
        stream_fn: StreamFunction | None = None,
        get_api_key: Callable[[str], Any] | None = None,
        before_tool_call: Callable[..., Any] | None = None,
        after_tool_call: Callable[..., Any] | None = None,
        prepare_next_turn: Callable[[TurnContext, AbortSignal], Any] | None = None,
        should_stop_after_turn: Callable[[TurnContext, AbortSignal], Any] | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        tool_execution: ToolExecutionMode = "parallel",
        stream_options: StreamOptions | None = None,
        max_turns: int | None = None,
        max_cost: float | None = None,
        budget: float | None = None,
        compaction: bool = True,
        compaction_threshold: float = DEFAULT_THRESHOLD,
        on_request: RequestHook | None = None,
        **options: Any,
    ) -> None:
        """``stream_options`` go to every model request (``reasoning`` comes from
        ``thinking_level``, ``signal`` from the run). Its fields may also be given as keywords
        (``api_key=``, ``max_tokens=``, ``temperature=``...), which override it.

        ``max_turns`` and ``max_cost`` (USD) limit each run, ``budget`` (USD) the whole
        conversation; a limit stops the run before its next model request. ``compaction``
        summarises the oldest messages (for the model only) once the context passes
        ``compaction_threshold`` of the model's context window. ``on_request`` is awaited with
        each model request (a :class:`~.run_config.ModelRequest`) before it is sent."""
        self.state = AgentState(
            system_prompt, model or UNKNOWN_MODEL, thinking_level, tools, messages
        )
        self.convert_to_llm = convert_to_llm or default_convert_to_llm
        self.transform_context = transform_context
        self.stream_fn = stream_fn
        self.get_api_key = get_api_key
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.prepare_next_turn = prepare_next_turn
        self.should_stop_after_turn = should_stop_after_turn
        self.tool_execution: ToolExecutionMode = tool_execution
        self.stream_options = _with_options(stream_options or StreamOptions(), options)
        self.max_turns = max_turns
        self.max_cost = max_cost
        self.budget = budget
        self.on_request = on_request
        self.limit_note: str | None = None
        """Which limit ended the last run ("budget of $0.50 reached: $0.52 spent"), or None."""
        self._summary_cost = 0.0
        self.compaction = Compactor(
            model=lambda: self.state.model,
            summarise=self._summarise,
            overhead_chars=self._overhead_chars,
            enabled=compaction,
            threshold=compaction_threshold,
        )
        self._steering = MessageQueue(steering_mode)
        self._follow_up = MessageQueue(follow_up_mode)
        self._listeners: tuple[_Subscription, ...] = ()  # replaced, never mutated, on change
        self._active: _ActiveRun | None = None

    def __repr__(self) -> str:
        return (
            f"Agent(model={self.state.model.provider}/{self.state.model.id}, "
            f"messages={len(self.state.messages)}, streaming={self.state.is_streaming})"
        )

    # -- queues ----------------------------------------------------------------------------

    @property
    def steering_mode(self) -> QueueMode:
        return self._steering.mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self._steering.mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        return self._follow_up.mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self._follow_up.mode = mode

    def steer(self, message: AgentMessage | str) -> None:
        """Queue a message for delivery after the current tool batch, before the next model call."""
        self._steering.enqueue(_as_message(message))

    def follow_up(self, message: AgentMessage | str) -> None:
        """Queue a message for delivery when the agent would otherwise stop."""
        self._follow_up.enqueue(_as_message(message))

    @property
    def steering_queue(self) -> list[AgentMessage]:
        return self._steering.peek()

    @property
    def follow_up_queue(self) -> list[AgentMessage]:
        return self._follow_up.peek()

    def clear_steering_queue(self) -> None:
        self._steering.clear()

    def clear_follow_up_queue(self) -> None:
        self._follow_up.clear()

    def clear_all_queues(self) -> None:
        self._steering.clear()
        self._follow_up.clear()

    def has_queued_messages(self) -> bool:
        return bool(len(self._steering) or len(self._follow_up))

    # -- spending --------------------------------------------------------------------------

    @property
    def spent(self) -> float:
        """The conversation's cost in USD (its replies and its compaction summaries):
        reported, priced from tokens, or estimated."""
        state = self.state
        transcript = conversation_cost(state.messages, state.model, state.system_prompt)
        return transcript + self._summary_cost

    # -- listeners -------------------------------------------------------------------------

    def subscribe(self, listener: Listener | Callable[[AgentEvent], Any]) -> Callable[[], None]:
        """Add ``listener(event, signal)`` (or ``listener(event)``); returns ``unsubscribe``."""
        subscription = _Subscription(listener)
        self._listeners = (*self._listeners, subscription)

        def unsubscribe() -> None:
            self._listeners = tuple(s for s in self._listeners if s is not subscription)

        return unsubscribe

    # -- control ---------------------------------------------------------------------------

    @property
    def signal(self) -> AbortSignal | None:
        return self._active.controller.signal if self._active else None

    @property
    def is_running(self) -> bool:
        return self._active is not None

    def abort(self) -> None:
        if self._active is not None:
            self._active.controller.abort()

    async def wait_for_idle(self) -> None:
        if self._active is not None:
            await asyncio.shield(self._active.idle)

    def reset(self) -> None:
        if self._active is not None:
            raise AgentBusyError(RESET_BUSY)
        self.state.messages = []
        self.state.is_streaming = False
        self.state.streaming_message = None
        self.state.pending_tool_calls = frozenset()
        self.state.error_message = None
        self.clear_all_queues()
        self.compaction.reset()
        self._summary_cost = 0.0

    async def compact(self) -> Compaction | None:
        """Compact now, whatever the context's size (``%agent compact``); None when there is
        nothing to summarise or the summary request failed (``compaction.last_failure``)."""
        if self._active is not None:
            raise AgentBusyError(RUN_BUSY)
        return await self.compaction.compact(self.state.messages)

    def _settings(self, run: RunConfig | None) -> _Settings:
        config = run or _OWN
        return _Settings(
            max_turns=pick(config.max_turns, self.max_turns),
            max_cost=pick(config.max_cost, self.max_cost),
            budget=pick(config.budget, self.budget),
            max_tokens=pick(config.max_tokens, self.stream_options.max_tokens),
            compaction=self.compaction.enabled and pick(config.compaction, True),
            before_tool_call=pick(config.before_tool_call, self.before_tool_call),
            listeners=tuple(_Subscription(listener) for listener in config.listeners),
            on_request=pick(config.on_request, self.on_request),
            convert_to_llm=pick(config.convert_to_llm, self.convert_to_llm),
        )

    # -- runs ------------------------------------------------------------------------------

    async def prompt(
        self,
        input: str | AgentMessage | Sequence[AgentMessage],
        images: Sequence[ImageContent] | None = None,
        *,
        run: RunConfig | None = None,
    ) -> None:
        """Run the agent on new input; returns when the run and its listeners are done.
        ``run`` sets this run's settings (see :class:`~.run_config.RunConfig`)."""
        if self._active is not None:
            raise AgentBusyError(PROMPT_BUSY)
        settings = self._settings(run)
        self._check_budget(settings.budget)
        if isinstance(input, str):
            content: list[Any] = [TextContent(text=input), *(images or [])]
            prompts: list[AgentMessage] = [UserMessage(content=content, timestamp=now_ms())]
        elif isinstance(input, list | tuple):
            prompts = list(input)
        else:
            prompts = [input]  # type: ignore[list-item]
        await self._run_prompts(prompts, settings, skip_initial_steering=False)

    async def continue_(self, *, run: RunConfig | None = None) -> None:
        """Continue from the transcript as it is (e.g. after an error or with queued messages);
        ``run`` as for :meth:`prompt`."""
        if self._active is not None:
            raise AgentBusyError(CONTINUE_BUSY)
        settings = self._settings(run)
        self._check_budget(settings.budget)  # before the queues are drained: a refusal keeps them
        messages = self.state.messages
        if not messages:
            raise ValueError(NOTHING_TO_CONTINUE)
        if getattr(messages[-1], "role", None) == "assistant":
            steering = self._steering.drain()
            if steering:
                return await self._run_prompts(steering, settings, skip_initial_steering=True)
            follow_ups = self._follow_up.drain()
            if follow_ups:
                return await self._run_prompts(follow_ups, settings, skip_initial_steering=False)
            raise ValueError(CANNOT_CONTINUE_ASSISTANT)

        async def execute(run: _ActiveRun) -> None:
            signal = run.controller.signal
            await run_agent_loop_continue(
                self._context_snapshot(),
                self._loop_config(run, skip_initial_steering=False),
                self._process_events,
                signal,
                self._requester(run),
            )

        await self._run(execute, settings)

    async def _run_prompts(
        self, prompts: list[AgentMessage], settings: _Settings, *, skip_initial_steering: bool
    ) -> None:
        async def execute(run: _ActiveRun) -> None:
            signal = run.controller.signal
            await run_agent_loop(
                prompts,
                self._context_snapshot(),
                self._loop_config(run, skip_initial_steering=skip_initial_steering),
                self._process_events,
                signal,
                self._requester(run),
            )

        await self._run(execute, settings)

    # -- compaction ------------------------------------------------------------------------

    async def _summarise(self, context: Context, signal: AbortSignal | None) -> AssistantMessage:
        """The compaction's summary request: the conversation's model, key and options (the
        run's, during a run)."""
        model = self.state.model
        run = self._active
        api_key = None
        if self.get_api_key is not None:
            api_key = await maybe_await(self.get_api_key(model.provider))
        max_tokens = run.settings.max_tokens if run is not None else self.stream_options.max_tokens
        options = self.stream_options.model_copy(
            update={
                "signal": signal,
                "api_key": api_key or self.stream_options.api_key,
                "reasoning": None,
                "max_tokens": max_tokens(model, context) if callable(max_tokens) else max_tokens,
            }
        )
        hook = run.settings.on_request if run is not None else self.on_request
        if hook is not None:
            turn = max(run.turns, 1) if run is not None else 0
            await maybe_await(hook(ModelRequest("summary", turn, model, context, options)))
        reply = await request_summary(self.stream_fn or default_stream, model, context, options)
        # A summary counts towards budgets:
        self._summary_cost += reply_cost(reply, model, _prompt_chars(context))
        return reply

    def _overhead_chars(self) -> int:
        tools = sum(len(t.name) + len(t.description) for t in self.state.tools)
        return len(self.state.system_prompt) + tools

    def _transform_context(
        self, compaction: bool
    ) -> Callable[[list[AgentMessage], AbortSignal | None], Any] | None:
        user = self.transform_context
        compactor = self.compaction
        if not compaction:
            return user
        if user is None:
            return compactor.transform

        async def transform(
            messages: list[AgentMessage], signal: AbortSignal | None
        ) -> list[AgentMessage]:
            transformed = await maybe_await(user(messages, signal))
            return await compactor.transform(list(transformed), signal)

        return transform

    def _requester(self, run: _ActiveRun) -> StreamFunction:
        """The stream function the loop calls for each turn's request: the output limit of the
        request (when it is a function of it), the request hook, then ``stream_fn``; a
        context-overflow refusal (before any content) compacts once and sends the request once
        more. The stream handed back is the provider's own: no wrapper on the token path."""
        stream_fn = self.stream_fn or default_stream
        settings = run.settings
        max_tokens = settings.max_tokens
        priced = settings.max_cost is not None or settings.budget is not None
        if (
            not settings.compaction
            and settings.on_request is None
            and not callable(max_tokens)
            and not priced
        ):
            return stream_fn  # nothing to add

        async def announce(
            purpose: RequestPurpose, model: Model, context: Context, options: StreamOptions
        ) -> StreamOptions:
            if callable(max_tokens):
                options = options.model_copy(update={"max_tokens": max_tokens(model, context)})
            options = self._within_limits(run, model, context, options)
            if _unaffordable(options):
                return options  # not sent (see request): nothing to announce
            hook = settings.on_request
            if hook is not None:
                request = ModelRequest(purpose, max(run.turns, 1), model, context, options)
                await maybe_await(hook(request))
            return options

        async def request(
            model: Model, context: Context, options: StreamOptions | None = None
        ) -> Any:
            options = options or StreamOptions()
            if options.signal is not None and options.signal.aborted:
                return _aborted(model)  # aborted during a summary request: nothing sent
            options = await announce("turn", model, context, options)
            if _unaffordable(options):
                return self._refused(run, model, context)  # its input alone spends the limit
            response = await maybe_await(stream_fn(model, context, options))
            if not settings.compaction:
                return response
            decided = await response.peek(_past_start)
            refusal = decided[-1] if decided else None
            if not isinstance(refusal, ErrorEvent) or not is_context_overflow(refusal.error):
                return response
            retry = await self._compacted(context, options.signal, settings.convert_to_llm)
            if retry is None:
                return response
            options = await announce("retry", model, retry, options)
            if _unaffordable(options):
                return self._refused(run, model, retry)
            return await maybe_await(stream_fn(model, retry, options))

        return request

    def _within_limits(
        self, run: _ActiveRun, model: Model, context: Context, options: StreamOptions
    ) -> StreamOptions:
        """``options`` asking for no more output than the dollars left buy, at least one token
        (see :mod:`.limits`); ``max_tokens`` 0 when the request's input alone would spend them
        (it is not sent)."""
        left = run.limits.remaining() if run.limits is not None else None
        if left is None:
            return options
        tokens_in = _input_tokens(context)
        if model.cost.input > 0 and tokens_in * model.cost.input / 1e6 >= left:
            return options.model_copy(update={"max_tokens": 0})
        affordable = affordable_output(left, model, tokens_in)
        if affordable is None:
            return options
        if options.max_tokens is not None and affordable >= options.max_tokens:
            return options
        return options.model_copy(update={"max_tokens": max(affordable, 1)})

    def _refused(
        self, run: _ActiveRun, model: Model, context: Context
    ) -> AssistantMessageEventStream:
        """The reply of a request not sent: an error naming the limit (the run ends there)."""
        left = run.limits.remaining() if run.limits is not None else None
        note = refusal_note(left or 0.0, _input_tokens(context), model)
        self.limit_note = note
        stream = AssistantMessageEventStream()
        stream.push(ErrorEvent("error", empty_reply(model, "error", note)))
        return stream

    async def _compacted(
        self,
        context: Context,
        signal: AbortSignal | None,
        convert_to_llm: Callable[[list[AgentMessage]], Any],
    ) -> Context | None:
        """The request ``context`` again after compacting what the turn sent; None when there
        is nothing to compact or the summary failed."""
        compactor = self.compaction
        messages = compactor.last_input
        if messages is None or await compactor.compact(messages, signal) is None:
            return None
        llm = list(await maybe_await(convert_to_llm(compactor.view(messages))))
        return Context(system_prompt=context.system_prompt, messages=llm, tools=context.tools)

    def _context_snapshot(self) -> AgentContext:
        return AgentContext(
            system_prompt=self.state.system_prompt,
            messages=list(self.state.messages),
            tools=list(self.state.tools),
        )

    def _loop_config(self, run: _ActiveRun, *, skip_initial_steering: bool) -> AgentLoopConfig:
        """The loop's configuration for ``run``: the Agent's own values with the run's
        settings over them (nothing of the Agent is written)."""
        signal = run.controller.signal
        settings = run.settings
        skip = [skip_initial_steering]

        def get_steering_messages() -> list[AgentMessage]:
            if skip[0]:
                skip[0] = False
                return []
            return self._steering.drain()

        prepare = self.prepare_next_turn
        should_stop = self._should_stop(signal, settings, run)
        level = self.state.thinking_level
        update: dict[str, Any] = {"reasoning": None if level == "off" else level}
        if not callable(settings.max_tokens):  # a function of the request: set per request
            update["max_tokens"] = settings.max_tokens
        return AgentLoopConfig(
            model=self.state.model,
            convert_to_llm=settings.convert_to_llm,
            transform_context=self._transform_context(settings.compaction),
            get_api_key=self.get_api_key,
            get_steering_messages=get_steering_messages,
            get_follow_up_messages=self._follow_up.drain,
            tool_execution=self.tool_execution,
            before_tool_call=settings.before_tool_call,
            after_tool_call=self.after_tool_call,
            prepare_next_turn=(lambda ctx: prepare(ctx, signal)) if prepare else None,
            should_stop_after_turn=should_stop,
            stream_options=self.stream_options.model_copy(update=update),
        )

    def _should_stop(
        self, signal: AbortSignal, settings: _Settings, run: _ActiveRun
    ) -> Callable[[TurnContext], Any] | None:
        """The loop's ``should_stop_after_turn``: the user's hook, then this run's limits."""
        user = self.should_stop_after_turn
        limits = run.limits = RunLimits(
            max_turns=settings.max_turns,
            max_cost=settings.max_cost,
            budget=settings.budget,
            spent=lambda: self.spent,
            continues=lambda turn: would_continue(turn, self.has_queued_messages),
        )
        if not limits.active:
            return None if user is None else (lambda turn: user(turn, signal))

        async def should_stop(turn: TurnContext) -> bool:
            if user is not None and await maybe_await(user(turn, signal)):
                return True
            if limits.after_turn(turn):
                self.limit_note = limits.note
                return True
            return False

        return should_stop

    def _check_budget(self, budget: float | None) -> None:
        if budget is not None:
            spent = self.spent
            if spent >= budget:
                raise BudgetExceededError(budget_note(budget, spent, scope="conversation"))

    async def _run(
        self, execute: Callable[[_ActiveRun], Awaitable[None]], settings: _Settings
    ) -> None:
        if self._active is not None:
            raise AgentBusyError(RUN_BUSY)
        self.limit_note = None
        loop = asyncio.get_running_loop()
        run = _ActiveRun(
            AbortController(), loop.create_future(), settings, extra=settings.listeners
        )
        self._active = run
        self.state.is_streaming = True
        self.state.streaming_message = None
        self.state.error_message = None
        task = asyncio.ensure_future(self._drive(run, execute))
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            # A kernel interrupt cancelled the caller: abort, let the loop close, re-raise.
            run.controller.abort()
            if not task.done():
                done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE_SECONDS)
                if not done:
                    task.cancel()
            raise

    async def _drive(
        self, run: _ActiveRun, execute: Callable[[_ActiveRun], Awaitable[None]]
    ) -> None:
        try:
            try:
                await execute(run)
            except Exception as exc:
                await self._handle_run_failure(exc, run.controller.signal)
        finally:
            self._finish_run(run)

    async def _handle_run_failure(self, exc: Exception, signal: AbortSignal) -> None:
        failure = empty_reply(
            self.state.model,
            "aborted" if signal.aborted else "error",
            redact(str(exc) or type(exc).__name__),  # an error text: never a key
            content=[TextContent(text="")],
        )
        for event in (
            MessageStartEvent(failure),
            MessageEndEvent(failure),
            TurnEndEvent(failure, []),
            AgentEndEvent([failure]),
        ):
            await maybe_await(self._process_events(event))

    def _finish_run(self, run: _ActiveRun) -> None:
        state = self.state
        state.is_streaming = False
        state.streaming_message = None
        state.pending_tool_calls = frozenset()
        self._steering.restore_undelivered()
        self._follow_up.restore_undelivered()
        if self._active is run:
            self._active = None
        if not run.idle.done():
            run.idle.set_result(None)

    # -- the sink --------------------------------------------------------------------------

    def _process_events(self, event: AgentEvent) -> Awaitable[None] | None:
        """The loop's sink: reduce the state, then call the listeners in order.

        Returns nothing when every listener returned synchronously (the per-token case: no
        coroutine, no task switch); otherwise a coroutine that awaits the listener that
        returned an awaitable, then calls and awaits the rest.
        """
        run = self._active
        if run is None:
            raise RuntimeError(LISTENER_OUTSIDE_RUN)
        self._reduce(event)
        signal = run.controller.signal
        listeners = self._listeners
        extra = run.extra
        if extra:  # the run's own listeners follow the Agent's
            if listeners is not run.own:
                run.own, run.everyone = listeners, listeners + extra
            listeners = run.everyone
        for subscription in listeners:
            result = subscription.call(event, signal)
            if result is not None and _isawaitable(result):
                rest = listeners[listeners.index(subscription) + 1 :]
                return _settle_listeners(result, rest, event, signal)
        return None

    def _reduce(self, event: AgentEvent) -> None:
        state = self.state
        match event:
            case MessageUpdateEvent():  # first: it is the per-token case
                state.streaming_message = event.message
            case MessageStartEvent():
                state.streaming_message = event.message
                self._steering.delivered(event.message)
                self._follow_up.delivered(event.message)
            case MessageEndEvent():
                state.streaming_message = None
                state.messages.append(event.message)
            case ToolExecutionStartEvent():
                state.pending_tool_calls = state.pending_tool_calls | {event.tool_call_id}
            case ToolExecutionEndEvent():
                state.pending_tool_calls = state.pending_tool_calls - {event.tool_call_id}
            case TurnEndEvent():
                if event.message.error_message:
                    state.error_message = event.message.error_message
            case AgentEndEvent():
                state.streaming_message = None
            case TurnStartEvent():
                if self._active is not None:
                    self._active.turns += 1
            case AgentStartEvent() | ToolExecutionUpdateEvent():
                pass
            case _:
                assert_never(event)


async def _settle_listeners(
    pending: Awaitable[Any],
    rest: tuple[_Subscription, ...],
    event: AgentEvent,
    signal: AbortSignal,
) -> None:
    """Await ``pending``, then call and await the remaining listeners one by one."""
    await pending
    for subscription in rest:
        await maybe_await(subscription.call(event, signal))


def _past_start(event: Any) -> bool:
    return bool(event.type != "start")


def _unaffordable(options: StreamOptions) -> bool:
    """The dollars left buy no output after the request's input: it is not sent."""
    return options.max_tokens is not None and options.max_tokens < 1


def _prompt_chars(context: Context) -> int:
    """The characters of a request's system prompt and messages."""
    return len(context.system_prompt or "") + sum(message_chars(m) for m in context.messages)


def _input_tokens(context: Context) -> int:
    """The request's input, estimated at 4 characters a token (:mod:`.sizes`)."""
    chars = _prompt_chars(context)
    chars += sum(len(tool.name) + len(tool.description) for tool in context.tools or ())
    return estimate_tokens(chars)


def _aborted(model: Model) -> AssistantMessageEventStream:
    stream = AssistantMessageEventStream()
    stream.push(ErrorEvent("aborted", empty_reply(model, "aborted", REQUEST_ABORTED)))
    return stream


_OWN = RunConfig()


def _with_options(base: StreamOptions, options: dict[str, Any]) -> StreamOptions:
    """``base`` with ``options`` (StreamOptions fields by name) set, validated."""
    if not options:
        return base
    unknown = sorted(set(options) - set(StreamOptions.model_fields))
    if unknown:
        raise TypeError(f"Agent() got unexpected keyword arguments: {', '.join(unknown)}")
    return StreamOptions(**{**dict(base), **options})


def _as_message(message: AgentMessage | str) -> AgentMessage:
    if isinstance(message, str):
        return UserMessage(content=[TextContent(text=message)], timestamp=now_ms())
    return message


def _takes_two_arguments(fn: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in positional)


__all__ = [
    "Agent",
    "AgentBusyError",
    "AgentState",
    "BudgetExceededError",
    "default_convert_to_llm",
]
