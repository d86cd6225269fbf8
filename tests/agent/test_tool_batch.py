"""Tool batches (reference 2.4): preparation, parallel and sequential execution, hooks, errors."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_notebook.agent import (
    AfterToolCallResult,
    AgentTool,
    AgentToolResult,
    BeforeToolCallResult,
    run_agent_loop,
    truncated_call_text,
)
from pi_notebook.ai import (
    FauxProvider,
    TextContent,
    UserMessage,
    faux_assistant_message,
    faux_text,
    faux_tool_call,
)

from .conftest import Log, make_config, make_context, text_tool

NUMBER_SCHEMA = {
    "type": "object",
    "properties": {"value": {"type": "number"}},
    "required": ["value"],
}


def calls(*names_and_ids: tuple[str, str], args: dict[str, Any] | None = None) -> Any:
    return faux_assistant_message(
        [faux_tool_call(name, args or {}, id=call_id) for name, call_id in names_and_ids],
        stop_reason="toolUse",
    )


def result_texts(log: Log) -> list[str]:
    return [
        e.message.content[0].text for e in log.of("message_end") if e.message.role == "toolResult"
    ]


async def run(faux: FauxProvider, log: Log, *tools: AgentTool, **config: Any) -> list[Any]:
    return await run_agent_loop(
        [UserMessage(content="go")], make_context(*tools), make_config(faux, **config), log.emit
    )


def gated_tool(
    name: str, gates: dict[str, asyncio.Event], order: list[str], started: asyncio.Event
) -> AgentTool:
    """A tool that finishes only when its gate opens, and records when it started/ended.

    ``started`` is set once every gated call has started.
    """

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        order.append(f"start {call_id}")
        if sum(entry.startswith("start ") for entry in order) == len(gates):
            started.set()
        await asyncio.wait_for(gates[call_id].wait(), 5)
        order.append(f"end {call_id}")
        return AgentToolResult(content=[TextContent(text=call_id)])

    return AgentTool(name=name, parameters={"type": "object"}, execute=execute)


async def test_parallel_batch_ends_in_completion_order_and_results_in_source_order(
    faux: FauxProvider, log: Log
) -> None:
    gates = {"a": asyncio.Event(), "b": asyncio.Event()}
    started = asyncio.Event()
    order: list[str] = []
    faux.set_responses([calls(("slow", "a"), ("slow", "b")), faux_assistant_message("done")])

    async def emit(event: Any) -> None:
        await log.emit(event)
        # b is released first (below); a only once b's end event has been emitted
        if event.type == "tool_execution_end" and event.tool_call_id == "b":
            gates["a"].set()

    task = asyncio.ensure_future(
        run_agent_loop(
            [UserMessage(content="go")],
            make_context(gated_tool("slow", gates, order, started)),
            make_config(faux),
            emit,
        )
    )
    await asyncio.wait_for(started.wait(), 5)
    assert order == ["start a", "start b"]
    gates["b"].set()
    await asyncio.wait_for(task, 5)
    assert [e.tool_call_id for e in log.of("tool_execution_end")] == ["b", "a"]
    assert result_texts(log) == ["a", "b"]
    turn_end = log.of("turn_end")[0]
    assert [r.tool_call_id for r in turn_end.tool_results] == ["a", "b"]
    # preparation of every call precedes any execution
    starts = [e for e in log.entries if e.startswith("tool_execution_start")]
    assert starts == ["tool_execution_start(a)", "tool_execution_start(b)"]


async def test_sequential_config_runs_one_call_at_a_time(faux: FauxProvider, log: Log) -> None:
    faux.set_responses([calls(("t", "a"), ("t", "b")), faux_assistant_message("done")])
    await run(faux, log, text_tool("t"), tool_execution="sequential")
    assert log.entries[4:14] == [
        "message_start(assistant)",
        "message_end(assistant)",
        "tool_execution_start(a)",
        "tool_execution_end(a)",
        "message_start(toolResult)",
        "message_end(toolResult)",
        "tool_execution_start(b)",
        "tool_execution_end(b)",
        "message_start(toolResult)",
        "message_end(toolResult)",
    ]


async def test_one_sequential_tool_makes_the_whole_batch_sequential(
    faux: FauxProvider, log: Log
) -> None:
    faux.set_responses([calls(("p", "a"), ("s", "b")), faux_assistant_message("done")])
    await run(faux, log, text_tool("p"), text_tool("s", execution_mode="sequential"))
    assert log.entries[6:8] == ["tool_execution_start(a)", "tool_execution_end(a)"]


async def test_unknown_tool_becomes_an_error_result_and_the_run_goes_on(
    faux: FauxProvider, log: Log
) -> None:
    faux.set_responses([calls(("nope", "a")), faux_assistant_message("done")])
    new = await run(faux, log)
    assert result_texts(log) == ["Tool nope not found"]
    assert log.of("tool_execution_end")[0].is_error is True
    assert new[-1].content[0].text == "done"


async def test_invalid_arguments_fail_validation_with_pis_prefix(
    faux: FauxProvider, log: Log
) -> None:
    ran: list[Any] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        ran.append(params)
        return AgentToolResult()

    tool = AgentTool(name="num", parameters=NUMBER_SCHEMA, execute=execute)
    faux.set_responses(
        [calls(("num", "a"), args={"value": "not a number"}), faux_assistant_message("done")]
    )
    await run(faux, log, tool)
    text = result_texts(log)[0]
    assert text.startswith('Validation failed for tool "num":\n  - ')
    assert text.endswith('Received arguments:\n{\n  "value": "not a number"\n}')
    assert ran == []


async def test_arguments_are_coerced_before_execute_but_events_show_the_raw_ones(
    faux: FauxProvider, log: Log
) -> None:
    received: list[Any] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        received.append(params)
        return AgentToolResult()

    tool = AgentTool(name="num", parameters=NUMBER_SCHEMA, execute=execute)
    faux.set_responses([calls(("num", "a"), args={"value": "5"}), faux_assistant_message("done")])
    await run(faux, log, tool)
    assert received == [{"value": 5}]
    assert log.of("tool_execution_start")[0].args == {"value": "5"}


async def test_a_raising_tool_becomes_an_error_result(faux: FauxProvider, log: Log) -> None:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        raise RuntimeError("disk on fire")

    faux.set_responses([calls(("bad", "a")), faux_assistant_message("done")])
    new = await run(faux, log, AgentTool(name="bad", execute=execute))
    assert result_texts(log) == ["disk on fire"]
    result_message = new[2]
    assert result_message.is_error is True
    assert result_message.details == {}


async def test_before_tool_call_block_uses_the_reason_or_the_default_text(
    faux: FauxProvider, log: Log
) -> None:
    decisions = iter([BeforeToolCallResult(block=True, reason="not today"), {"block": True}])
    faux.set_responses([calls(("t", "a"), ("t", "b")), faux_assistant_message("done")])
    await run(faux, log, text_tool("t"), before_tool_call=lambda ctx, signal: next(decisions))
    assert result_texts(log) == ["not today", "Tool execution was blocked"]


async def test_before_tool_call_may_mutate_args_without_revalidation(
    faux: FauxProvider, log: Log
) -> None:
    received: list[Any] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        received.append(params)
        return AgentToolResult()

    def before(ctx: Any, signal: Any) -> None:
        assert ctx.tool_call.arguments == {"value": 1}
        ctx.args["value"] = "not validated again"

    tool = AgentTool(name="num", parameters=NUMBER_SCHEMA, execute=execute)
    faux.set_responses([calls(("num", "a"), args={"value": 1}), faux_assistant_message("done")])
    await run(faux, log, tool, before_tool_call=before)
    assert received == [{"value": "not validated again"}]
    assert log.of("tool_execution_start")[0].args == {"value": 1}


async def test_after_tool_call_overrides_fields_one_by_one(faux: FauxProvider, log: Log) -> None:
    def after(ctx: Any, signal: Any) -> AfterToolCallResult:
        assert ctx.result.content[0].text == "ok"
        return AfterToolCallResult(content=[TextContent(text="rewritten")], is_error=True)

    faux.set_responses([calls(("t", "a")), faux_assistant_message("done")])
    new = await run(faux, log, text_tool("t"), after_tool_call=after)
    assert new[2].content[0].text == "rewritten"
    assert new[2].is_error is True
    assert new[2].details == {"params": {}}  # kept


async def test_a_raising_after_tool_call_becomes_an_error_result(
    faux: FauxProvider, log: Log
) -> None:
    def after(ctx: Any, signal: Any) -> None:
        raise ValueError("after hook failed")

    faux.set_responses([calls(("t", "a")), faux_assistant_message("done")])
    await run(faux, log, text_tool("t"), after_tool_call=after)
    assert result_texts(log) == ["after hook failed"]


async def test_terminate_on_every_result_ends_the_run_after_the_batch(
    faux: FauxProvider, log: Log
) -> None:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(content=[TextContent(text="bye")], terminate=True)

    faux.set_responses([calls(("end", "a"), ("end", "b")), faux_assistant_message("never")])
    await run(faux, log, AgentTool(name="end", execute=execute))
    assert faux.call_count == 1
    assert log.types()[-2:] == ["turn_end", "agent_end"]
    assert all("terminate" not in m.to_json_dict() for m in log.of("turn_end")[0].tool_results)


async def test_terminate_needs_every_result_of_the_batch(faux: FauxProvider, log: Log) -> None:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(terminate=True)

    faux.set_responses([calls(("end", "a"), ("t", "b")), faux_assistant_message("again")])
    await run(faux, log, AgentTool(name="end", execute=execute), text_tool("t"))
    assert faux.call_count == 2


async def test_steering_still_starts_a_turn_after_terminate(faux: FauxProvider, log: Log) -> None:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(terminate=True)

    steering = [[], [UserMessage(content="one more thing")], []]
    faux.set_responses([calls(("end", "a")), faux_assistant_message("sure")])
    await run(
        faux,
        log,
        AgentTool(name="end", execute=execute),
        get_steering_messages=lambda: steering.pop(0),
    )
    assert faux.call_count == 2


async def test_length_stop_fails_every_call_without_running_it(
    faux: FauxProvider, log: Log
) -> None:
    ran: list[str] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        ran.append(call_id)
        return AgentToolResult()

    truncated = faux_assistant_message(
        [faux_tool_call("t", {"a": 1}, id="a"), faux_tool_call("t", {}, id="b")],
        stop_reason="length",
    )
    faux.set_responses([truncated, faux_assistant_message("retry")])
    hooks: list[str] = []
    await run(
        faux,
        log,
        AgentTool(name="t", execute=execute),
        before_tool_call=lambda ctx, s: hooks.append("before"),
    )
    assert ran == [] and hooks == []
    assert result_texts(log) == [truncated_call_text("t"), truncated_call_text("t")]
    assert truncated_call_text("t") == (
        'Tool call "t" was not executed: the response hit the output token limit, so its '
        "arguments may be truncated. Re-issue the tool call with complete arguments."
    )
    assert log.entries[6:10] == [
        "tool_execution_start(a)",
        "tool_execution_end(a)",
        "message_start(toolResult)",
        "message_end(toolResult)",
    ]
    assert faux.call_count == 2


async def test_length_stop_without_tool_calls_ends_the_run(faux: FauxProvider, log: Log) -> None:
    faux.set_responses([faux_assistant_message([faux_text("cut")], stop_reason="length")])
    await run(faux, log)
    assert faux.call_count == 1
    assert log.types()[-1] == "agent_end"


async def test_progress_updates_are_emitted_and_late_ones_ignored(
    faux: FauxProvider, log: Log
) -> None:
    saved: list[Any] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update(AgentToolResult(content=[TextContent(text="10%")]))
        on_update(AgentToolResult(content=[TextContent(text="90%")]))
        saved.append(on_update)
        return AgentToolResult(content=[TextContent(text="done")])

    faux.set_responses([calls(("work", "a")), faux_assistant_message("ok")])
    await run(faux, log, AgentTool(name="work", execute=execute))
    saved[0](AgentToolResult(content=[TextContent(text="late")]))
    updates = log.of("tool_execution_update")
    assert [u.partial_result.content[0].text for u in updates] == ["10%", "90%"]
    kinds = log.types()
    assert kinds.index("tool_execution_update") > kinds.index("tool_execution_start")
    assert max(i for i, k in enumerate(kinds) if k == "tool_execution_update") < kinds.index(
        "tool_execution_end"
    )


async def test_prepare_arguments_runs_before_validation(faux: FauxProvider, log: Log) -> None:
    received: list[Any] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        received.append(params)
        return AgentToolResult()

    tool = AgentTool(
        name="num",
        parameters=NUMBER_SCHEMA,
        execute=execute,
        prepare_arguments=lambda raw: {"value": raw.get("v", raw.get("value"))},
    )
    faux.set_responses([calls(("num", "a"), args={"v": 3}), faux_assistant_message("ok")])
    await run(faux, log, tool)
    assert received == [{"value": 3}]


async def test_sync_tools_and_hooks_work_too(faux: FauxProvider, log: Log) -> None:
    def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(content=[TextContent(text="sync")])

    faux.set_responses([calls(("s", "a")), faux_assistant_message("ok")])
    await run(faux, log, AgentTool(name="s", execute=execute), after_tool_call=lambda c, s: None)
    assert result_texts(log) == ["sync"]


async def test_tool_hooks_see_the_context_up_to_the_assistant_message(
    faux: FauxProvider, log: Log
) -> None:
    seen: list[list[str]] = []

    def before(ctx: Any, signal: Any) -> None:
        seen.append([m.role for m in ctx.context.messages])

    faux.set_responses([calls(("t", "a"), ("t", "b")), faux_assistant_message("ok")])
    await run(faux, log, text_tool("t"), before_tool_call=before)
    assert seen == [["user", "assistant"], ["user", "assistant"]]


async def test_a_tool_that_ignores_an_abort_is_abandoned_after_the_grace(
    faux: FauxProvider, log: Log, monkeypatch: Any
) -> None:
    """Pi would wait for it forever; we cancel it after the grace and close the run's events."""
    import pi_notebook.agent.tool_batch as tool_batch
    from pi_notebook.ai import AbortController

    monkeypatch.setattr(tool_batch, "TOOL_ABORT_GRACE_SECONDS", 0.05)
    started = asyncio.Event()
    never = asyncio.Event()
    cancelled: list[bool] = []

    async def stubborn(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        started.set()
        try:
            await never.wait()  # ignores the signal
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return AgentToolResult(content=[TextContent(text="unreachable")])

    tool = AgentTool(
        name="stubborn", description="d", parameters={"type": "object"}, execute=stubborn
    )
    faux.set_responses([calls(("stubborn", "s1")), faux_assistant_message("never asked")])
    controller = AbortController()
    run_task = asyncio.ensure_future(
        run_agent_loop(
            [UserMessage(content="go")],
            make_context(tool),
            make_config(faux),
            log.emit,
            controller.signal,
        )
    )
    await asyncio.wait_for(started.wait(), 10)
    controller.abort()
    await asyncio.wait_for(run_task, 10)
    assert cancelled == [True]
    assert result_texts(log) == [
        tool_batch.TOOL_ABANDONED.format(grace=tool_batch.TOOL_ABORT_GRACE_SECONDS)
    ]
    (end,) = log.of("tool_execution_end")
    assert end.is_error
    assert log.types()[-2:] == ["turn_end", "agent_end"]
    assert faux.call_count == 1  # no request after the abort


async def test_tool_failure_keeps_its_details_other_exceptions_do_not(
    faux: FauxProvider, log: Log
) -> None:
    from pi_notebook.agent import ToolFailure

    async def fails_with_details(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        raise ToolFailure("half done", {"written": ["x"]})

    async def plain_raise(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        raise ValueError("boom")

    tools = [
        AgentTool(name=name, description="d", parameters={"type": "object"}, execute=fn)
        for name, fn in (("detailed", fails_with_details), ("plain", plain_raise))
    ]
    faux.set_responses([calls(("detailed", "d1"), ("plain", "p1")), faux_assistant_message("ok")])
    await run(faux, log, *tools)
    results = [e.message for e in log.of("message_end") if e.message.role == "toolResult"]
    assert [(m.is_error, m.content[0].text, m.details) for m in results] == [
        (True, "half done", {"written": ["x"]}),
        (True, "boom", {}),
    ]
