"""Step mode: the awaited sink (and the request tap) hold the agent's loop until "next"."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.agent.events import AGENT_EVENT_TYPES
from pi_notebook.ai import TextContent, faux_assistant_message, faux_tool_call
from pi_notebook.notebook.context_view import RequestTap
from pi_notebook.notebook.stepping import LIFECYCLE_EVENTS, MODEL_REQUEST

from .helpers import CapturePanel, faux


def expanded(events: list[dict[str, object]]) -> list[object]:
    """Event types, one per event (a message's updates share one counting record)."""
    return [e["type"] for e in events for _ in range(int(str(e.get("count", 1))))]


def held(type_: str | None = None):  # type: ignore[no-untyped-def]
    def predicate(panel: CapturePanel) -> bool:
        return panel.step_held is not None and (type_ is None or panel.step_held == type_)

    return predicate


def adder(name: str = "add", gate: asyncio.Event | None = None) -> AgentTool:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        on_update(AgentToolResult(content=[TextContent(text="adding")]))
        if gate is not None:
            await gate.wait()
        return AgentToolResult(content=[TextContent(text=str(params["a"] + params["b"]))])

    schema = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}
    return AgentTool(name=name, description="Add.", parameters=schema, execute=execute)


def two_turns_with_a_tool():  # type: ignore[no-untyped-def]
    call = faux_tool_call("add", {"a": 2, "b": 3}, id="t1")
    return faux(
        [faux_assistant_message([call], stop_reason="toolUse"), faux_assistant_message("5.")]
    )


def stepping(step: bool | str, provider: Any, tools: list[AgentTool] = ()) -> Any:  # type: ignore[assignment]
    panel = CapturePanel(step=step)
    tap = RequestTap(before=panel.before_request)  # the request hook the magic gives a run
    agent = Agent(model=provider.get_model(), tools=list(tools), on_request=tap)
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    return agent, panel


async def walk(agent: Agent, panel: CapturePanel, prompt: str = "Hi") -> list[tuple[str, str, str]]:
    """Click Next at every hold; (point, what is held, what comes next) per hold, in order."""
    task = asyncio.ensure_future(agent.prompt(prompt))
    seen: list[tuple[str, str, str]] = []
    while not task.done():
        waiter = asyncio.ensure_future(panel.wait_for(held()))
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED, timeout=10)
        if task.done():
            waiter.cancel()
            break
        step = panel.snapshot["step"]
        seen.append((step["held"], step["what"], step["next"]))
        panel.handle_message({"type": "next"})
        await panel.wait_for(lambda p: p.step_held is None or task.done())
    await task
    return seen


async def test_the_loop_waits_exactly_at_the_held_event() -> None:
    provider = faux([faux_assistant_message("Hello.")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel(step="all")
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    task = asyncio.ensure_future(agent.prompt("Hi"))
    seen: list[str] = []
    while not task.done():
        waiter = asyncio.ensure_future(panel.wait_for(held()))
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED, timeout=10)
        if task.done():
            waiter.cancel()
            break
        kind = panel.step_held
        assert kind is not None
        seen.append(kind)
        # Parked: the transcript and the panel's events stop exactly at this event.
        before = (len(agent.state.messages), sum(panel.counts.values()))
        for _ in range(20):
            await asyncio.sleep(0)  # let every other ready callback run
        assert (len(agent.state.messages), sum(panel.counts.values())) == before
        assert panel.events[-1]["type"] == kind
        assert panel.snapshot["step"]["held"] == kind
        panel._on_custom_msg(panel, {"type": "next"}, [])
        await panel.wait_for(lambda p, k=kind: p.step_held != k or task.done())
    await task
    assert seen == expanded(panel.events)
    assert seen[0] == "agent_start" and seen[-1] == "agent_end"
    assert panel.snapshot["step"]["count"] == len(seen)


async def test_default_granularity_holds_once_per_lifecycle_event_never_per_chunk() -> None:
    agent, panel = stepping(True, two_turns_with_a_tool(), [adder()])
    seen = await walk(agent, panel)
    points = [point for point, _, _ in seen]
    assert points == [
        "agent_start",
        "turn_start",
        "message_start",  # the prompt
        "message_end",
        "message_start",  # the reply that calls the tool
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "message_start",  # the tool result
        "message_end",
        "turn_end",
        "turn_start",
        "message_start",  # the answer
        "message_end",
        "turn_end",
        "agent_end",
    ]
    everything = expanded(panel.events)
    assert "message_update" in everything and "tool_execution_update" in everything
    assert points == [e for e in everything if e in LIFECYCLE_EVENTS]
    words = dict(zip(points, seen, strict=False))
    assert words["tool_execution_end"][1:] == (
        "held after tool `add` finished",
        "the tool results enter the conversation",
    )
    assert seen[-1][1:] == ("held at the end of the run", "the run is over and the cell finishes")


async def test_tools_granularity_holds_before_each_tool_and_each_model_request() -> None:
    agent, panel = stepping("tools", two_turns_with_a_tool(), [adder()])
    seen = await walk(agent, panel)
    assert seen == [
        (
            MODEL_REQUEST,
            "held before the model request of turn 1",
            "the request goes to faux/faux-1: 1 message, 1 tool, ≈ 36 tokens",
        ),
        (
            "tool_execution_start",
            "held before tool `add` runs (prepared, not running yet)",
            "`add` is prepared and runs",
        ),
        (
            MODEL_REQUEST,
            "held before the model request of turn 2",
            "the request goes to faux/faux-1: 3 messages, 1 tool, ≈ 43 tokens",
        ),
    ]


async def test_all_granularity_also_holds_every_chunk_and_update_and_each_request() -> None:
    agent, panel = stepping("all", two_turns_with_a_tool(), [adder()])
    points = [point for point, _, _ in await walk(agent, panel)]
    everything = expanded(panel.events)
    assert [p for p in points if p != MODEL_REQUEST] == everything
    assert points.count(MODEL_REQUEST) == 2
    # the request is held after the prompt (or the tool result) is in, before the reply starts
    for index, point in enumerate(points):
        if point == MODEL_REQUEST:
            assert points[index + 1] == "message_start"


async def test_held_before_a_request_the_panel_shows_what_the_model_is_sent() -> None:
    provider = two_turns_with_a_tool()
    agent, panel = stepping("tools", provider, [adder()])
    agent.state.system_prompt = "Be terse."
    task = asyncio.ensure_future(agent.prompt("What is 2 + 3?"))
    await panel.wait_for(held(MODEL_REQUEST))
    assert panel.snapshot["context"]["changes"] is None  # the run's first request: all new
    panel.handle_message({"type": "next"})
    await panel.wait_for(held("tool_execution_start"))
    panel.handle_message({"type": "next"})
    await panel.wait_for(held(MODEL_REQUEST))
    context = panel.snapshot["context"]
    assert provider.call_count == 1  # held before it: the model has not been asked yet
    assert context["held"] is True and context["turn"] == 2
    assert context["system"]["text"] == "Be terse."
    assert [(m["label"], m["text"]) for m in context["messages"]] == [
        ("user", "What is 2 + 3?"),
        ("assistant", '→ add({"a": 2, "b": 3})'),
        ("toolResult add", "5"),
    ]
    assert [t["name"] for t in context["tools"]] == ["add"]
    assert context["json"] is None
    # What changed since turn 1's request comes with it (context_diff.changes_view).
    changes = context["changes"]
    assert changes["since"] == 1 and changes["unchanged"] == 1 and changes["removed"] == []
    assert [(c["n"], c["why"]) for c in changes["added"]] == [
        (2, "the model's reply to turn 1's request"),
        (3, "a tool result"),
    ]
    panel.handle_message({"type": "context_json"})  # the raw JSON, on demand
    raw = panel.snapshot["context"]["json"]
    assert '"systemPrompt": "Be terse."' in raw and '"toolCallId": "t1"' in raw
    panel.handle_message({"type": "run_to_end"})
    await asyncio.wait_for(task, 5)
    sent = provider.requests[1].context
    assert [m.role for m in sent.messages] == ["user", "assistant", "toolResult"]
    assert panel.snapshot["context"]["held"] is False


async def test_holds_of_parallel_tools_never_overlap_and_each_next_releases_one() -> None:
    both = [
        faux_tool_call("add", {"a": 1, "b": 1}, id="a"),
        faux_tool_call("add2", {"a": 2, "b": 2}, id="b"),
    ]
    provider = faux(
        [faux_assistant_message(both, stop_reason="toolUse"), faux_assistant_message("ok")]
    )
    agent, panel = stepping(True, provider, [adder("add"), adder("add2")])
    seen = await walk(agent, panel)
    ends = [what for point, what, _ in seen if point == "tool_execution_end"]
    assert sorted(ends) == ["held after tool `add2` finished", "held after tool `add` finished"]
    assert panel.snapshot["step"]["count"] == len(seen)
    assert len(seen) == 16 + 2 + 2  # a second tool start / end and its result message


async def test_abort_while_held_releases_the_gate_and_ends_aborted() -> None:
    provider = faux([faux_assistant_message("never finished " * 20)], tps=1000)
    agent = Agent(model=provider.get_model())
    panel = CapturePanel(step=True, step_events=("message_update",))
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    task = asyncio.ensure_future(agent.prompt("Hi"))
    await panel.wait_for(held("message_update"))
    panel.handle_message({"type": "abort"})
    await asyncio.wait_for(task, 5)
    panel.finish()
    assert panel.snapshot["status"]["state"] == "aborted"
    assert agent.state.messages[-1].stop_reason == "aborted"  # type: ignore[union-attr]


async def test_held_at_agent_end_the_bar_stays_and_abort_releases_it() -> None:
    provider = faux([faux_assistant_message("Done.")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel(step=True, step_events=("agent_end",))
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    task = asyncio.ensure_future(agent.prompt("Hi"))
    await panel.wait_for(held("agent_end"))
    step = panel.snapshot["step"]
    # The state is already final, yet the loop is held: the held point is still published.
    assert panel.snapshot["status"]["state"] == "done"
    assert step["held"] == "agent_end" and step["what"] == "held at the end of the run"
    assert agent.is_running and not task.done()
    panel.handle_message({"type": "abort"})
    await asyncio.wait_for(task, 5)
    assert panel.snapshot["step"]["held"] is None


async def test_run_to_end_stops_holding() -> None:
    provider = faux([faux_assistant_message("a b c d")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel(step="all")
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    task = asyncio.ensure_future(agent.prompt("Hi"))
    await panel.wait_for(held("agent_start"))
    panel.handle_message({"type": "run_to_end"})
    await asyncio.wait_for(task, 5)
    assert [e["type"] for e in panel.events][-1] == "agent_end"
    assert panel.snapshot["step"]["count"] == 1
    assert set(AGENT_EVENT_TYPES) >= {e["type"] for e in panel.events}


async def test_without_a_view_step_mode_turns_itself_off_instead_of_hanging() -> None:
    provider = faux([faux_assistant_message("Nobody is watching.")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel(step=True)
    panel._step.view_timeout = 0.01  # no front end will ever say hello here
    panel.attach(agent)
    await asyncio.wait_for(agent.prompt("Hi"), 5)
    snapshot = panel.snapshot
    assert snapshot["step"]["enabled"] is False and snapshot["step"]["count"] == 0
    assert "step mode off" in snapshot["status"]["note"]


async def test_the_tree_reports_held_time_apart_from_durations() -> None:
    now = [0.0]
    provider = faux([faux_assistant_message("Hi.")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel(step=True, step_events=("message_start",))
    panel._state.clock._clock = lambda: now[0]
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    task = asyncio.ensure_future(agent.prompt("Hi"))
    for _ in range(2):  # the prompt, then the reply: each held 5 s on the test's clock
        count = panel.snapshot["step"]["count"]
        await panel.wait_for(lambda p, c=count: p.snapshot["step"]["count"] > c)
        now[0] += 5000.0
        panel.handle_message({"type": "next"})
    await asyncio.wait_for(task, 5)
    nodes = {(n["kind"], n["detail"]): n for n in panel.snapshot["lifecycle"]}
    for key in (("message", "user"), ("message", "assistant")):
        node = nodes[key]
        assert node["held"] == 5000.0
        assert node["end"] - node["start"] - node["held"] == 0.0
    assert nodes[("run", "")]["held"] == 10000.0
    assert nodes[("message", "assistant")]["target"] == {"message": 1}


async def test_a_tool_cards_duration_leaves_the_held_time_out() -> None:
    now = [0.0]
    agent, panel = stepping(True, two_turns_with_a_tool(), [adder()])
    panel._state.clock._clock = lambda: now[0]
    panel._step.points = frozenset(("tool_execution_start",))
    task = asyncio.ensure_future(agent.prompt("Hi"))
    await panel.wait_for(held("tool_execution_start"))
    now[0] += 7000.0  # the class looks at the held tool for 7 s
    panel.handle_message({"type": "next"})
    await asyncio.wait_for(task, 5)
    card = panel.snapshot["tools"]["t1"]
    assert card["duration_ms"] == 0.0
    tool_node = next(n for n in panel.snapshot["lifecycle"] if n["kind"] == "tool")
    assert tool_node["held"] == 7000.0
