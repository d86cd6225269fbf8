"""The agent panel in a real kernel (jupyter_client), driven the way its front end drives it.

The kernel runs with the interactive UI (not plain), so ``%%agent`` displays an ``AgentPanel``.
A :class:`PanelClient` finds the widget's comm in the ``comm_open`` message, says ``hello``
like a view, follows snapshot + numbered delta frames into a state (with the same op
semantics as the front end) and sends control messages (abort, steer, next) mid-run. All
synchronisation is on kernel messages: scripted replies wait for the view's hello
(conftest's ``after_view``), so a fast run cannot end before the view joins. No wall-clock
time is asserted; the abort latency is printed.
"""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_notebook.notebook.panel.markdown import render_markdown
from pi_notebook.notebook.panel.ops import apply_ops

from .conftest import Kernel

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def script(
    kernel: Kernel, name: str, replies: list[str], tps: float | None = None, gate: bool = True
) -> None:
    """Script ``replies``; with ``gate`` each one waits for a view of the panel (conftest's
    ``after_view``), so the test's view follows the run from its start, however fast."""
    wrap = "after_view(faux_assistant_message(t))" if gate else "faux_assistant_message(t)"
    kernel.ok(
        f"{name} = register_faux_provider(token_size=(1, 1), tokens_per_second={tps!r})\n"
        f"{name}.set_responses([{wrap} for t in {replies!r}])\n"
        f"pn.use_model({name})\n"
        "%agent reset"
    )


class PanelClient:
    """Plays the front end of the panel a cell displays."""

    def __init__(self, kernel: Kernel, on_frame: Callable[[PanelClient], None] | None = None):
        self.kernel = kernel
        self.comm_id: str | None = None
        self.state: dict[str, Any] | None = None
        self.seq = -1
        self.frames: list[tuple[float, dict[str, Any]]] = []
        self.synced: list[dict[str, Any]] = []
        self.displays: list[dict[str, Any]] = []
        self.updates: list[dict[str, Any]] = []
        self.closed: list[str] = []
        self.stdout = ""
        self.on_frame = on_frame
        self.gaps = 0
        self.draft = ""
        """What the input box holds (sent as the final draft when the run closes)."""

    def send(self, content: dict[str, Any]) -> None:
        assert self.comm_id is not None
        self.kernel.comm_send(self.comm_id, content)

    def __call__(self, msg: dict[str, Any]) -> None:
        kind = msg["header"]["msg_type"]
        content = msg["content"]
        if kind == "comm_open":
            state = content["data"].get("state", {})
            if str(state.get("_anywidget_id", "")).endswith("AgentPanel"):
                self.comm_id = content["comm_id"]
                self.send({"type": "hello"})
        elif kind == "comm_msg" and content["comm_id"] == self.comm_id:
            data = content["data"]
            if data.get("method") == "update" and "state" in data.get("state", {}):
                self.synced.append(data["state"]["state"])
            elif data.get("method") == "custom":
                self._frame(data["content"])
        elif kind == "comm_close":
            self.closed.append(content["comm_id"])
        elif kind == "display_data":
            self.displays.append(content["data"])
        elif kind == "update_display_data":
            self.updates.append(content["data"])
        elif kind == "stream" and content["name"] == "stdout":
            self.stdout += content["text"]

    def _frame(self, frame: dict[str, Any]) -> None:
        self.frames.append((time.monotonic(), frame))
        if frame["type"] == "closing":  # the run ended: a view hands over its draft
            self.send({"type": "draft", "text": self.draft, "final": True})
            return
        if frame["type"] == "snapshot":
            self.state = {k: v for k, v in frame.items() if k not in ("type", "seq")}
            self.seq = frame["seq"]
        elif frame["type"] == "deltas" and self.state is not None:
            if frame["seq"] <= self.seq:
                return
            if frame["seq"] != self.seq + 1:
                self.gaps += 1
                self.send({"type": "resync"})
                return
            apply_ops(self.state, frame["ops"])
            self.seq = frame["seq"]
        if self.on_frame is not None and self.state is not None:
            self.on_frame(self)

    def html(self) -> str:
        """The assistant text as the view shows it: finished blocks, then the tail."""
        assert self.state is not None
        return "".join(
            "".join(b["html"]) + (b["tail"] if b["raw"] is None else html.escape(b["raw"]))
            for m in self.state["messages"]
            if m["role"] == "assistant"
            for b in m["blocks"]
            if b["type"] == "text"
        )

    def text(self) -> str:
        return html.unescape(re.sub(r"<[^>]+>", "", self.html())).strip()


def run_cell(kernel: Kernel, code: str, client: PanelClient, timeout: float = 60) -> str:
    reply, _ = kernel.run_raw(code, timeout=timeout, on_msg=client)
    status: str = reply["content"]["status"]
    return status


def test_panel_streams_the_run_and_leaves_a_static_transcript(ui_kernel: Kernel) -> None:
    reply = "Hello **there**, " + "word " * 60 + "<script>alert(1)</script>"
    script(ui_kernel, "p1", [reply], tps=400)
    client = PanelClient(ui_kernel)
    assert run_cell(ui_kernel, "%%agent\nHi", client) == "ok"
    # Rendered through the panel: nothing printed, the widget displayed.
    assert client.stdout == ""
    assert client.comm_id is not None
    assert WIDGET_MIME in client.displays[0]
    assert client.displays[0]["text/plain"] == "<pi_notebook agent panel>"
    # The deltas, applied in order from the snapshot, rebuild exactly the final state.
    assert client.state is not None and client.gaps == 0
    kinds = [f["type"] for _, f in client.frames]
    assert kinds[0] == "snapshot" and kinds.count("deltas") >= 2
    assert client.html() == render_markdown(reply)
    assert client.state["status"]["state"] == "done"
    assert client.state["status"]["turn"] == 1
    # After the run the output is the static, sanitised transcript alone (no widget view, so a
    # saved notebook reads everywhere), and then the widget is closed.
    last = client.updates[-1]
    assert set(last) == {"text/html", "text/plain"}
    assert last["text/plain"] == f"user: Hi\nassistant: {reply}"
    assert "<strong>there</strong>" in last["text/html"]
    assert "<script>" not in last["text/html"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in last["text/html"]
    assert client.closed == [client.comm_id]
    assert client.synced == [], "no final state sync for a widget that closes"
    # panel.events: the ten event types as data, in lifecycle order.
    result = ui_kernel.ok(
        "print([e['type'] for e in _agent_panel.events if e['type'] != 'message_update'])"
    )
    assert result.stdout.strip() == str(
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "turn_end",
            "agent_end",
        ]
    )


def test_abort_from_the_panel_stops_the_run_at_once(ui_kernel: Kernel) -> None:
    script(ui_kernel, "p2", ["slow " * 400, "after abort"], tps=40)
    sent: list[float] = []
    aborted: list[float] = []

    def on_frame(client: PanelClient) -> None:
        assert client.state is not None
        if not sent and client.text():
            sent.append(time.monotonic())
            client.send({"type": "abort"})
        elif sent and not aborted and client.state["status"]["state"] == "aborted":
            aborted.append(time.monotonic())

    client = PanelClient(ui_kernel, on_frame)
    assert run_cell(ui_kernel, "%%agent\nGo", client) == "ok"
    assert sent and aborted, client.state
    latency = aborted[0] - sent[0]  # measured (bench/bench_abort.py), not asserted here
    print(f"abort latency: {latency * 1000:.1f} ms")
    assert client.state is not None
    assistant = client.state["messages"][-1]
    assert assistant["stop_reason"] == "aborted"
    # Stopped at once, not streamed to the end: the 2,000-character reply (50 s at 40 tokens/s)
    # ends with a small part of it.
    assert len(client.text()) < len("slow " * 400) // 4, len(client.text())
    assert client.updates[-1]["text/plain"].endswith("assistant [aborted]: Request was aborted")
    # The transcript stays valid: the next cell runs on it.
    nxt = PanelClient(ui_kernel)
    assert run_cell(ui_kernel, "%%agent\nAgain", nxt) == "ok"
    assert nxt.text() == "after abort"
    assert nxt.closed == [nxt.comm_id]
    history = ui_kernel.ok("%agent history").stdout
    assert history.endswith("user: Again\nassistant: after abort\n")


def test_steer_from_the_panel_is_delivered_at_the_next_turn(ui_kernel: Kernel) -> None:
    # The first answer streams once the steer is queued, so it is sent mid-run however fast.
    ui_kernel.ok(
        "p3 = register_faux_provider(token_size=(1, 1), tokens_per_second=300)\n"
        "steered = lambda panel: len(pn.session().current.steering_queue) > 0\n"
        "p3.set_responses([after_panel(faux_assistant_message('first ' * 40), steered),"
        " faux_assistant_message('steered reply')])\n"
        "pn.use_model(p3)\n"
        "%agent reset"
    )
    queued: list[list[dict[str, Any]]] = []

    def on_frame(client: PanelClient) -> None:
        assert client.state is not None
        if not queued:  # the view joined: the run is waiting for its first answer
            queued.append([])
            client.send({"type": "steer", "text": "Change of plan"})
        elif queued and client.state["queue"] and not queued[0]:
            queued[0].extend(client.state["queue"])

    client = PanelClient(ui_kernel, on_frame)
    assert run_cell(ui_kernel, "%%agent\nStart", client) == "ok"
    assert queued == [[{"kind": "steer", "text": "Change of plan"}]]
    assert client.state is not None and client.state["queue"] == []
    assert client.state["status"]["turn"] == 2
    roles = [(m["role"], m.get("html")) for m in client.state["messages"]]
    assert roles == [
        ("user", "<p>Start</p>\n"),
        ("assistant", None),
        ("user", "<p>Change of plan</p>\n"),
        ("assistant", None),
    ]
    second_call = ui_kernel.ok("print(p3.call_count)").stdout
    assert second_call == "2\n"
    assert client.text().endswith("steered reply")


def test_step_mode_holds_the_loop_at_every_event(ui_kernel: Kernel) -> None:
    script(ui_kernel, "p4", ["Hi."], tps=None)
    held: list[tuple[str, int]] = []

    def on_frame(client: PanelClient) -> None:
        assert client.state is not None
        step = client.state["step"]
        if step["held"] is not None and (not held or held[-1][1] != step["count"]):
            held.append((step["held"], step["count"]))
            # The loop is parked at this event: nothing after it has reached the panel.
            nodes = client.state["lifecycle"]
            if step["held"] == "turn_start":
                assert nodes[-1]["kind"] == "turn" and nodes[-1]["end"] is None
            client.send({"type": "next"})

    client = PanelClient(ui_kernel, on_frame)
    assert run_cell(ui_kernel, "%%agent --step all\nHello", client) == "ok"
    events = json.loads(
        ui_kernel.ok(
            "import json; print(json.dumps("
            "[e['type'] for e in _agent_panel.events for _ in range(e.get('count', 1))]))"
        ).stdout
    )
    assert [kind for kind, _ in held if kind != "model_request"] == events
    assert [kind for kind, _ in held].count("model_request") == 1  # and before the request
    assert [count for _, count in held] == list(range(1, len(events) + 2))
    assert events[0] == "agent_start" and events[-1] == "agent_end"
    assert client.state is not None and client.state["status"]["state"] == "done"


def test_step_mode_run_to_end_releases_the_rest(ui_kernel: Kernel) -> None:
    script(ui_kernel, "p5", ["One two three."], tps=None)
    clicks: list[str] = []

    def on_frame(client: PanelClient) -> None:
        assert client.state is not None
        step = client.state["step"]
        if step["held"] is not None and len(clicks) < step["count"]:
            clicks.append("next" if step["count"] < 3 else "run_to_end")
            client.send({"type": clicks[-1]})

    client = PanelClient(ui_kernel, on_frame)
    assert run_cell(ui_kernel, "%%agent --step\nCount", client) == "ok"
    assert clicks == ["next", "next", "run_to_end"]
    assert client.state is not None and client.state["status"]["state"] == "done"
    assert client.text() == "One two three."


def test_plain_mode_still_prints_the_transcript_once(ui_kernel: Kernel, tmp_path: Path) -> None:
    script(ui_kernel, "p6", ["plain reply"], gate=False)  # no panel: nothing to wait for
    client = PanelClient(ui_kernel)
    assert run_cell(ui_kernel, "%%agent --plain\nHi", client) == "ok"
    assert client.comm_id is None and not client.displays
    assert client.stdout == "user: Hi\nassistant: plain reply\n"


def test_background_run_renders_through_the_panel_too(ui_kernel: Kernel) -> None:
    script(ui_kernel, "p7", ["in the *background*"], tps=200)
    client = PanelClient(ui_kernel)
    assert run_cell(ui_kernel, "%%agent --background\nHi", client) == "ok"
    joined = PanelClient(ui_kernel)
    assert run_cell(ui_kernel, "await pn.wait()", joined) == "ok"
    state = ui_kernel.ok("print(_agent_panel.snapshot['status']['state'])").stdout
    assert state == "done\n"
    assert client.stdout == "" and joined.stdout == ""
    # When it ends, the background run's output becomes the static transcript too.
    final = (client.updates + joined.updates)[-1]
    assert set(final) == {"text/html", "text/plain"}
    assert "<em>background</em>" in final["text/html"]
    assert client.comm_id in client.closed + joined.closed


def test_finished_panels_are_closed_and_keep_counts_not_tokens(ui_kernel: Kernel) -> None:
    script(ui_kernel, "p10", ["word " * 400, "short", "again"], tps=None)
    for prompt in ("one", "two", "three"):
        client = PanelClient(ui_kernel)
        assert run_cell(ui_kernel, f"%%agent\n{prompt}", client) == "ok"
        assert client.closed == [client.comm_id]
    alive = ui_kernel.ok(
        "import gc\nfrom pi_notebook.notebook.panel import AgentPanel\ngc.collect()\n"
        "print(sum(isinstance(o, AgentPanel) for o in gc.get_objects()))"
    ).stdout
    assert alive == "1\n", "only the last panel (_agent_panel) stays, and it holds no comm"
    # A finished panel displayed again is its transcript, not a dead widget.
    _, messages = ui_kernel.run_raw("_agent_panel")
    shown = [m["content"]["data"] for m in messages if m["msg_type"] == "execute_result"]
    assert len(shown) == 1 and set(shown[0]) == {"text/html", "text/plain"}
    assert "again" in shown[0]["text/html"] and shown[0]["text/plain"].endswith("again")
    # The panel keeps per-run counts and the lifecycle, not a record per token.
    counts = ui_kernel.ok(
        "print(_agent_panel.counts['message_update'] >= 3, len(_agent_panel.events))"
    )
    assert counts.stdout == "True 9\n"


def test_kernel_interrupt_ends_the_panel_aborted(ui_kernel: Kernel) -> None:
    script(ui_kernel, "p8", ["never " * 500], tps=50)
    interrupted: list[bool] = []

    def on_frame(client: PanelClient) -> None:
        if not interrupted and client.text():
            interrupted.append(True)
            ui_kernel.km.interrupt_kernel()

    client = PanelClient(ui_kernel, on_frame)
    status = run_cell(ui_kernel, "%%agent\nGo", client)
    assert interrupted and status == "error"
    assert client.state is not None
    assert client.state["status"]["state"] == "aborted"
    assert client.state["status"]["note"] == "interrupted"
    assert client.updates[-1]["text/plain"].endswith("assistant [aborted]: Request was aborted")
    assert ui_kernel.ok("print(1)").stdout == "1\n"


TOOL = """
from pi_notebook.agent import AgentTool
from pi_notebook.agent.types import AgentToolResult
from pi_notebook.ai import TextContent
from pi_notebook.ai.faux import faux_tool_call

async def _add(tool_call_id, params, signal, on_update):
    on_update(AgentToolResult(content=[TextContent(text="adding...")]))
    return AgentToolResult(content=[TextContent(text=f"sum={params['a'] + params['b']}")])

add = AgentTool(
    name="add",
    description="Add two integers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    },
    execute=_add,
)
p9 = register_faux_provider(token_size=(1, 1), tokens_per_second=300)
call = lambda a, b, id: faux_assistant_message(
    faux_tool_call("add", {"a": a, "b": b}, id=id), stop_reason="toolUse"
)
last = faux_assistant_message("One approved, one denied.")
p9.set_responses([call(1, 2, "yes"), call(3, 4, "no"), last])
pn.use_model(p9)
%agent reset
"""


def test_approvals_answered_from_the_panel(ui_kernel: Kernel) -> None:
    ui_kernel.ok(TOOL)
    answered: list[str] = []

    def on_frame(client: PanelClient) -> None:
        assert client.state is not None
        for card in client.state["approvals"]:
            call = card["tool_call_id"]
            if call not in answered:
                answered.append(call)
                client.send({"type": "approval", "tool_call_id": call, "approved": call == "yes"})

    client = PanelClient(ui_kernel, on_frame)
    assert run_cell(ui_kernel, "%%agent --tools add --approve all\nAdd twice.", client) == "ok"
    assert answered == ["yes", "no"]
    assert client.state is not None and client.gaps == 0
    static = client.updates[-1]["text/html"]
    assert 'data-tool-call-id="yes" data-status="done"' in static
    assert 'data-tool-call-id="no" data-status="error"' in static
    tools = client.state["tools"]
    assert tools["yes"]["status"] == "done" and tools["yes"]["result_text"] == "sum=3"
    assert tools["no"]["status"] == "error" and "denied" in tools["no"]["result_text"]
    assert client.text() == "One approved, one denied."
    assert sorted(tools) == ["no", "yes"]
