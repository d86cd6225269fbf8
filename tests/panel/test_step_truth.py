"""Step mode tells the truth at every hold (issue 29.1) and the run's timeline (29.2): real
agent runs (faux provider) through the panel, held and released as a class would."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import TextContent, faux_assistant_message, faux_tool_call
from pi_notebook.notebook.call_labels import call_labels
from pi_notebook.notebook.context_view import RequestTap
from pi_notebook.notebook.panel.reducer import NO_REQUEST
from pi_notebook.notebook.panel.static import render_static_html
from pi_notebook.notebook.panel.timeline import as_timeline
from pi_notebook.notebook.panel.timeline_render import timeline_rows, timeline_svg

from .helpers import CapturePanel, faux
from .test_step import held, stepping

STATIONS = ("north", "south", "east")


def stations(started: list[str] | None = None, together: asyncio.Event | None = None) -> AgentTool:
    """``read_station``: with ``together``, each call waits until all three are running."""

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        if started is not None:
            started.append(params["station"])
            if together is not None:
                if len(started) == len(STATIONS):
                    together.set()
                await asyncio.wait_for(together.wait(), 5)
        return AgentToolResult(content=[TextContent(text=f"{params['station']}: 12 C")])

    schema = {"type": "object", "properties": {"station": {"type": "string"}}}
    return AgentTool(name="read_station", description="Read.", parameters=schema, execute=execute)


def three_stations() -> Any:
    calls = [
        faux_tool_call("read_station", {"station": s}, id=f"c{n}") for n, s in enumerate(STATIONS)
    ]
    return faux(
        [faux_assistant_message(calls, stop_reason="toolUse"), faux_assistant_message("ok")]
    )


async def next_hold(panel: CapturePanel, task: asyncio.Future[Any]) -> bool:
    """Wait for the next hold (False when the run finished instead)."""
    waiter = asyncio.ensure_future(panel.wait_for(held()))
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED, timeout=10)
    if not waiter.done():
        waiter.cancel()
        return False
    return True


async def release(panel: CapturePanel, task: asyncio.Future[Any]) -> None:
    count = panel.snapshot["step"]["count"]
    panel.handle_message({"type": "next"})
    await panel.wait_for(
        lambda p: task.done() or p.step_held is None or p.snapshot["step"]["count"] > count
    )


def test_same_named_calls_are_labelled_by_their_distinguishing_argument_or_ordinal() -> None:
    calls = [("a", "read", {"s": "north", "x": 1}), ("b", "read", {"s": "south", "x": 1})]
    assert call_labels(calls) == {"a": "read (north)", "b": "read (south)"}
    same = [("a", "read", {"s": "n"}), ("b", "read", {"s": "n"}), ("c", "add", {})]
    assert call_labels(same) == {"a": "read #1", "b": "read #2", "c": "add"}


async def test_held_before_a_parallel_batch_runs_the_cards_are_prepared_not_running() -> None:
    started: list[str] = []
    agent, panel = stepping("tools", three_stations(), [stations(started)])
    task = asyncio.ensure_future(agent.prompt("Temperatures?"))
    seen: list[dict[str, Any]] = []
    while await next_hold(panel, task):
        snapshot = panel.snapshot
        seen.append(snapshot)
        status = snapshot["status"]
        assert "held" in status and status["held"] == snapshot["step"]["what"]
        if snapshot["step"]["held"] == "tool_execution_start":
            assert started == [], "nothing runs while the batch is being prepared"
            statuses = {c["label"]: c["status"] for c in snapshot["tools"].values()}
            assert "running" not in statuses.values()
        await release(panel, task)
    await task
    tool_holds = [s["step"] for s in seen if s["step"]["held"] == "tool_execution_start"]
    assert [h["next"] for h in tool_holds] == [
        "`read_station (north)` is prepared; the batch runs when all 3 are prepared",
        "`read_station (south)` is prepared; the batch runs when all 3 are prepared",
        "`read_station (east)` is prepared, then all 3 calls run together: "
        "`read_station (north)`, `read_station (south)`, `read_station (east)`",
    ]
    assert "call 2 of 3; prepared, not running yet" in tool_holds[1]["what"]
    second = next(
        s
        for s in seen
        if s["step"]["held"] == "tool_execution_start"
        and len(s["tools"]) == 3
        and s["tools"]["c1"]["status"] == "prepared"
    )
    assert second["tools"]["c0"]["status"] == "prepared"
    final = panel.snapshot
    assert [c["label"] for c in final["tools"].values()] == [
        f"read_station ({s})" for s in STATIONS
    ]
    assert all(c["status"] == "done" for c in final["tools"].values())
    details = [n["detail"] for n in final["lifecycle"] if n["kind"] == "tool"]
    assert details == [f"read_station ({s})" for s in STATIONS]
    assert final["status"]["held"] is None


async def test_the_status_clock_never_runs_backwards_and_leaves_holds_out() -> None:
    now = [0.0]
    provider = faux(
        [
            faux_assistant_message(
                [faux_tool_call("read_station", {"station": "north"}, id="c0")],
                stop_reason="toolUse",
            ),
            faux_assistant_message("ok"),
        ]
    )
    agent, panel = stepping(True, provider, [stations()])
    panel._state.clock._clock = lambda: now[0]
    task = asyncio.ensure_future(agent.prompt("Hi"))
    shown: list[float] = []
    holds = 0
    while await next_hold(panel, task):
        holds += 1
        shown.append(panel.snapshot["status"]["elapsed_ms"])
        now[0] += 10_000.0  # the class looks at each hold for 10 s
        await release(panel, task)
        now[0] += 100.0  # the run's own time between holds
        shown.append(panel.snapshot["status"]["elapsed_ms"])
    await task
    status = panel.snapshot["status"]
    shown.append(status["elapsed_ms"])
    assert shown == sorted(shown), f"the clock ran backwards: {shown}"
    assert status["held_ms"] >= holds * 10_000.0, "every hold's time is kept apart"
    assert status["elapsed_ms"] <= holds * 100.0, "held time is not the run's time"


async def test_a_delivered_steer_is_marked_with_where_it_entered() -> None:
    provider = faux(
        [
            faux_assistant_message(
                [faux_tool_call("read_station", {"station": "north"}, id="c0")],
                stop_reason="toolUse",
            ),
            faux_assistant_message("noted"),
        ]
    )
    agent, panel = stepping("tools", provider, [stations()])
    task = asyncio.ensure_future(agent.prompt("Hi"))
    while await next_hold(panel, task):
        if panel.snapshot["step"]["held"] == "tool_execution_start":
            panel.handle_message({"type": "steer", "text": "Also in Fahrenheit."})
        await release(panel, task)
    await task
    snapshot = panel.snapshot
    steer = [m for m in snapshot["messages"] if m["role"] == "user"][1]
    assert steer["queued"] == "steer" and steer["entered"] == "after turn 1's tools"
    node = next(n for n in snapshot["lifecycle"] if n.get("target") == {"message": 3})
    assert node["detail"] == "steer, after turn 1's tools"
    html = render_static_html(snapshot)
    assert (
        "user (steer, after turn 1&#x27;s tools)" in html
        or "user (steer, after turn 1's tools)" in html
    )
    lanes = [lane["id"] for lane in snapshot["timeline"]["lanes"]]
    assert "steer" in lanes
    queued = [s for s in snapshot["timeline"]["spans"] if s["lane"] == "steer"]
    assert len(queued) == 1 and queued[0]["outcome"] == "delivered"


async def test_aborted_at_the_first_hold_the_transcript_says_no_request_was_made() -> None:
    provider = faux([faux_assistant_message("never")])
    agent, panel = stepping(True, provider)
    task = asyncio.ensure_future(agent.prompt("Hi"))
    await panel.wait_for(held("agent_start"))
    panel.handle_message({"type": "abort"})
    await asyncio.wait_for(task, 5)
    panel.finish()
    reply = panel.snapshot["messages"][-1]
    assert reply["role"] == "assistant" and reply["error"] is None and reply["note"] == NO_REQUEST
    html = render_static_html(panel.snapshot)
    assert "Request was aborted" not in html and "no request was made" in html
    plain = panel.static_bundle()["text/plain"]
    assert "Request was aborted" not in plain and f"[{NO_REQUEST}]" in plain


async def test_a_tool_aborted_before_it_ran_reads_not_run_aborted() -> None:
    agent, panel = stepping("tools", three_stations(), [stations()])
    task = asyncio.ensure_future(agent.prompt("Hi"))
    while await next_hold(panel, task):
        if panel.snapshot["step"]["held"] == "tool_execution_start":
            break
        await release(panel, task)
    await release(panel, task)  # north is announced; south is held next
    await panel.wait_for(held("tool_execution_start"))
    panel.handle_message({"type": "abort"})
    await asyncio.wait_for(task, 5)
    panel.finish()
    cards = panel.snapshot["tools"]
    assert [cards[c]["status"] for c in ("c0", "c1", "c2")] == ["aborted"] * 3
    html = render_static_html(panel.snapshot)
    assert "not run (aborted)" in html and "malformed" not in html


async def test_step_all_shows_the_chunk_it_is_held_at() -> None:
    provider = faux([faux_assistant_message("Hello there.")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel(step=True, step_events=("message_update",))
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    task = asyncio.ensure_future(agent.prompt("Hi"))
    chunks: list[str] = []
    while await next_hold(panel, task):
        chunks.append(panel.snapshot["step"]["what"])
        await release(panel, task)
    await task
    quoted = [re.search(r"\(text_delta\): “(.*)”$", what) for what in chunks]
    assert "".join(m.group(1) for m in quoted if m) == "Hello there."


async def test_the_timeline_shows_a_parallel_batch_overlapping_and_names_every_call() -> None:
    started: list[str] = []
    panel = CapturePanel()
    tap = RequestTap(before=panel.before_request)
    tools = [stations(started, asyncio.Event())]
    agent = Agent(model=three_stations().get_model(), tools=tools, on_request=tap)
    panel.attach(agent)
    await asyncio.wait_for(agent.prompt("Temperatures?"), 10)
    panel.finish()
    timeline = as_timeline(panel.snapshot["timeline"])
    running = {
        s["label"]: (s["start"], s["end"]) for s in timeline["spans"] if s["kind"] == "running"
    }
    assert sorted(running) == sorted(f"read_station ({s})" for s in STATIONS)
    latest_start = max(start for start, _ in running.values())
    earliest_end = min(end for _, end in running.values() if end is not None)
    assert latest_start <= earliest_end, "the batch's calls overlap in time"
    assert [s["label"] for s in timeline["spans"] if s["lane"] == "model"][::2] == [
        "request 1 (turn 1)",
        "request 2 (turn 2)",
    ]
    svg = timeline_svg(timeline)
    for station in STATIONS:
        assert f">read_station ({station})<" in svg
    assert "request 1 (turn 1)" in svg and "<script" not in svg and "style=" not in svg
    rows = timeline_rows(timeline)
    assert rows.count("read_station (north)") >= 2 and "── turn 2 starts" in rows
