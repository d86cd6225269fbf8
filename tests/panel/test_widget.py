"""AgentPanel: thread-safe control handlers, approvals, the synced state (the front end it
sends: test_frontend.py)."""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass
from typing import Any

from pi_notebook.agent import Agent
from pi_notebook.ai import AbortController, faux_assistant_message
from pi_notebook.notebook.panel.widget import WIDGET_MIME

from .helpers import CapturePanel, faux, replay


async def test_handlers_from_another_thread_run_on_the_agents_loop() -> None:
    # long enough (about 4 s at 500 tokens/s) to still be streaming when the abort arrives
    provider = faux([faux_assistant_message("slow " * 400), faux_assistant_message("ok")], tps=500)
    agent = Agent(model=provider.get_model())
    loop_thread = threading.get_ident()
    calls: list[tuple[str, int]] = []
    steer, abort = agent.steer, agent.abort

    def record_steer(message: Any) -> None:
        calls.append(("steer", threading.get_ident()))
        steer(message)

    def record_abort() -> None:
        calls.append(("abort", threading.get_ident()))
        abort()

    agent.steer = record_steer  # type: ignore[method-assign]
    agent.abort = record_abort  # type: ignore[method-assign]
    panel = CapturePanel()
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    task = asyncio.ensure_future(agent.prompt("Hi"))
    await panel.wait_for(lambda p: "slow" in json.dumps(p.sent))

    def from_comm_thread() -> None:
        panel._on_custom_msg(panel, {"type": "steer", "text": "from a thread"}, [])
        panel._on_custom_msg(panel, {"type": "followup", "text": "later"}, [])

    worker = threading.Thread(target=from_comm_thread)
    worker.start()
    worker.join()
    await panel.wait_for(lambda p: len(p.snapshot["queue"]) == 2)
    assert panel.snapshot["queue"] == [
        {"kind": "steer", "text": "from a thread"},
        {"kind": "followup", "text": "later"},
    ]
    assert calls == [("steer", loop_thread)]
    panel.handle_message({"type": "clear_queue"})
    assert panel.snapshot["queue"] == [] and not agent.has_queued_messages()
    worker = threading.Thread(target=panel._on_custom_msg, args=(panel, {"type": "abort"}, []))
    worker.start()
    worker.join()
    await asyncio.wait_for(task, 5)
    panel.finish()
    assert calls == [("steer", loop_thread), ("abort", loop_thread)]
    assert [m.role for m in agent.state.messages] == ["user", "assistant"]
    assert agent.state.messages[-1].stop_reason == "aborted"


async def test_steer_and_followup_sent_as_the_run_ends_wait_for_the_next_prompt() -> None:
    provider = faux([faux_assistant_message("x"), faux_assistant_message("y")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel()
    panel.attach(agent)
    await agent.prompt("Hi")
    panel.finish()
    panel.handle_message({"type": "steer", "text": "too late"})
    panel.handle_message({"type": "followup", "text": "and later"})
    assert panel.snapshot["status"]["note"] == "queued for the next %%agent cell"
    assert [(q["kind"], q["text"]) for q in panel.snapshot["queue"]] == [
        ("steer", "too late"),
        ("followup", "and later"),
    ]
    panel.handle_message({"type": "abort"})
    assert panel.snapshot["status"]["note"] == "no run is active"
    # The next prompt delivers them: the steer with it, the follow-up after its answer.
    await agent.prompt("Next")
    users = [m.content[0].text for m in agent.state.messages if m.role == "user"]
    assert users == ["Hi", "Next", "too late", "and later"]


@dataclass(frozen=True)
class Request:
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    summary: str


async def test_request_approval_waits_for_the_view() -> None:
    panel = CapturePanel()
    panel.attach(Agent())
    panel.handle_message({"type": "hello"})
    ask = asyncio.ensure_future(
        panel.request_approval(Request("c1", "run_python", {"code": "1"}, "1 line"))
    )
    await panel.wait_for(lambda p: bool(p.snapshot["approvals"]))
    assert panel.snapshot["approvals"][0]["summary"] == "1 line"
    panel.handle_message({"type": "approval", "tool_call_id": "c1", "approved": True})
    assert await ask is True
    assert panel.snapshot["approvals"] == []
    deny = asyncio.ensure_future(panel.request_approval(Request("c2", "x", {}, "s")))
    await panel.wait_for(lambda p: bool(p.snapshot["approvals"]))
    panel.handle_message({"type": "approval", "tool_call_id": "c2", "approved": "yes"})
    assert await deny is False, "only a JSON true approves"
    controller = AbortController()
    aborted = asyncio.ensure_future(
        panel.request_approval(Request("c3", "x", {}, "s"), controller.signal)
    )
    await panel.wait_for(lambda p: bool(p.snapshot["approvals"]))
    controller.abort()
    assert await aborted is False
    assert replay(panel.sent) == panel.snapshot


async def test_finish_syncs_the_full_state_and_the_static_bundle() -> None:
    provider = faux([faux_assistant_message("Final *answer*")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel()
    assert repr(panel) == "<pi_notebook agent panel>"
    panel.attach(agent)
    await agent.prompt("Q")
    panel.finish()
    synced = dict(panel.state)
    assert synced.pop("finished") is True and synced.pop("seq") == panel.transport.seq
    assert synced == panel.snapshot
    assert panel.sent == [], "no view said hello: nothing was streamed"
    # A view re-created after the run (the display update) already has the final state.
    panel.handle_message({"type": "hello", "seq": panel.state["seq"]})
    assert panel.sent == []
    panel.handle_message({"type": "hello", "seq": -1})
    assert [m["type"] for m in panel.sent] == ["snapshot"]
    data = panel.static_bundle()
    assert data["text/plain"] == "user: Q\nassistant: Final *answer*"
    assert "<em>answer</em>" in data["text/html"]
    assert set(data) == {"text/html", "text/plain"}, "no widget view: it reads everywhere"


async def test_a_finished_panel_displays_as_its_transcript_and_closes() -> None:
    provider = faux([faux_assistant_message("Static *now*")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel()
    live = panel._repr_mimebundle_()
    assert WIDGET_MIME in (live[0] if isinstance(live, tuple) else live)
    panel.attach(agent)
    await agent.prompt("Q")
    panel.finish(sync=False)
    synced_before = dict(panel.state)
    assert synced_before["finished"] is False, "no final sync when the panel is about to close"
    assert panel._repr_mimebundle_() == panel.static_bundle()
    assert "<em>now</em>" in panel.static_bundle()["text/html"]
    assert panel.comm is not None
    panel.close()
    assert panel.comm is None
    assert panel._repr_mimebundle_() == panel.static_bundle()
    assert panel.snapshot["status"]["state"] == "done"
