"""The stateful Agent (reference section 3): state, queues, listeners, failures, abort."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_notebook.agent import Agent, AgentBusyError, AgentTool, AgentToolResult
from pi_notebook.ai import (
    FauxProvider,
    TextContent,
    UserMessage,
    faux_assistant_message,
    faux_tool_call,
    register_faux_provider,
)

from .conftest import text_tool


def make_agent(faux: FauxProvider, **kwargs: Any) -> Agent:
    return Agent(model=faux.get_model(), system_prompt="test", **kwargs)


async def test_prompt_appends_the_run_to_the_transcript(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("hello")])
    agent = make_agent(faux)
    await agent.prompt("hi")
    assert [m.role for m in agent.state.messages] == ["user", "assistant"]
    assert agent.state.messages[0].content[0].text == "hi"
    assert agent.state.is_streaming is False
    assert agent.state.streaming_message is None


async def test_prompt_stores_the_same_message_objects(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("x")])
    agent = make_agent(faux)
    message = UserMessage(content="hi")
    await agent.prompt(message)
    assert agent.state.messages[0] is message


async def test_state_is_reduced_before_listeners_run(faux: FauxProvider) -> None:
    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("t", {}, id="c1")], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ]
    )
    agent = make_agent(faux, tools=[text_tool("t")])
    seen: list[tuple[str, Any]] = []

    def listener(event: Any, signal: Any) -> None:
        if event.type == "message_end":
            seen.append(("end", agent.state.messages[-1] is event.message))
        elif event.type == "message_update":
            seen.append(("update", agent.state.streaming_message is event.message))
        elif event.type == "tool_execution_start":
            seen.append(("pending", set(agent.state.pending_tool_calls)))
        elif event.type == "tool_execution_end":
            seen.append(("settled", set(agent.state.pending_tool_calls)))
        elif event.type == "agent_end":
            seen.append(("streaming", agent.state.is_streaming))

    agent.subscribe(listener)
    await agent.prompt("go")
    assert all(ok for kind, ok in seen if kind in ("end", "update"))
    assert ("pending", {"c1"}) in seen and ("settled", set()) in seen
    assert seen[-1] == ("streaming", True)


async def test_prompt_while_running_raises_pis_message(faux: FauxProvider) -> None:
    gate = asyncio.Event()
    executing = asyncio.Event()

    async def execute(*args: Any) -> AgentToolResult:
        executing.set()
        await asyncio.wait_for(gate.wait(), 5)
        return AgentToolResult()

    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("t", {}, id="c1")], stop_reason="toolUse"),
            faux_assistant_message("done"),
        ]
    )
    agent = make_agent(faux, tools=[AgentTool(name="t", execute=execute)])
    run = asyncio.ensure_future(agent.prompt("go"))
    await asyncio.wait_for(executing.wait(), 5)
    assert agent.state.pending_tool_calls == {"c1"}
    with pytest.raises(AgentBusyError) as busy:
        await agent.prompt("again")
    assert str(busy.value) == (
        "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, "
        "or wait for completion."
    )
    with pytest.raises(AgentBusyError, match="^Agent is already processing. Wait for completion"):
        await agent.continue_()
    with pytest.raises(AgentBusyError):
        agent.reset()
    gate.set()
    await asyncio.wait_for(run, 5)


async def test_listeners_are_awaited_in_order_and_idle_waits_for_agent_end_listeners(
    faux: FauxProvider,
) -> None:
    faux.set_responses([faux_assistant_message("x")])
    agent = make_agent(faux)
    order: list[str] = []
    release = asyncio.Event()
    slow_started = asyncio.Event()

    async def slow(event: Any, signal: Any) -> None:
        if event.type == "agent_end":
            order.append("slow start")
            slow_started.set()
            await release.wait()
            order.append("slow end")

    def fast(event: Any) -> None:
        if event.type == "agent_end":
            order.append("fast")

    agent.subscribe(slow)
    agent.subscribe(fast)
    run = asyncio.ensure_future(agent.prompt("hi"))
    await asyncio.wait_for(slow_started.wait(), 5)
    idle = asyncio.ensure_future(agent.wait_for_idle())
    await asyncio.sleep(0)
    assert not idle.done() and agent.state.is_streaming
    release.set()
    await asyncio.wait_for(asyncio.gather(run, idle), 5)
    assert order == ["slow start", "slow end", "fast"]
    assert not agent.state.is_streaming


async def test_unsubscribe_stops_delivery(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("x"), faux_assistant_message("y")])
    agent = make_agent(faux)
    seen: list[str] = []
    unsubscribe = agent.subscribe(lambda e: seen.append(e.type))
    await agent.prompt("one")
    count = len(seen)
    unsubscribe()
    await agent.prompt("two")
    assert len(seen) == count


async def test_a_raising_listener_becomes_a_failure_message_and_prompt_returns(
    faux: FauxProvider,
) -> None:
    faux.set_responses([faux_assistant_message("x")])
    agent = make_agent(faux)
    events: list[Any] = []
    fired = []

    def listener(event: Any) -> None:
        events.append(event)
        if event.type == "message_end" and event.message.role == "user" and not fired:
            fired.append(True)
            raise RuntimeError("listener broke")

    agent.subscribe(listener)
    await agent.prompt("hi")
    tail = [e.type for e in events[-4:]]
    assert tail == ["message_start", "message_end", "turn_end", "agent_end"]
    failure = events[-1].messages[0]
    assert events[-1].messages == [failure]
    assert failure.stop_reason == "error"
    assert failure.error_message == "listener broke"
    assert failure.content == [TextContent(text="")]
    assert failure.provider == faux.provider and failure.model == faux.get_model().id
    assert agent.state.error_message == "listener broke"
    assert agent.state.messages[-1] is failure


async def test_a_raising_stream_function_fails_the_run_cleanly(faux: FauxProvider) -> None:
    def broken(*args: Any) -> Any:
        raise RuntimeError("no network")

    agent = make_agent(faux, stream_fn=broken)
    kinds: list[str] = []
    agent.subscribe(lambda e: kinds.append(e.type))
    await agent.prompt("hi")
    assert kinds[-1] == "agent_end" and kinds.count("agent_end") == 1
    assert agent.state.messages[-1].error_message == "no network"


async def test_steering_modes_one_at_a_time_and_all(faux: FauxProvider) -> None:
    # Both are queued while the prompt is delivered, so the initial poll already sees them.
    for mode, expected_calls in (("one-at-a-time", 2), ("all", 1)):
        provider = register_faux_provider(token_size=(1, 1))
        try:
            provider.set_responses([faux_assistant_message(str(i)) for i in range(3)])
            agent = Agent(model=provider.get_model(), steering_mode=mode)  # type: ignore[arg-type]

            def steer_twice(event: Any, agent: Agent = agent) -> None:
                if (
                    event.type == "message_end"
                    and getattr(event.message, "content", None) == "start"
                ):
                    agent.steer("s1")
                    agent.steer("s2")

            agent.subscribe(lambda event: steer_twice(event))
            await agent.prompt(UserMessage(content="start"))
            assert provider.call_count == expected_calls, mode
            assert not agent.has_queued_messages()
        finally:
            provider.unregister()


async def test_follow_up_queued_while_idle_is_delivered_by_continue(faux: FauxProvider) -> None:
    faux.set_responses([faux_assistant_message("a"), faux_assistant_message("b")])
    agent = make_agent(faux)
    await agent.prompt("first")
    agent.follow_up("second")
    assert agent.has_queued_messages()
    await agent.continue_()
    assert [m.role for m in agent.state.messages] == ["user", "assistant", "user", "assistant"]


async def test_continue_errors(faux: FauxProvider) -> None:
    agent = make_agent(faux)
    with pytest.raises(ValueError, match="^No messages to continue from$"):
        await agent.continue_()
    faux.set_responses([faux_assistant_message("a")])
    await agent.prompt("x")
    with pytest.raises(ValueError, match="^Cannot continue from message role: assistant$"):
        await agent.continue_()


async def test_abort_keeps_undelivered_queued_messages(faux: FauxProvider) -> None:
    gate = asyncio.Event()

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        gate.set()
        await asyncio.wait_for(signal.wait(), 5)
        return AgentToolResult(content=[TextContent(text="stopped")])

    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("t", {})], stop_reason="toolUse"),
            faux_assistant_message("next"),
        ]
    )
    agent = make_agent(faux, tools=[AgentTool(name="t", execute=execute)])
    run = asyncio.ensure_future(agent.prompt("go"))
    await asyncio.wait_for(gate.wait(), 5)
    agent.steer("steer me")
    agent.follow_up("follow me")
    agent.abort()
    await asyncio.wait_for(run, 5)
    assert faux.call_count == 1
    assert [m.content[0].text for m in agent.steering_queue] == ["steer me"]
    assert [m.content[0].text for m in agent.follow_up_queue] == ["follow me"]
    # The transcript is valid for the next request and the queue is delivered then.
    await agent.prompt("resume")
    texts = [m.content[0].text for m in agent.state.messages if m.role == "user"]
    assert texts == ["go", "resume", "steer me", "follow me"]


async def test_cancelling_prompt_aborts_closes_events_and_reraises(faux: FauxProvider) -> None:
    provider = register_faux_provider(token_size=(1, 1), tokens_per_second=200)
    try:
        provider.set_responses([faux_assistant_message("word " * 400)])
        agent = Agent(model=provider.get_model())
        kinds: list[str] = []
        streaming = asyncio.Event()

        def record(event: Any) -> None:
            kinds.append(event.type)
            if kinds.count("message_update") == 3:
                streaming.set()

        agent.subscribe(record)
        task = asyncio.ensure_future(agent.prompt("stream a lot"))
        await asyncio.wait_for(streaming.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)
        assert kinds[-2:] == ["turn_end", "agent_end"]
        assert agent.state.messages[-1].stop_reason == "aborted"
        assert not agent.is_running
    finally:
        provider.unregister()


async def test_reset_clears_transcript_and_queues_but_keeps_model_and_tools(
    faux: FauxProvider,
) -> None:
    faux.set_responses([faux_assistant_message("x")])
    tool = text_tool("t")
    agent = make_agent(faux, tools=[tool])
    await agent.prompt("hi")
    agent.steer("later")
    agent.reset()
    assert agent.state.messages == [] and not agent.has_queued_messages()
    assert agent.state.tools == [tool] and agent.state.model == faux.get_model()


async def test_thinking_level_off_sends_no_reasoning(faux: FauxProvider) -> None:
    seen: list[Any] = []

    def stream_fn(model: Any, context: Any, options: Any) -> Any:
        seen.append(options.reasoning)
        return faux.stream(model, context, options)

    faux.set_responses([faux_assistant_message("a"), faux_assistant_message("b")])
    agent = make_agent(faux, stream_fn=stream_fn)
    await agent.prompt("x")
    agent.state.thinking_level = "medium"
    await agent.prompt("y")
    assert seen == [None, "medium"]


async def test_a_listener_outside_a_run_is_rejected(faux: FauxProvider) -> None:
    agent = make_agent(faux)
    with pytest.raises(RuntimeError, match="^Agent listener invoked outside active run$"):
        await agent._process_events(object())


async def test_listeners_after_an_async_one_wait_for_it_on_every_event(
    faux: FauxProvider,
) -> None:
    """Sync listeners cost no await; once one returns an awaitable the rest wait for it."""
    faux.set_responses([faux_assistant_message("abcdefgh")])
    agent = make_agent(faux)
    calls: list[tuple[str, str]] = []

    def first(event: Any) -> None:
        calls.append(("first", event.type))

    async def second(event: Any, signal: Any) -> None:
        calls.append(("second", event.type))
        # A real suspension (a future the loop resolves later): the third must not run meanwhile.
        resumed = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(resumed.set_result, None)
        await resumed
        calls.append(("second done", event.type))

    def third(event: Any, signal: Any) -> None:
        calls.append(("third", event.type))

    for listener in (first, second, third):
        agent.subscribe(listener)
    await agent.prompt("go")
    kinds = [kind for who, kind in calls if who == "first"]
    assert "message_update" in kinds and kinds[-1] == "agent_end"
    expected = [
        (who, kind) for kind in kinds for who in ("first", "second", "second done", "third")
    ]
    assert calls == expected
