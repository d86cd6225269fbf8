"""Undo never loses the user's work: per-conversation records, writes attributed to the call
that made them, names the user changed since kept, and copies within one budget."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import numpy as np
import pandas as pd

from pi_notebook.agent import Agent
from pi_notebook.ai import FauxProvider, faux_assistant_message
from pi_notebook.tools import begin_run, notebook_tools, undo, workspace

from .conftest import run_agent, text_of, tool_turn


async def test_undo_keeps_what_the_user_changed_after_the_agents_run(faux: FauxProvider) -> None:
    ns: dict[str, Any] = {
        "x": 1,
        "items": [1],
        "gone": "old",
        "df": pd.DataFrame({"a": np.arange(100_000)}),
    }
    workspace(ns).begin_run()
    code = (
        "x = 2\nitems.append(2)\nmade = [1]\nsmall = {'a': 1}\ndel gone\n"
        "df['b'] = df.a * 2\nuntouched = 'agent'"
    )
    await run_agent(faux, notebook_tools(ns), [("run_python", {"code": code})])
    # The user goes on working with what the agent left.
    ns["made"] = "mine"  # rebound
    ns["small"]["b"] = 2  # changed in place (a small value: compared with a copy)
    ns["gone"] = "back"  # re-created after the agent deleted it
    ns["df"]["c"] = 0  # a new column on the agent's frame (its shape changed)
    report = undo(ns)
    assert report.restored == ["items", "x"] and report.removed == ["untouched"]
    assert report.kept == dict.fromkeys(
        ["made", "small", "gone", "df"], "changed since the agent's run"
    )
    assert ns["x"] == 1 and ns["items"] == [1] and "untouched" not in ns
    assert ns["made"] == "mine" and ns["small"] == {"a": 1, "b": 2} and ns["gone"] == "back"
    assert list(ns["df"].columns) == ["a", "b", "c"]
    assert "kept made: changed since the agent's run" in report.text().splitlines()


async def test_a_chat_only_run_keeps_the_record_of_the_run_before(faux: FauxProvider) -> None:
    ns: dict[str, Any] = {"x": 1}
    agent = Agent(model=faux.get_model(), tools=notebook_tools(ns))
    faux.set_responses(
        [
            tool_turn(("set_variable", {"name": "x", "expression": "2"})),
            faux_assistant_message("ok"),
        ]
    )
    end = begin_run(ns, agent)
    await agent.prompt("set it")
    end()
    faux.set_responses([faux_assistant_message("just chatting")])
    end = begin_run(ns, agent)
    await agent.prompt("thanks")  # no tool writes
    end()
    assert undo(ns, agent).restored == ["x"] and ns["x"] == 1
    assert undo(ns, agent).text() == (
        "nothing left to undo: the last run's changes were already undone"
    )
    end = begin_run(ns, agent)  # another chat-only run: still nothing left
    end()
    assert undo(ns, agent).nothing_left
    assert undo(ns, Agent()).text() == "nothing to undo: the last run changed no variables"


async def test_two_conversations_running_at_once_have_their_own_records(
    faux: FauxProvider,
) -> None:
    """Agent a's call waits while b's run writes: b's variable is not a's, in its diff or undo."""
    a_waits, b_done = threading.Event(), threading.Event()
    ns: dict[str, Any] = {"a_waits": a_waits, "b_done": b_done, "shared": 0}
    first = Agent(model=faux.get_model(), tools=notebook_tools(ns))
    second = Agent(model=faux.get_model(), tools=notebook_tools(ns))
    code_a = "a_var = 1\na_waits.set()\nassert b_done.wait(10)\nglobals()['a_dynamic'] = 2"
    faux.set_responses(
        [
            tool_turn(("run_python", {"code": code_a})),
            tool_turn(("run_python", {"code": "b_var = 2\nshared = 'b'"})),
            faux_assistant_message("b finished"),
            faux_assistant_message("a finished"),
        ]
    )

    async def run(agent: Agent, prompt: str) -> None:
        end = begin_run(ns, agent)
        try:
            await agent.prompt(prompt)
        finally:
            end()

    run_a = asyncio.ensure_future(run(first, "a"))
    assert await asyncio.to_thread(a_waits.wait, 10)
    await run(second, "b")
    b_done.set()
    await asyncio.wait_for(run_a, 10)
    (result_a,) = [m for m in first.state.messages if m.role == "toolResult"]
    (result_b,) = [m for m in second.state.messages if m.role == "toolResult"]
    # a's own names only: b's run was active meanwhile, so a's dynamic write is not claimed
    assert result_a.details["namespace_diff"] == {
        "created": ["a_var"],
        "changed": [],
        "deleted": [],
    }
    assert "b_var" not in text_of(result_a) and "shared" not in text_of(result_a)
    assert result_b.details["namespace_diff"] == {
        "created": ["b_var"],
        "changed": ["shared"],
        "deleted": [],
    }
    assert undo(ns, first).removed == ["a_var"]
    assert ns["b_var"] == 2 and ns["shared"] == "b"
    report = undo(ns, second)
    assert report.removed == ["b_var"] and report.restored == ["shared"] and ns["shared"] == 0


async def test_a_dynamic_write_with_no_one_else_about_is_the_calls(faux: FauxProvider) -> None:
    ns: dict[str, Any] = {}
    agent = Agent(model=faux.get_model(), tools=notebook_tools(ns))
    faux.set_responses(
        [
            tool_turn(("run_python", {"code": "globals()['made'] = 1"})),
            faux_assistant_message("ok"),
        ]
    )
    end = begin_run(ns, agent)
    await agent.prompt("go")
    end()
    (result,) = [m for m in agent.state.messages if m.role == "toolResult"]
    assert result.details["namespace_diff"]["created"] == ["made"]
    assert undo(ns, agent).removed == ["made"]


class Counted:
    """A value that counts how often it is deep-copied."""

    copies = 0

    def __init__(self, size: int) -> None:
        self.data = bytearray(size)
        self.shape = (size,)

    def __deepcopy__(self, memo: Any) -> Counted:
        Counted.copies += 1
        return Counted(len(self.data))

    def __len__(self) -> int:
        return len(self.data)

    def touch(self) -> None:
        self.data[0] = 1


async def test_names_the_code_only_reads_are_not_copied(faux: FauxProvider) -> None:
    ns: dict[str, Any] = {name: Counted(1000) for name in "abcdefg"}
    workspace(ns).begin_run()
    Counted.copies = 0
    read = (
        "print(a.shape, len(b), type(c).__name__)\n"
        "n = len(d) + e.shape[0]\n"
        "if f.shape: print(f'{g.shape}')\n"
        "a.shape == b.shape"
    )
    (result,) = await run_agent(faux, notebook_tools(ns), [("run_python", {"code": read})])
    assert not result.is_error and Counted.copies == 0
    (result,) = await run_agent(faux, notebook_tools(ns), [("run_python", {"code": "a.touch()"})])
    # One copy before the call (the undo value), one of what it left (small: checked at undo).
    assert Counted.copies == 2 and result.details["namespace_diff"]["changed"] == ["a"]


async def test_every_copy_counts_against_the_one_budget(faux: FauxProvider) -> None:
    ns: dict[str, Any] = {"a": Counted(40_000), "b": Counted(40_000), "c": Counted(40_000)}
    ws = workspace(ns)
    ws.journal.limit_bytes = 100_000
    ws.begin_run()
    Counted.copies = 0
    (result,) = await run_agent(
        faux, notebook_tools(ns), [("run_python", {"code": "a.touch()\nb.touch()\nc.touch()"})]
    )
    assert Counted.copies == 2  # the third does not fit what the first two left of the budget
    text = text_of(result)
    assert "not checked for in-place changes (no copy kept): c (too large to keep: 39.6 KB" in text
    assert result.details["namespace_diff"]["changed"] == ["a", "b"]
    # The copies not kept by the record went back to the budget after the call.
    Counted.copies = 0
    await run_agent(faux, notebook_tools(ns), [("run_python", {"code": "len(a)\nc.shape"})])
    assert Counted.copies == 0
    report = ws.undo()
    assert report.restored == ["a", "b"] and ns["a"].data[0] == 0
    assert report.not_restored["c"].startswith("it may have been changed in place")


async def test_a_new_runs_copy_may_take_the_room_of_the_previous_record(
    faux: FauxProvider,
) -> None:
    ns: dict[str, Any] = {"a": Counted(60_000), "b": Counted(60_000)}
    ws = workspace(ns)
    ws.journal.limit_bytes = 100_000
    ws.begin_run()
    await run_agent(faux, notebook_tools(ns), [("run_python", {"code": "a.touch()"})])
    ws.begin_run()  # the next run changes b in place: its copy replaces the old record's
    (result,) = await run_agent(faux, notebook_tools(ns), [("run_python", {"code": "b.touch()"})])
    assert result.details["namespace_diff"]["changed"] == ["b"]
    report = ws.undo()
    assert report.restored == ["b"] and ns["b"].data[0] == 0 and ns["a"].data[0] == 1
