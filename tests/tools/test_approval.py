"""Approvals: the before_tool_call hook asks an approver and waits; a denial is an error result."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from pi_notebook.agent import BeforeToolCallResult
from pi_notebook.ai import AbortSignal, FauxProvider
from pi_notebook.tools import (
    DENIED,
    ApprovalRequest,
    approval_hook,
    current_approver,
    notebook_tools,
    preferring_programmatic,
    set_approver,
    tool,
    workspace,
)
from pi_notebook.tools.approval import summarize

from .conftest import run_agent, text_of


class Recorder:
    """An approver answering from a script and remembering what it was asked."""

    def __init__(self, *answers: bool) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []
        self.signals: list[AbortSignal | None] = []

    async def __call__(self, request: ApprovalRequest, signal: AbortSignal | None) -> bool:
        self.requests.append(request)
        self.signals.append(signal)
        return self.answers.pop(0)


@pytest.fixture(autouse=True)
def no_global_approvers() -> Iterator[None]:
    yield
    set_approver(None)


def namespace() -> dict[str, Any]:
    ns: dict[str, Any] = {"x": 1}
    workspace(ns).begin_run()
    return ns


async def test_writes_mode_asks_before_writes_only_and_a_denial_is_an_error(
    faux: FauxProvider,
) -> None:
    ns = namespace()
    approver = Recorder(True, False)
    results = await run_agent(
        faux,
        notebook_tools(ns),
        [("list_variables", {})],
        [("set_variable", {"name": "x", "expression": "2"})],
        [("run_python", {"code": "x = 3\ny = 4"})],
        before_tool_call=approval_hook("writes", lambda: approver),
    )
    assert [q.tool_name for q in approver.requests] == ["set_variable", "run_python"]
    assert approver.requests[0].summary == "set_variable: x = 2"
    assert approver.requests[1].summary == "run_python: 2 lines of code (x = 3)"
    assert approver.requests[1].args == {"code": "x = 3\ny = 4"}
    assert all(isinstance(s, AbortSignal) for s in approver.signals)
    assert not results[0].is_error and not results[1].is_error
    assert results[2].is_error and text_of(results[2]) == DENIED == "denied by user"
    assert ns["x"] == 2 and "y" not in ns


async def test_all_mode_asks_before_every_tool(faux: FauxProvider) -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    approver = Recorder(False)
    (result,) = await run_agent(
        faux, [ping], [("ping", {})], before_tool_call=approval_hook("all", lambda: approver)
    )
    assert [q.summary for q in approver.requests] == ["ping()"]
    assert result.is_error and text_of(result) == "denied by user"


async def test_without_an_approver_a_write_is_refused_with_the_reason(faux: FauxProvider) -> None:
    ns = namespace()
    (result,) = await run_agent(
        faux,
        notebook_tools(ns),
        [("run_python", {"code": "x = 5"})],
        before_tool_call=approval_hook("writes"),
    )
    assert result.is_error and ns["x"] == 1
    assert text_of(result).startswith(
        "approval required (--approve writes) but no approver is available: there is no live "
        "panel (plain mode) and none was set with pi_notebook.tools.set_approver()"
    )


async def test_the_loop_waits_for_the_answer(faux: FauxProvider) -> None:
    ns = namespace()
    asked = asyncio.Event()
    answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    async def approver(request: ApprovalRequest, signal: AbortSignal | None) -> bool:
        asked.set()
        return await answer

    run = asyncio.ensure_future(
        run_agent(
            faux,
            notebook_tools(ns),
            [("set_variable", {"name": "x", "expression": "9"})],
            before_tool_call=approval_hook("writes", lambda: approver),
        )
    )
    await asyncio.wait_for(asked.wait(), 5)
    assert ns["x"] == 1 and not run.done()  # nothing ran while the question is open
    answer.set_result(True)
    (result,) = await asyncio.wait_for(run, 5)
    assert not result.is_error and ns["x"] == 9


async def test_a_previous_hook_that_blocks_wins_without_asking(faux: FauxProvider) -> None:
    ns = namespace()
    approver = Recorder(True)

    def previous(context: Any, signal: Any) -> BeforeToolCallResult:
        return BeforeToolCallResult(block=True, reason="policy says no")

    (result,) = await run_agent(
        faux,
        notebook_tools(ns),
        [("run_python", {"code": "x = 5"})],
        before_tool_call=approval_hook("writes", lambda: approver, previous),
    )
    assert text_of(result) == "policy says no" and approver.requests == []


def test_programmatic_approver_wins_over_the_panel() -> None:
    panel, mine = Recorder(), Recorder()
    assert current_approver() is None
    get = preferring_programmatic(panel)
    assert get() is panel
    set_approver(mine)
    assert current_approver() is mine and get() is mine
    set_approver(None)
    assert get() is panel


def test_unknown_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="approval mode must be one of"):
        approval_hook("some")  # type: ignore[arg-type]


def test_summaries_are_one_line() -> None:
    assert summarize("run_python", {"code": "print(1)"}) == "run_python: 1 line of code (print(1))"
    long = summarize("lookup", {"query": "q" * 100, "n": 3})
    assert long.startswith("lookup(query='qqq") and long.endswith("..., n=3)")
    assert "\n" not in summarize("run_python", {"code": "a\nb\nc"})


async def test_writes_namespace_is_a_tool_field_that_approvals_read(faux: FauxProvider) -> None:
    """A hand-made AgentTool marked ``writes_namespace`` is asked about, as @tool ones are."""
    from pi_notebook.agent import AgentTool, AgentToolResult

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult()

    writer = AgentTool(name="writer", execute=execute, writes_namespace=True)
    reader = AgentTool(name="reader", execute=execute)

    @tool(writes_namespace=True)
    def marked() -> str:
        """Marked."""
        return "ok"

    assert writer.writes_namespace and not reader.writes_namespace and marked.writes_namespace
    assert all(
        t.writes_namespace for t in notebook_tools({}) if t.name in ("run_python", "set_variable")
    )
    approver = Recorder(False, False)
    results = await run_agent(
        faux,
        [writer, reader, marked],
        [("writer", {})],
        [("reader", {})],
        [("marked", {})],
        before_tool_call=approval_hook("writes", lambda: approver),
    )
    assert [q.tool_name for q in approver.requests] == ["writer", "marked"]
    assert [r.is_error for r in results] == [True, False, True]
