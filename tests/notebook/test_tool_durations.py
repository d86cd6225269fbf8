"""Recorded tool durations (issue 29.1.4): the clock that times each call from when its
execution begins, the ``durationMs`` of the ``tool`` lines a recording gets, the replay plan
reading them (an older recording without them still reads), and a replayed panel's cards and
timeline showing them instead of the stand-in's near-zero time. Real Agent runs on a faux
model; a scripted clock, so no test waits on the wall clock."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pi_notebook.agent import (
    Agent,
    AgentTool,
    AgentToolResult,
    MessageEndEvent,
    ToolExecutionStartEvent,
)
from pi_notebook.ai import (
    TextContent,
    faux_assistant_message,
    faux_tool_call,
    register_faux_provider,
)
from pi_notebook.ai.replay import record
from pi_notebook.notebook.replay_run import ReplayDriver, ToolRecorder, plan_replay
from pi_notebook.notebook.tool_clock import ToolClock

from ..panel.helpers import CapturePanel


class Ticks:
    """A clock that reads 0, 1, 2, ... seconds, one tick a reading."""

    def __init__(self) -> None:
        self.reading = -1.0

    def __call__(self) -> float:
        self.reading += 1
        return self.reading


def _agent(mode: str = "parallel", tools: list[Any] = ()) -> Any:  # type: ignore[assignment]
    return SimpleNamespace(tool_execution=mode, state=SimpleNamespace(tools=list(tools)))


def _batch(*ids: str) -> MessageEndEvent:
    calls = [faux_tool_call("look", {}, id=i) for i in ids]
    return MessageEndEvent(faux_assistant_message(calls, stop_reason="toolUse"))


def test_a_parallel_batch_runs_from_its_last_prepared_call() -> None:
    clock = ToolClock(_agent(), now=Ticks())
    clock(_batch("a", "b"))
    clock(ToolExecutionStartEvent("a", "look", {}))  # 0 s: prepared, not running
    clock(ToolExecutionStartEvent("b", "look", {}))  # 1 s: the batch runs
    assert clock.duration_ms("b") == 1000.0  # ends at 2 s
    assert clock.duration_ms("a") == 2000.0  # ends at 3 s: not counted from 0 s
    assert clock.duration_ms("never") is None


def test_a_sequential_call_runs_from_its_own_start() -> None:
    clock = ToolClock(_agent("sequential"), now=Ticks())
    clock(_batch("a", "b"))
    clock(ToolExecutionStartEvent("a", "look", {}))  # 0 s
    assert clock.duration_ms("a") == 1000.0  # 1 s
    clock(ToolExecutionStartEvent("b", "look", {}))  # 2 s
    assert clock.duration_ms("b") == 1000.0  # 3 s
    one = SimpleNamespace(name="look", execution_mode="sequential")  # a tool that asks for it
    clock = ToolClock(_agent("parallel", [one]), now=Ticks())
    clock(_batch("c", "d"))
    clock(ToolExecutionStartEvent("c", "look", {}))
    assert clock.duration_ms("c") == 1000.0


def _recorded_run(path: Path) -> dict[str, float]:
    """A parallel batch of two on a record() model, the ToolRecorder on a scripted clock;
    returns the durationMs of each tool line."""
    faux = register_faux_provider(token_size=(1, 1))
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("look", {}, id="a"), faux_tool_call("look", {}, id="b")],
                stop_reason="toolUse",
            ),
            faux_assistant_message("done"),
        ]
    )

    async def look(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(content=[TextContent(text=f"looked {tool_call_id}")])

    tool = AgentTool(name="look", description="Look.", parameters={"type": "object"}, execute=look)
    agent = Agent(model=record(faux.get_model(), str(path)), tools=[tool])
    recorder = ToolRecorder(agent, path, ToolClock(agent, now=Ticks()))
    agent.subscribe(recorder)
    asyncio.run(agent.prompt("Look twice."))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return {line["toolCallId"]: line["durationMs"] for line in lines if line["kind"] == "tool"}


def test_the_recording_keeps_each_calls_duration_and_the_replay_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    durations = _recorded_run(path)
    assert set(durations) == {"a", "b"} and all(d >= 1000.0 for d in durations.values())
    assert plan_replay(path).durations == durations
    # An older recording (no durationMs) still replays: no durations, nothing else lost.
    old = tmp_path / "old.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        line.pop("durationMs", None)
    old.write_text("".join(json.dumps(line) + "\n" for line in lines))
    plan = plan_replay(old)
    assert (
        plan.durations == {} and plan.results["a"].content == plan_replay(path).results["a"].content
    )
    # The lesson's recording has them: its stations took scripted times (south < east < north).
    lesson = Path(__file__).parents[2] / "notebooks" / "02_loop_lifecycle.run.jsonl"
    timed = plan_replay(lesson).durations
    assert set(timed) == {"read_north", "read_south", "read_east", "record_1"}
    assert timed["read_south"] < timed["read_east"] < timed["read_north"]


def test_a_replayed_panel_shows_the_recorded_durations(tmp_path: Path) -> None:
    """The replay's stand-ins take no time; its cards and timeline say what the calls took."""
    path = tmp_path / "run.jsonl"
    durations = _recorded_run(path)
    plan = plan_replay(path)
    driver = ReplayDriver(plan)
    agent = Agent(
        model=plan.model, tools=plan.tools, messages=plan.history, **driver.agent_options()
    )
    driver.install(agent)
    panel = CapturePanel()
    panel.attach(agent)
    panel.replay_durations(plan.durations)
    agent.subscribe(driver)
    asyncio.run(agent.prompt(plan.prompts))
    tools = panel.snapshot["tools"]
    assert {k: tools[k]["duration_ms"] for k in ("a", "b")} == durations
    spans = [s for s in panel.snapshot["timeline"]["spans"] if s["kind"] == "running"]
    assert sorted(s["outcome"] for s in spans) == sorted(
        f"ran {d / 1000:.2f}s when recorded" for d in durations.values()
    )
