"""The panel's approval box with its four answers, on a real Agent run (faux model): the
card's approval line live and in the static transcript, Always allow asks no more, Deny and
stop ends the run (state ``aborted``, a note saying why, no card left open)."""

from __future__ import annotations

import asyncio
from typing import Any

from bs4 import BeautifulSoup

from pi_notebook.agent import Agent, RunConfig
from pi_notebook.ai import faux_assistant_message
from pi_notebook.ai.faux import faux_tool_call
from pi_notebook.notebook.panel.static import render_static_html
from pi_notebook.tools import ApprovalGate, preferring_programmatic, tool

from .helpers import CapturePanel, faux


@tool
def ping() -> str:
    """Ping."""
    return "pong"


def call(*ids: str) -> Any:
    return faux_assistant_message(
        [faux_tool_call("ping", {}, id=i) for i in ids], stop_reason="toolUse"
    )


async def run_with_answers(responses: list[Any], answers: list[dict[str, Any]]) -> CapturePanel:
    """Run the script with ``--approve all``'s gate on a panel; answer each card in turn (as
    the view would), asserting every card is asked."""
    provider = faux(responses)
    agent = Agent(model=provider.get_model(), tools=[ping])
    panel = CapturePanel()
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    gate = ApprovalGate(
        "all",
        preferring_programmatic(panel.request_approval),
        allowed=set(),
        stop=agent.abort,
        notify=panel.approval_outcome,
    )
    config = RunConfig(before_tool_call=gate.before_tool_call, listeners=[gate.listener])
    task = asyncio.ensure_future(agent.prompt("go", run=config))
    for answer in answers:
        await panel.wait_for(lambda p: bool(p.snapshot["approvals"]))
        (card,) = panel.snapshot["approvals"]
        panel.handle_message({"type": "approval", "tool_call_id": card["tool_call_id"], **answer})
        await panel.wait_for(lambda p: not p.snapshot["approvals"] or task.done())
    await asyncio.wait_for(task, 10)
    assert not panel.snapshot["approvals"]
    panel.finish()
    return panel


def approval_lines(html: str) -> dict[str, str]:
    page = BeautifulSoup(html, "html.parser")
    return {
        str(card["data-tool-call-id"]): card.select_one(".pi-tool-approval").get_text()
        for card in page.select(".pi-tool-card")
        if card.select_one(".pi-tool-approval") is not None
    }


async def test_always_allow_asks_once_and_every_card_says_why_it_ran() -> None:
    panel = await run_with_answers(
        [call("first"), call("second", "third"), faux_assistant_message("done")],
        [{"approved": True, "answer": "always"}],  # only the first call is asked
    )
    tools = panel.snapshot["tools"]
    assert [tools[i]["status"] for i in ("first", "second", "third")] == ["done"] * 3
    assert tools["first"]["approval"] == (
        "approved by the user: always allow ping (this conversation)"
    )
    assert tools["second"]["approval"] == tools["third"]["approval"]
    assert tools["second"]["approval"] == "allowed (always allow ping)"
    assert approval_lines(render_static_html(panel.snapshot)) == {
        "first": "Approval: approved by the user: always allow ping (this conversation)",
        "second": "Approval: allowed (always allow ping)",
        "third": "Approval: allowed (always allow ping)",
    }


async def test_approve_and_deny_are_said_too_and_a_denial_lets_the_model_go_on() -> None:
    panel = await run_with_answers(
        [call("yes"), call("no"), faux_assistant_message("went on")],
        [{"approved": True}, {"approved": False}],
    )
    tools = panel.snapshot["tools"]
    assert tools["yes"]["approval"] == "approved by the user"
    assert tools["no"]["approval"] == "denied by the user"
    assert tools["no"]["status"] == "error" and tools["no"]["result_text"] == "denied by user"
    assert panel.snapshot["status"]["state"] == "done"


async def test_deny_and_stop_ends_the_run_and_the_transcript_says_so() -> None:
    panel = await run_with_answers(
        [call("asked", "never"), faux_assistant_message("not sent")],
        [{"approved": False, "answer": "stop"}],
    )
    snapshot = panel.snapshot
    status = snapshot["status"]
    assert status["state"] == "aborted"
    assert status["note"] == "you denied ping and stopped the run"
    asked, never = snapshot["tools"]["asked"], snapshot["tools"]["never"]
    assert asked["approval"] == "denied and stopped by the user"
    assert asked["result_text"] == "denied and stopped by the user" and asked["is_error"]
    assert never["status"] == "aborted" and never["approval"] is None
    html = render_static_html(snapshot)
    assert approval_lines(html) == {"asked": "Approval: denied and stopped by the user"}
    page = BeautifulSoup(html, "html.parser")
    assert "you denied ping and stopped the run" in page.select_one(".pi-note").get_text()
    assert "not sent" not in page.get_text()


async def test_an_unknown_answer_is_a_denial() -> None:
    panel = await run_with_answers(
        [call("odd"), faux_assistant_message("went on")],
        [{"approved": True, "answer": "maybe"}],
    )
    assert panel.snapshot["tools"]["odd"]["approval"] == "denied by the user"


async def test_the_approval_line_renders_inert_in_the_static_transcript() -> None:
    from .corpus import HOSTILE
    from .test_markdown import audit
    from .test_static import FRAME_ATTRIBUTES, FRAME_TAGS

    panel = await run_with_answers(
        [call("odd"), faux_assistant_message("went on")], [{"approved": True}]
    )
    state = panel.snapshot
    state["tools"]["odd"]["approval"] = HOSTILE[0]
    html = render_static_html(state)
    assert audit(html, FRAME_TAGS, FRAME_ATTRIBUTES) == []
    assert approval_lines(html) == {"odd": f"Approval: {HOSTILE[0]}"}


async def test_deny_and_stop_in_step_mode_ends_the_run_without_another_next() -> None:
    provider = faux([call("held"), faux_assistant_message("not sent")])
    agent = Agent(model=provider.get_model(), tools=[ping])
    panel = CapturePanel(step="all")
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    gate = ApprovalGate("all", lambda: panel.request_approval, stop=agent.abort)
    config = RunConfig(before_tool_call=gate.before_tool_call, listeners=[gate.listener])
    task = asyncio.ensure_future(agent.prompt("go", run=config))
    nexts = 0
    while not panel.snapshot["approvals"]:  # click Next until the question is asked
        await panel.wait_for(lambda p: p.step_held is not None or bool(p.snapshot["approvals"]))
        if panel.step_held is not None:
            panel.handle_message({"type": "next"})
            nexts += 1
            await panel.wait_for(lambda p: p.step_held is None or bool(p.snapshot["approvals"]))
    assert nexts > 0
    panel.handle_message(
        {"type": "approval", "tool_call_id": "held", "approved": False, "answer": "stop"}
    )
    await asyncio.wait_for(task, 10)  # no Next clicked after the answer
    assert panel.snapshot["status"]["state"] == "aborted"
    assert panel.step_held is None
    panel.finish()


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


async def test_a_secret_in_the_arguments_never_reaches_the_approval_box() -> None:
    """The tool card's arguments are redacted; the approval box's summary and arguments were
    sent to the widget as the model wrote them (found while screenshotting the box)."""
    key = "sk-proj-" + "Q1w2E3r4" * 6
    provider = faux(
        [
            faux_assistant_message(
                [faux_tool_call("echo", {"text": f"key={key}"}, id="k")], stop_reason="toolUse"
            ),
            faux_assistant_message("done"),
        ]
    )
    agent = Agent(model=provider.get_model(), tools=[echo])
    panel = CapturePanel()
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    gate = ApprovalGate(
        "all", preferring_programmatic(panel.request_approval), allowed=set(), stop=agent.abort
    )
    config = RunConfig(before_tool_call=gate.before_tool_call, listeners=[gate.listener])
    task = asyncio.ensure_future(agent.prompt("go", run=config))
    await panel.wait_for(lambda p: bool(p.snapshot["approvals"]))
    (card,) = panel.snapshot["approvals"]
    assert "echo" in card["summary"] and "key=" in card["args_text"]
    assert key not in str(card), card
    assert key[:12] not in str(card)  # nor the start of it, in the cut summary
    assert key not in str(panel.snapshot)
    panel.handle_message({"type": "approval", "tool_call_id": "k", "approved": False})
    await asyncio.wait_for(task, 10)
    panel.finish()
