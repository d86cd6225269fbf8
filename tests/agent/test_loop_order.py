"""The loop's event and hook order (reference 2.1–2.3): the sink is an awaited barrier."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pi_notebook.agent import (
    AgentContext,
    TurnUpdate,
    agent_loop,
    agent_loop_continue,
    run_agent_loop,
    run_agent_loop_continue,
)
from pi_notebook.ai import (
    AssistantMessage,
    AssistantMessageEventStream,
    FauxProvider,
    StreamOptions,
    TextContent,
    UserMessage,
    faux_assistant_message,
    faux_text,
    faux_tool_call,
    register_faux_provider,
)
from pi_notebook.ai.events import DoneEvent, StartEvent, TextStartEvent
from pi_notebook.ai.partial import grow_text

from .conftest import Log, make_config, make_context, text_tool


def user(text: str) -> UserMessage:
    return UserMessage(content=text)


async def test_text_reply_emits_the_minimal_sequence(faux: FauxProvider, log: Log) -> None:
    faux.set_responses([faux_assistant_message("Hello")])
    prompt = user("hi")
    new = await run_agent_loop([prompt], make_context(), make_config(faux), log.emit)
    assert log.types() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert new[0] is prompt
    assert new[1].content[0].text == "Hello"
    assert log.of("agent_end")[0].messages is new
    # 5 characters at token size 1: "Hell" + "o"
    deltas = [
        e.assistant_message_event.delta
        for e in log.of("message_update")
        if e.assistant_message_event.type == "text_delta"
    ]
    assert deltas == ["Hell", "o"]


async def test_message_end_carries_the_final_object_and_updates_carry_copies(
    faux: FauxProvider, log: Log
) -> None:
    faux.set_responses([faux_assistant_message("Hello world")])
    new = await run_agent_loop([user("hi")], make_context(), make_config(faux), log.emit)
    end = next(e for e in log.of("message_end") if e.message.role == "assistant")
    assert end.message is new[-1]
    updates = log.of("message_update")
    assert all(u.message is not end.message for u in updates)
    # shallow copies share the live content list with the partial
    assert updates[0].message.content is updates[-1].message.content


async def test_exact_sink_and_hook_order_for_a_tool_turn_then_a_text_turn(
    faux: FauxProvider, log: Log
) -> None:
    second_model = faux.get_model().model_copy(update={"id": "faux-2"})
    seen_options: list[Any] = []

    def stream_fn(model: Any, context: Any, options: Any) -> Any:
        log.note(f"stream_fn({model.id},{options.reasoning})")
        seen_options.append(options)
        return faux.stream(model, context, options)

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        log.note("execute")
        from pi_notebook.agent import AgentToolResult

        return AgentToolResult(content=[])

    tool = text_tool("t")
    tool.execute = execute

    def note(name: str, value: Any = None) -> Any:
        def hook(*args: Any) -> Any:
            log.note(name)
            return value(*args) if callable(value) else value

        return hook

    config = make_config(
        faux,
        get_steering_messages=note("getSteeringMessages", []),
        get_follow_up_messages=note("getFollowUpMessages", []),
        transform_context=note("transformContext", lambda msgs, signal: msgs),
        convert_to_llm=note("convertToLlm", lambda msgs: msgs),
        get_api_key=note("getApiKey", None),
        before_tool_call=note("beforeToolCall"),
        after_tool_call=note("afterToolCall"),
        prepare_next_turn=note(
            "prepareNextTurn",
            lambda ctx: (
                TurnUpdate(model=second_model, thinking_level="high") if ctx.tool_results else None
            ),
        ),
        should_stop_after_turn=note("shouldStopAfterTurn", False),
    )
    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("t", {}, id="c1")], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ]
    )
    await run_agent_loop([user("go")], make_context(tool), config, log.emit, None, stream_fn)
    assert log.entries == [
        "agent_start",
        "turn_start",
        "message_start(user)",
        "message_end(user)",
        "getSteeringMessages",
        "transformContext",
        "convertToLlm",
        "getApiKey",
        "stream_fn(faux-1,None)",
        "message_start(assistant)",
        "message_end(assistant)",
        "tool_execution_start(c1)",
        "beforeToolCall",
        "execute",
        "afterToolCall",
        "tool_execution_end(c1)",
        "message_start(toolResult)",
        "message_end(toolResult)",
        "turn_end",
        "prepareNextTurn",
        "shouldStopAfterTurn",
        "getSteeringMessages",
        "turn_start",
        "transformContext",
        "convertToLlm",
        "getApiKey",
        "stream_fn(faux-2,high)",
        "message_start(assistant)",
        "message_end(assistant)",
        "turn_end",
        "prepareNextTurn",
        "shouldStopAfterTurn",
        "getSteeringMessages",
        "getFollowUpMessages",
        "agent_end",
    ]


async def test_a_slow_listener_holds_the_next_model_call(faux: FauxProvider) -> None:
    release = asyncio.Event()
    waiting = asyncio.Event()
    order: list[str] = []

    async def emit(event: Any) -> None:
        if event.type == "message_end" and event.message.role == "user":
            order.append("listener waiting")
            waiting.set()
            await release.wait()
            order.append("listener released")

    def stream_fn(model: Any, context: Any, options: Any) -> Any:
        order.append("model called")
        return faux.stream(model, context, options)

    faux.set_responses([faux_assistant_message("hi")])
    run = asyncio.ensure_future(
        run_agent_loop([user("x")], make_context(), make_config(faux), emit, None, stream_fn)
    )
    await asyncio.wait_for(waiting.wait(), 5)
    assert faux.call_count == 0
    release.set()
    await asyncio.wait_for(run, 5)
    assert order == ["listener waiting", "listener released", "model called"]


async def test_transform_context_output_feeds_convert_to_llm(faux: FauxProvider, log: Log) -> None:
    received: list[Any] = []
    marker = user("injected by transform")

    def transform(messages: list[Any], signal: Any) -> list[Any]:
        return [*messages, marker]

    async def convert(messages: list[Any]) -> list[Any]:
        received.append(list(messages))
        return list(messages)

    faux.set_responses([faux_assistant_message("ok")])
    config = make_config(faux, transform_context=transform, convert_to_llm=convert)
    await run_agent_loop([user("a")], make_context(), config, log.emit)
    assert received[0][-1] is marker


async def test_get_api_key_is_asked_per_request_and_falls_back_to_config_key(
    faux: FauxProvider, log: Log
) -> None:
    keys: list[str | None] = []
    answers = iter(["key-1", None])

    def stream_fn(model: Any, context: Any, options: Any) -> Any:
        keys.append(options.api_key)
        return faux.stream(model, context, options)

    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("t", {})], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ]
    )
    config = make_config(
        faux,
        get_api_key=lambda provider: next(answers),
        stream_options=StreamOptions(api_key="fallback"),
    )
    await run_agent_loop(
        [user("a")], make_context(text_tool("t")), config, log.emit, None, stream_fn
    )
    assert keys == ["key-1", "fallback"]


async def test_should_stop_after_turn_ends_without_polling_steering(
    faux: FauxProvider, log: Log
) -> None:
    polls: list[str] = []
    faux.set_responses([faux_assistant_message([faux_tool_call("t", {})], stop_reason="toolUse")])
    config = make_config(
        faux,
        get_steering_messages=lambda: polls.append("steer") or [],
        get_follow_up_messages=lambda: polls.append("follow") or [],
        should_stop_after_turn=lambda ctx: True,
    )
    await run_agent_loop([user("a")], make_context(text_tool("t")), config, log.emit)
    assert polls == ["steer"]  # only the initial poll
    assert log.types()[-2:] == ["turn_end", "agent_end"]
    assert faux.call_count == 1


async def test_prepare_next_turn_can_replace_the_context(faux: FauxProvider, log: Log) -> None:
    replacement = AgentContext(system_prompt="new system", messages=[], tools=[])
    seen: list[str | None] = []

    def stream_fn(model: Any, context: Any, options: Any) -> Any:
        seen.append(context.system_prompt)
        return faux.stream(model, context, options)

    def prepare(ctx: Any) -> TurnUpdate:
        replacement.messages = list(ctx.context.messages)
        return TurnUpdate(context=replacement)

    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("t", {})], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ]
    )
    config = make_config(faux, prepare_next_turn=prepare)
    await run_agent_loop(
        [user("a")], make_context(text_tool("t")), config, log.emit, None, stream_fn
    )
    assert seen == ["You are a test.", "new system"]


async def test_hooks_are_not_called_after_an_error_reply(faux: FauxProvider, log: Log) -> None:
    calls: list[str] = []
    faux.set_responses(
        [faux_assistant_message("partial", stop_reason="error", error_message="boom")]
    )
    config = make_config(
        faux,
        prepare_next_turn=lambda ctx: calls.append("prepare"),
        should_stop_after_turn=lambda ctx: calls.append("stop") or False,
        get_follow_up_messages=lambda: calls.append("follow") or [],
    )
    new = await run_agent_loop([user("a")], make_context(), config, log.emit)
    assert calls == []
    assert log.types()[-2:] == ["turn_end", "agent_end"]
    assert new[-1].stop_reason == "error"
    assert new[-1].error_message == "boom"
    assert log.of("turn_end")[0].tool_results == []


async def test_tool_calls_of_an_errored_reply_are_not_run(faux: FauxProvider, log: Log) -> None:
    faux.set_responses(
        [faux_assistant_message([faux_tool_call("t", {})], stop_reason="error", error_message="x")]
    )
    await run_agent_loop([user("a")], make_context(text_tool("t")), make_config(faux), log.emit)
    assert log.of("tool_execution_start") == []


async def test_continue_rejects_empty_and_assistant_last_transcripts(faux: FauxProvider) -> None:
    async def emit(event: Any) -> None:
        return None

    with pytest.raises(ValueError, match="^Cannot continue: no messages in context$"):
        await run_agent_loop_continue(make_context(), make_config(faux), emit)
    last = faux_assistant_message("x")
    with pytest.raises(ValueError, match="^Cannot continue from message role: assistant$"):
        await run_agent_loop_continue(make_context(messages=[last]), make_config(faux), emit)
    with pytest.raises(ValueError, match="role: assistant"):
        agent_loop_continue(make_context(messages=[last]), make_config(faux))


async def test_continue_emits_no_prompt_events_and_extends_the_callers_list(
    faux: FauxProvider, log: Log
) -> None:
    faux.set_responses([faux_assistant_message("resumed")])
    history: list[Any] = [user("earlier")]
    context = make_context(messages=history)
    new = await run_agent_loop_continue(context, make_config(faux), log.emit)
    assert log.types() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert len(new) == 1
    assert history[-1] is new[0]


async def test_agent_loop_stream_yields_every_event_and_the_new_messages(
    faux: FauxProvider,
) -> None:
    faux.set_responses([faux_assistant_message("Hello")])
    stream = agent_loop([user("hi")], make_context(), make_config(faux))
    kinds = [event.type async for event in stream]  # type: ignore[attr-defined]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
    messages = await stream.result()  # type: ignore[attr-defined]
    assert [m.role for m in messages] == ["user", "assistant"]


async def test_agent_loop_stream_ends_even_when_the_stream_function_raises(
    faux: FauxProvider,
) -> None:
    def broken(model: Any, context: Any, options: Any) -> Any:
        raise RuntimeError("stream function exploded")

    stream = agent_loop([user("hi")], make_context(), make_config(faux), None, broken)
    kinds = await asyncio.wait_for(_collect(stream), 5)
    assert kinds[:2] == ["agent_start", "turn_start"]


async def _collect(stream: Any) -> list[str]:
    return [event.type async for event in stream]


async def test_a_provider_without_start_still_gets_message_start(log: Log) -> None:
    faux = register_faux_provider(token_size=(1, 1))
    try:
        faux.set_responses([])  # exhausted: only an error event, no start
        new = await run_agent_loop([user("a")], make_context(), make_config(faux), log.emit)
        assert log.types() == [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "turn_end",
            "agent_end",
        ]
        assert isinstance(new[-1], AssistantMessage)
        assert new[-1].error_message == "No more faux responses queued"
    finally:
        faux.unregister()


async def test_custom_messages_are_carried_but_filtered_by_convert_to_llm(
    faux: FauxProvider, log: Log
) -> None:
    from pi_notebook.ai import CustomMessage

    note = CustomMessage(role="notification", text="FYI")
    seen_roles: list[list[str]] = []

    def stream_fn(model: Any, context: Any, options: Any) -> Any:
        seen_roles.append([m.role for m in context.messages])
        return faux.stream(model, context, options)

    faux.set_responses([faux_assistant_message("ok")])
    new = await run_agent_loop(
        [note, user("hi")], make_context(), make_config(faux), log.emit, None, stream_fn
    )
    assert new[0] is note
    assert seen_roles == [["user"]]
    assert [e.message.role for e in log.of("message_start")][:2] == ["notification", "user"]


async def test_faux_text_block_accumulates_in_partial(faux: FauxProvider, log: Log) -> None:
    faux.set_responses([faux_assistant_message([faux_text("abcdefgh")])])
    await run_agent_loop([user("a")], make_context(), make_config(faux), log.emit)
    texts = [u.message.content[0].text for u in log.of("message_update")]
    assert texts[-1] == "abcdefgh"


async def test_updates_share_a_snapshot_until_a_top_level_field_changes(log: Log) -> None:
    """``message_update.message`` is Pi's ``{...partial}``: top-level fields frozen at emit time.

    Consecutive updates may share one snapshot while the partial's top-level fields stay the
    same; once a provider changes one (here ``response_id`` mid-stream), later updates carry
    a new snapshot and earlier ones keep the old value.
    """
    final = faux_assistant_message("abcdef")
    final.api, final.provider, final.model = "scripted", "scripted", "m"
    partial = final.model_copy(update={"content": [TextContent(text="")]})

    async def events() -> AsyncIterator[Any]:
        yield StartEvent(partial=partial)
        yield TextStartEvent(content_index=0, partial=partial)
        for i, delta in enumerate(["ab", "cd", "ef"]):
            if i == 2:
                partial.response_id = "resp-2"
            yield grow_text(partial, 0, delta)
        yield DoneEvent(reason="stop", message=final)

    def stream_fn(model: Any, context: Any, options: Any = None) -> AssistantMessageEventStream:
        return AssistantMessageEventStream.from_events(events())

    faux = register_faux_provider()
    try:
        config = make_config(faux)
        await run_agent_loop([user("hi")], make_context(), config, log.emit, None, stream_fn)
    finally:
        faux.unregister()
    start = next(e for e in log.of("message_start") if e.message.role == "assistant")
    updates = log.of("message_update")
    assert [u.assistant_message_event.type for u in updates] == [
        "text_start",
        *["text_delta"] * 3,
    ]
    snapshots = [start.message, *(u.message for u in updates)]
    assert all(s is not partial for s in snapshots)
    assert [s.response_id for s in snapshots] == [None, None, None, None, "resp-2"]
    assert snapshots[0] is snapshots[3] and snapshots[4] is not snapshots[3]
    assert all(s.content is partial.content for s in snapshots)


async def test_a_plain_function_sink_gets_every_event_in_order(faux: FauxProvider) -> None:
    """Pi's sink may return nothing: a plain function is called, not awaited."""
    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("echo", {"text": "x"})], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ]
    )
    plain: list[str] = []
    awaited_log = Log()

    def sink(event: Any) -> int:  # a return value that is not awaitable is ignored
        plain.append(event.type)
        return len(plain)

    context = make_context(text_tool("echo"))
    await run_agent_loop([user("hi")], context, make_config(faux), sink)
    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("echo", {"text": "x"})], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ]
    )
    context = make_context(text_tool("echo"))
    await run_agent_loop([user("hi")], context, make_config(faux), awaited_log.emit)
    assert plain == awaited_log.types(updates=True)
    assert plain[-1] == "agent_end" and "tool_execution_end" in plain
