"""Teaching the loop in a real kernel: step granularity, what the model is sent, replay.

The granularity tests run ``%%agent --step ...`` with the panel (``ui_kernel``) and play its
front end (:class:`~.test_panel_kernel.PanelClient`), clicking *Next* at every hold: the
window between holds is the loop's own, so nothing sleeps. The context and replay tests run in
plain mode (``kernel``), as a notebook under nbval does.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from .conftest import Kernel
from .test_panel_kernel import PanelClient, run_cell

TOOLS = """
import json
from pi_notebook.agent import AgentTool, AgentToolResult
from pi_notebook.ai import TextContent, faux_assistant_message, faux_tool_call
from pi_notebook.ai import register_faux_provider
import pi_notebook.notebook as pn

async def _add(tool_call_id, params, signal, on_update):
    on_update(AgentToolResult(content=[TextContent(text="adding")]))
    return AgentToolResult(content=[TextContent(text=str(params["a"] + params["b"]))])

ADD = AgentTool(
    name="add",
    description="Add two numbers.",
    parameters={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
    execute=_add,
)
"""

TWO_TURNS = """
{name} = register_faux_provider(token_size=(1, 1))
{name}.set_responses([
    faux_assistant_message([faux_tool_call("add", {{"a": 2, "b": 3}}, id="t1")],
                           stop_reason="toolUse"),
    faux_assistant_message("2 + 3 = 5"),
])
pn.use_model({name})
%agent reset
"""

LIFECYCLE = [
    "agent_start",
    "turn_start",
    "message_start",
    "message_end",
    "message_start",
    "message_end",
    "tool_execution_start",
    "tool_execution_end",
    "message_start",
    "message_end",
    "turn_end",
    "turn_start",
    "message_start",
    "message_end",
    "turn_end",
    "agent_end",
]


def walk(kernel: Kernel, cell: str) -> tuple[list[tuple[str, str]], PanelClient]:
    """Run ``cell``, clicking Next at every hold; (held point, its words) per hold."""
    held: list[tuple[str, str]] = []

    def on_frame(client: PanelClient) -> None:
        assert client.state is not None
        step = client.state["step"]
        if step["held"] is not None and len(held) < step["count"]:
            held.append((step["held"], step["what"]))
            client.send({"type": "next"})

    client = PanelClient(kernel, on_frame)
    assert run_cell(kernel, cell, client) == "ok"
    return held, client


@pytest.fixture(scope="module")
def tools_ui(ui_kernel: Kernel) -> Kernel:
    ui_kernel.ok(TOOLS)
    return ui_kernel


def all_events(kernel: Kernel) -> list[str]:
    code = (
        "import json; print(json.dumps("
        "[e['type'] for e in _agent_panel.events for _ in range(e.get('count', 1))]))"
    )
    result: list[str] = json.loads(kernel.ok(code).stdout)
    return result


def test_step_holds_at_the_eight_lifecycle_events_in_order(tools_ui: Kernel) -> None:
    tools_ui.ok(TWO_TURNS.format(name="s1"))
    held, client = walk(tools_ui, "%%agent --step --tools ADD\nWhat is 2 + 3?")
    assert [point for point, _ in held] == LIFECYCLE
    events = all_events(tools_ui)
    assert events.count("message_update") > 0 and events.count("tool_execution_update") == 1
    assert [e for e in events if e not in ("message_update", "tool_execution_update")] == LIFECYCLE
    assert dict(held)["tool_execution_end"] == "held after tool `add` finished"
    assert held[-1] == ("agent_end", "held at the end of the run")
    assert client.updates and set(client.updates[-1]) == {"text/html", "text/plain"}


def test_step_all_holds_at_every_event_and_before_each_request(tools_ui: Kernel) -> None:
    tools_ui.ok(TWO_TURNS.format(name="s2"))
    held, _ = walk(tools_ui, "%%agent --step all --tools ADD\nWhat is 2 + 3?")
    points = [point for point, _ in held]
    assert [p for p in points if p != "model_request"] == all_events(tools_ui)
    requests = [i for i, p in enumerate(points) if p == "model_request"]
    assert [held[i][1] for i in requests] == [
        "held before the model request of turn 1",
        "held before the model request of turn 2",
    ]
    assert all(points[i + 1] == "message_start" for i in requests)


def test_step_tools_holds_before_each_tool_and_each_request(tools_ui: Kernel) -> None:
    tools_ui.ok(TWO_TURNS.format(name="s3"))
    held, client = walk(tools_ui, "%%agent --step tools --tools ADD\nWhat is 2 + 3?")
    assert held == [
        ("model_request", "held before the model request of turn 1"),
        ("tool_execution_start", "held before tool `add` runs (prepared, not running yet)"),
        ("model_request", "held before the model request of turn 2"),
    ]
    assert client.state is not None and client.state["status"]["state"] == "done"


def test_the_context_view_shows_what_the_faux_model_received(tools_ui: Kernel) -> None:
    tools_ui.ok(TWO_TURNS.format(name="s4"))
    seen: list[dict[str, Any]] = []

    def on_frame(client: PanelClient) -> None:
        assert client.state is not None
        step = client.state["step"]
        if step["held"] is not None and len(seen) < step["count"]:
            seen.append(json.loads(json.dumps(client.state["context"])))
            client.send({"type": "next"})

    client = PanelClient(tools_ui, on_frame)
    cell = "%%agent --step tools --tools ADD --system 'Be terse.'\nWhat is 2 + 3?"
    assert run_cell(tools_ui, cell, client) == "ok"
    held_view = seen[2]  # held before the request of turn 2
    assert held_view["held"] is True and held_view["turn"] == 2
    # What the faux model was actually given in its second call, read in the kernel.
    received = json.loads(
        tools_ui.ok(
            "from pi_notebook.notebook.context_view import message_label, message_text\n"
            "_ctx = s4.requests[1].context\n"
            "print(json.dumps({'system': _ctx.system_prompt, "
            "'messages': [[message_label(m), message_text(m)] for m in _ctx.messages], "
            "'tools': [t.name for t in _ctx.tools]}))"
        ).stdout
    )
    assert held_view["system"]["text"] == received["system"] == "Be terse."
    assert [[m["label"], m["text"]] for m in held_view["messages"]] == received["messages"]
    assert received["messages"] == [
        ["user", "What is 2 + 3?"],
        ["assistant", '→ add({"a": 2, "b": 3})'],
        ["toolResult add", "5"],
    ]
    assert [t["name"] for t in held_view["tools"]] == received["tools"] == ["add"]


# -- plain mode: %agent context and %agent replay ----------------------------------------------


@pytest.fixture(scope="module")
def tools_plain(kernel: Kernel) -> Kernel:
    kernel.ok(TOOLS)
    return kernel


def test_agent_context_equals_what_the_model_received(tools_plain: Kernel) -> None:
    tools_plain.ok(TWO_TURNS.format(name="c1"))
    tools_plain.ok("%%agent --tools ADD --system 'Be terse.'\nWhat is 2 + 3?")
    shown = json.loads(tools_plain.ok("%agent context 2 --json").stdout)
    received = json.loads(
        tools_plain.ok(
            "_ctx = c1.requests[1].context\n"
            "print(json.dumps({'systemPrompt': _ctx.system_prompt, "
            "'messages': [m.to_json_dict() for m in _ctx.messages], "
            "'tools': [{'name': t.name, 'description': t.description, "
            "'parameters': t.json_schema()} for t in _ctx.tools]}))"
        ).stdout
    )
    for key in ("systemPrompt", "messages", "tools"):
        assert shown[key] == received[key], key
    assert shown["model"] == "faux/faux-1"
    text = tools_plain.ok("%agent context 2").stdout
    assert text.splitlines()[0].startswith("turn 2: the request to faux/faux-1: 3 messages, 1 tool")
    assert "3. toolResult add (≈ 1 token)\n  5\n" in text
    first = tools_plain.ok("%agent context 1").stdout
    assert "1. user" in first and "2. assistant" not in first
    bad = tools_plain.run("%agent context 3")
    assert bad.status == "error"
    assert bad.error is not None
    assert bad.error["evalue"] == "%agent context: turn 3: the last run had 2 turns (1 to 2)"


RECORDED_RUN = """
import asyncio
from pi_notebook.ai.replay import record, handle_of

{name} = register_faux_provider(token_size=(1, 1))
_fast_done = asyncio.Event()

async def _slow(tool_call_id, params, signal, on_update):
    on_update(AgentToolResult(content=[TextContent(text="half way")]))
    await _fast_done.wait()  # finishes after `fast`, though it was called first
    return AgentToolResult(content=[TextContent(text="slow result")])

async def _fast(tool_call_id, params, signal, on_update):
    pn.session().current.steer("Also say it in French.")  # typed while the tools run
    _fast_done.set()
    return AgentToolResult(content=[TextContent(text="fast result")])

async def _finish(tool_call_id, params, signal, on_update):
    return AgentToolResult(content=[TextContent(text="recorded")], terminate=True)

def _tool(name, fn):
    return AgentTool(name=name, description=f"The {{name}} tool.",
                     parameters={{"type": "object", "properties": {{}}}}, execute=fn)

SLOW, FAST, FINISH = _tool("slow", _slow), _tool("fast", _fast), _tool("finish", _finish)
{name}.set_responses([
    faux_assistant_message(
        [faux_tool_call("slow", {{}}, id="s"), faux_tool_call("fast", {{}}, id="f")],
        stop_reason="toolUse",
    ),
    faux_assistant_message([faux_tool_call("finish", {{}}, id="x")], stop_reason="toolUse"),
])
pn.use_model(record({name}.get_model(), {path!r}))
%agent reset
"""


def normalized(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``%agent events`` without what differs between two runs of one conversation."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k != "timestamp"}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    out: list[dict[str, Any]] = clean(records)
    return out


def test_replay_reproduces_the_original_events(tools_plain: Kernel, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    tools_plain.ok(RECORDED_RUN.format(name="r1", path=str(path)))
    original = tools_plain.ok("%%agent --tools SLOW FAST FINISH\nRun the tools.")
    events = json.loads(tools_plain.ok("_ev = %agent events\nprint(json.dumps(_ev))").stdout)
    context = tools_plain.ok("%agent context 2").stdout
    kinds = [(e["type"], e.get("tool_name")) for e in events if e["type"] != "message_update"]
    # The claims the lesson makes, in the original run:
    ends = [name for kind, name in kinds if kind == "tool_execution_end"]
    assert ends == ["fast", "slow", "finish"]  # parallel: completion order, not call order
    assert "Also say it in French." in context  # the steer reached the second request
    assert kinds[-3:] == [("message_end", None), ("turn_end", None), ("agent_end", None)]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["kind"] for line in lines] == ["header", "call", "tool", "tool", "call", "tool"]
    # Now with no model and no tools: the recording alone.
    tools_plain.ok("del SLOW, FAST, FINISH, r1\n%agent reset")
    replayed = tools_plain.ok(f"%agent replay {path}")
    assert replayed.stdout == original.stdout
    again = json.loads(tools_plain.ok("_ev = %agent events\nprint(json.dumps(_ev))").stdout)
    assert normalized(again) == normalized(events)
    replayed_context = tools_plain.ok("%agent context 2").stdout
    assert replayed_context == context.replace("to faux/faux-1", "to replay/faux-1", 1)
    status = tools_plain.ok("%agent status").stdout
    assert f"model: replay/faux-1 (from replay of {path.name})" in status


def test_replay_of_a_recording_without_tool_lines(tools_plain: Kernel, tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    tools_plain.ok(TWO_TURNS.format(name="r2") + "from pi_notebook.ai.replay import record\n")
    tools_plain.ok(f"pn.use_model(record(r2.get_model(), {str(path)!r}))")
    # Drop the tool lines: what a recording made with record() outside %%agent holds.
    original = tools_plain.ok("%%agent --tools ADD\nWhat is 2 + 3?").stdout
    kept = [line for line in path.read_text().splitlines() if '"kind":"tool"' not in line]
    path.write_text("\n".join(kept) + "\n")
    assert tools_plain.ok(f"%agent replay {path}").stdout == original


def test_replay_of_a_saved_conversation(tools_plain: Kernel, tmp_path: Path) -> None:
    path = tmp_path / "saved.jsonl"
    tools_plain.ok(TWO_TURNS.format(name="r3"))
    cell = "%%agent --new --tools ADD --system 'Be terse.'\nWhat is 2 + 3?"
    original = tools_plain.ok(cell).stdout
    events = json.loads(tools_plain.ok("_ev = %agent events\nprint(json.dumps(_ev))").stdout)
    context = tools_plain.ok("%agent context 2").stdout
    tools_plain.ok(f"%agent save {path}")
    tools_plain.ok("del ADD, r3\n%agent reset")
    # No model, no tool, no recording: the saved messages alone.
    assert tools_plain.ok(f"%agent replay {path}").stdout == original
    again = json.loads(tools_plain.ok("_ev = %agent events\nprint(json.dumps(_ev))").stdout)

    def lifecycle(records: list[dict[str, Any]]) -> list[Any]:
        # A saved conversation keeps no streamed chunks or progress updates: the rest is equal.
        kept = [r for r in normalized(records) if not r["type"].endswith("_update")]
        for record in kept:
            for name in ("message", "messages"):
                record.pop(name, None)  # whose model wrote a reply and its usage differ
        return kept

    assert lifecycle(again) == lifecycle(events)
    assert [e["message"]["content"] for e in again if e["type"] == "message_end"] == [
        e["message"]["content"] for e in events if e["type"] == "message_end"
    ]
    replayed = tools_plain.ok("%agent context 2").stdout
    # The same system prompt and messages; the tools are stand-ins (the file has no schemas).
    messages = context.split("\ntools (")[0].split("\n", 1)[1]
    assert replayed.split("\ntools (")[0].split("\n", 1)[1] == messages
    assert "3. toolResult add (≈ 1 token)\n  5\n" in replayed
    assert "(replayed from a saved conversation, which keeps no tool schemas)" in replayed
    status = tools_plain.ok("%agent status").stdout
    assert "model: replay/faux-1 (from replay of saved.jsonl)" in status
    broken = tmp_path / "broken.jsonl"
    broken.write_text("hello\n")
    bad = tools_plain.run(f"%agent replay {broken}")
    assert bad.status == "error" and bad.error is not None
    assert "nor a saved conversation" in bad.error["evalue"]


def test_replay_errors_are_one_line(tools_plain: Kernel, tmp_path: Path) -> None:
    missing = tools_plain.run(f"%agent replay {tmp_path / 'nope.jsonl'}")
    assert missing.status == "error" and missing.error is not None
    assert missing.error["ename"] == "UsageError"
    assert re.match(r"%agent replay: cannot read recording .*nope\.jsonl", missing.error["evalue"])
    usage = tools_plain.run("%agent replay")
    assert usage.status == "error" and "PATH" in str(usage.error)


#: The stations the lesson's recorded run reads, in its calls' order (they label the calls).
STATIONS = ("north", "south", "east")


def test_a_replay_steps_through_the_panel_like_a_live_run(tools_ui: Kernel) -> None:
    lesson = Path(__file__).resolve().parents[2] / "notebooks" / "02_loop_lifecycle.run.jsonl"
    held, client = walk(tools_ui, f"%agent replay {lesson} --step tools")
    assert held == [
        ("model_request", "held before the model request of turn 1"),
        *(
            (
                "tool_execution_start",
                f"held before tool `read_station ({station})` runs "
                f"(call {n} of 3; prepared, not running yet)",
            )
            for n, station in enumerate(STATIONS, start=1)
        ),
        ("model_request", "held before the model request of turn 2"),
        (
            "tool_execution_start",
            "held before tool `record_answer` runs (prepared, not running yet)",
        ),
    ]
    assert client.state is not None and client.state["status"]["state"] == "done"
    assert client.updates and set(client.updates[-1]) == {"text/html", "text/plain"}
    assert "user: Give the temperatures in Fahrenheit too." in client.updates[-1]["text/plain"]
    # The tools finished in the recorded order (the tree of the live panel).
    tools = [n["detail"] for n in client.state["lifecycle"] if n["kind"] == "tool"]
    ends = [
        e
        for e in json.loads(
            tools_ui.ok(
                "print(json.dumps([e.get('tool_call_id') for e in _agent_panel.events "
                "if e['type'] == 'tool_execution_end']))"
            ).stdout
        )
    ]
    assert tools == [f"read_station ({s})" for s in STATIONS] + ["record_answer"]
    assert ends == ["read_south", "read_east", "read_north", "record_1"]
    # The saved transcript's timeline names every call of the parallel batch, whose bars
    # overlap in time, and each model request; %agent timeline prints the same as rows.
    html = client.updates[-1]["text/html"]
    image = re.search(
        r'<img class="pi-timeline" alt="([^"]*)" src="data:image/svg\+xml;base64,([^"]+)"', html
    )
    assert image is not None, "the static transcript shows the timeline"
    svg = base64.b64decode(image.group(2)).decode()
    for station in STATIONS:
        assert f">read_station ({station})</text>" in svg
    assert ">request 1 (turn 1)</text>" in svg and ">request 2 (turn 2)</text>" in svg
    bars = {
        lane: (float(start), float(end))
        for start, end, lane in re.findall(
            r'<g data-kind="running" data-start="([^"]+)" data-end="([^"]+)" '
            r'data-lane="tool:(read_[a-z]+)"',
            svg,
        )
    }
    assert sorted(bars) == ["read_east", "read_north", "read_south"]
    assert max(s for s, _ in bars.values()) <= min(e for _, e in bars.values()), "they overlap"
    rows = tools_ui.ok("%agent timeline").stdout
    for station in STATIONS:
        assert re.search(rf"read_station \({station}\) +running", rows), rows
    assert "── turn 2 starts" in rows


def test_a_replay_that_diverges_from_its_recording_fails_the_cell(
    tools_plain: Kernel, tmp_path: Path
) -> None:
    lesson = Path(__file__).resolve().parents[2] / "notebooks" / "02_loop_lifecycle.run.jsonl"
    lines = lesson.read_text(encoding="utf-8").splitlines()
    tampered = [
        line.replace("south: 19.0", "south: 25.0") if '"kind": "tool"' in line else line
        for line in lines
    ]
    assert tampered != lines
    path = tmp_path / "tampered.jsonl"
    path.write_text("\n".join(tampered) + "\n", encoding="utf-8")
    result = tools_plain.run(f"%agent replay {path}")
    assert result.status == "error" and result.error is not None
    assert result.error["ename"] == "ReplayDivergence"
    assert "at call 2" in result.error["evalue"] and "south: 25.0" in result.error["evalue"]
    # Cut after the first call: the replay ends there and says a call was never requested.
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")
    cut = tools_plain.run(f"%agent replay {short}")
    assert cut.status == "ok", cut.error  # the first batch's results were never recorded
    assert "[replay: no result was recorded for this tool call]" in cut.stdout


def test_a_replayed_panel_shows_the_recorded_tool_durations(
    tools_ui: Kernel, tmp_path: Path
) -> None:
    """The replay runs no tool: its cards show how long each call ran when recorded (29.1.4)."""
    path = tmp_path / "timed.jsonl"
    tools_ui.ok(RECORDED_RUN.format(name="r9", path=str(path)))
    tools_ui.ok("%%agent --plain --tools SLOW FAST FINISH\nRun the tools.")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    recorded = {x["toolCallId"]: x["durationMs"] for x in lines if x["kind"] == "tool"}
    assert set(recorded) == {"s", "f", "x"}
    assert all(isinstance(ms, float) and ms >= 0 for ms in recorded.values())
    client = PanelClient(tools_ui)
    assert run_cell(tools_ui, f"%agent replay {path}", client) == "ok"
    assert client.comm_id is not None  # shown in a panel (the replay may end before the view's
    # hello, so its final state is read from the kernel's panel, not from the frames)
    dump = "import json; print(json.dumps(_agent_panel.snapshot))"
    state = json.loads(tools_ui.ok(dump).stdout)
    shown = {k: state["tools"][k]["duration_ms"] for k in recorded}
    assert shown == recorded
    running = [s for s in state["timeline"]["spans"] if s["kind"] == "running"]
    assert len(running) == 3 and all("when recorded" in s["outcome"] for s in running)
