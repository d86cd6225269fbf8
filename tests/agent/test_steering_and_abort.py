"""Steering, follow-ups (reference 2.2) and abort (issue 2: no request after an abort)."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_notebook.agent import AgentTool, AgentToolResult, run_agent_loop
from pi_notebook.ai import (
    AbortController,
    FauxProvider,
    TextContent,
    UserMessage,
    faux_assistant_message,
    faux_tool_call,
)

from .conftest import Log, make_config, make_context, text_tool


def user(text: str) -> UserMessage:
    return UserMessage(content=text)


def tool_reply(call_id: str = "a") -> Any:
    return faux_assistant_message([faux_tool_call("t", {}, id=call_id)], stop_reason="toolUse")


async def test_initial_steering_is_injected_in_the_first_turn_without_turn_start(
    faux: FauxProvider, log: Log
) -> None:
    steering = [[user("steer early")]]
    faux.set_responses([faux_assistant_message("ok")])
    config = make_config(faux, get_steering_messages=lambda: steering.pop(0) if steering else [])
    await run_agent_loop([user("prompt")], make_context(), config, log.emit)
    assert log.entries[:7] == [
        "agent_start",
        "turn_start",
        "message_start(user)",
        "message_end(user)",
        "message_start(user)",
        "message_end(user)",
        "message_start(assistant)",
    ]
    assert log.types().count("turn_start") == 1


async def test_steering_is_delivered_after_the_batch_in_a_new_turn(
    faux: FauxProvider, log: Log
) -> None:
    steer = user("change of plan")
    polls = [[], [steer]]
    faux.set_responses([tool_reply(), faux_assistant_message("ok")])
    config = make_config(faux, get_steering_messages=lambda: polls.pop(0) if polls else [])
    new = await run_agent_loop([user("go")], make_context(text_tool("t")), config, log.emit)
    assert log.entries[8:14] == [
        "message_start(toolResult)",
        "message_end(toolResult)",
        "turn_end",
        "turn_start",
        "message_start(user)",
        "message_end(user)",
    ]
    assert new[3] is steer


async def test_follow_ups_come_only_when_the_agent_would_stop(faux: FauxProvider, log: Log) -> None:
    follow = user("and then?")
    follow_polls = [[follow]]
    steer_polls: list[str] = []
    faux.set_responses([faux_assistant_message("first"), faux_assistant_message("second")])
    config = make_config(
        faux,
        get_steering_messages=lambda: steer_polls.append("s") or [],
        get_follow_up_messages=lambda: follow_polls.pop(0) if follow_polls else [],
    )
    new = await run_agent_loop([user("go")], make_context(), config, log.emit)
    assert [m.role for m in new] == ["user", "assistant", "user", "assistant"]
    assert new[2] is follow
    assert log.types().count("turn_start") == 2


async def test_poll_counts_for_three_turns(faux: FauxProvider, log: Log) -> None:
    counts = {"steer": 0, "follow": 0}
    follow_polls = [[user("f1")], []]

    def steering() -> list[Any]:
        counts["steer"] += 1
        return []

    def follow_ups() -> list[Any]:
        counts["follow"] += 1
        return follow_polls.pop(0) if follow_polls else []

    faux.set_responses([tool_reply(), faux_assistant_message("a"), faux_assistant_message("b")])
    config = make_config(faux, get_steering_messages=steering, get_follow_up_messages=follow_ups)
    await run_agent_loop([user("go")], make_context(text_tool("t")), config, log.emit)
    assert faux.call_count == 3
    assert counts == {"steer": 4, "follow": 2}


async def test_steering_wins_over_follow_ups(faux: FauxProvider, log: Log) -> None:
    order: list[str] = []
    steer_polls = [[], [user("steer")], []]
    follow_polls = [[user("follow")], []]

    def steering() -> list[Any]:
        out = steer_polls.pop(0) if steer_polls else []
        if out:
            order.append("steer")
        return out

    def follow_ups() -> list[Any]:
        out = follow_polls.pop(0) if follow_polls else []
        if out:
            order.append("follow")
        return out

    faux.set_responses([faux_assistant_message(str(i)) for i in range(3)])
    config = make_config(faux, get_steering_messages=steering, get_follow_up_messages=follow_ups)
    await run_agent_loop([user("go")], make_context(), config, log.emit)
    assert order == ["steer", "follow"]


async def test_abort_mid_stream_keeps_the_partial_and_closes_the_events(
    faux: FauxProvider, log: Log
) -> None:
    controller = AbortController()
    steer_polls: list[str] = []

    async def emit(event: Any) -> None:
        await log.emit(event)
        if event.type == "message_update" and len(log.of("message_update")) == 3:
            controller.abort()

    faux.set_responses([faux_assistant_message("one two three four five six")])
    config = make_config(faux, get_steering_messages=lambda: steer_polls.append("s") or [])
    new = await run_agent_loop([user("go")], make_context(), config, emit, controller.signal)
    final = new[-1]
    assert final.stop_reason == "aborted"
    assert final.error_message == "Request was aborted"
    # updates: text_start, "one ", "two " -> abort; nothing after it is streamed
    assert final.content[0].text == "one two "
    assert log.types()[-2:] == ["turn_end", "agent_end"]
    assert steer_polls == ["s"]  # the initial poll only


async def test_abort_during_a_tool_batch_makes_no_further_request(
    faux: FauxProvider, log: Log
) -> None:
    controller = AbortController()
    steering_calls: list[str] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        controller.abort()
        return AgentToolResult(content=[TextContent(text="finished anyway")])

    faux.set_responses([tool_reply(), faux_assistant_message("never requested")])
    config = make_config(faux, get_steering_messages=lambda: steering_calls.append("s") or [])
    new = await run_agent_loop(
        [user("go")],
        make_context(AgentTool(name="t", execute=execute)),
        config,
        log.emit,
        controller.signal,
    )
    assert faux.call_count == 1
    assert faux.pending_response_count() == 1
    assert [m.role for m in new] == ["user", "assistant", "toolResult"]
    assert log.types()[-2:] == ["turn_end", "agent_end"]
    assert steering_calls == ["s"]


async def test_abort_during_parallel_preparation_skips_the_rest(
    faux: FauxProvider, log: Log
) -> None:
    controller = AbortController()

    def before(ctx: Any, signal: Any) -> None:
        controller.abort()

    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("t", {}, id="a"), faux_tool_call("t", {}, id="b")],
                stop_reason="toolUse",
            )
        ]
    )
    new = await run_agent_loop(
        [user("go")],
        make_context(text_tool("t")),
        make_config(faux, before_tool_call=before),
        log.emit,
        controller.signal,
    )
    assert [e.tool_call_id for e in log.of("tool_execution_start")] == ["a"]
    assert new[-1].content[0].text == "Operation aborted"


async def test_tools_receive_the_signal_and_can_stop_early(faux: FauxProvider, log: Log) -> None:
    controller = AbortController()
    started = asyncio.Event()

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        started.set()
        await asyncio.wait_for(signal.wait(), 5)
        raise RuntimeError("stopped by abort")

    faux.set_responses([tool_reply()])
    task = asyncio.ensure_future(
        run_agent_loop(
            [user("go")],
            make_context(AgentTool(name="t", execute=execute)),
            make_config(faux),
            log.emit,
            controller.signal,
        )
    )
    await asyncio.wait_for(started.wait(), 5)
    controller.abort()
    new = await asyncio.wait_for(task, 5)
    assert new[-1].content[0].text == "stopped by abort"
    assert log.types()[-1] == "agent_end"


async def test_an_aborted_signal_before_the_run_makes_no_request(
    faux: FauxProvider, log: Log
) -> None:
    controller = AbortController()
    controller.abort()
    faux.set_responses([faux_assistant_message("x")])
    new = await run_agent_loop(
        [user("go")], make_context(), make_config(faux), log.emit, controller.signal
    )
    assert faux.call_count == 0
    # The open turn is closed with an aborted reply that no provider was asked for.
    assert log.entries == [
        "agent_start",
        "turn_start",
        "message_start(user)",
        "message_end(user)",
        "message_start(assistant)",
        "message_end(assistant)",
        "turn_end",
        "agent_end",
    ]
    assert new[-1].stop_reason == "aborted" and new[-1].content == []
    assert new[-1].error_message == "Request was aborted"
