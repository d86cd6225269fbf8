"""Always allow and Deny and stop in a real kernel, answered from the panel's comm as its view
answers them.

Always allow: the call runs, later calls of that tool (in this cell and the next) run without a
card and their cards say "allowed (always allow add)"; ``%agent status`` lists the tool; a cell's
``--approve`` and ``%agent reset`` forget it. Deny and stop: the run ends at once (``agent_end``:
the panel's state is ``aborted``, its run node closed, no later call asked or run), a follow-up
queued during the run stays queued, and the next cell works on the same conversation. In plain
mode (no panel) an approver set with ``set_approver`` gives the same answers; ``--new`` starts
without the tools always allowed.
"""

from __future__ import annotations

import html
from typing import Any

from .conftest import Kernel
from .test_panel_kernel import PanelClient, run_cell

SETUP = """
from pi_notebook.agent import AgentTool
from pi_notebook.agent.types import AgentToolResult
from pi_notebook.ai import TextContent
from pi_notebook.ai.faux import faux_tool_call

added = []

async def _add(tool_call_id, params, signal, on_update):
    added.append(tool_call_id)
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

def calls(*ids):
    return after_view(faux_assistant_message(
        [faux_tool_call("add", {"a": 1, "b": 2}, id=i) for i in ids], stop_reason="toolUse"
    ))

pa = register_faux_provider(token_size=(1, 1))
pn.use_model(pa)
%agent reset
"""


class Answering(PanelClient):
    """A view that answers each approval card from ``answers`` (tool call id -> the message's
    fields; anything else is an error) and remembers which cards it saw."""

    def __init__(self, kernel: Kernel, answers: dict[str, dict[str, Any]]) -> None:
        super().__init__(kernel, self._answer)
        self.answers = answers
        self.asked: list[str] = []

    @staticmethod
    def _answer(client: PanelClient) -> None:
        assert isinstance(client, Answering) and client.state is not None
        for card in client.state["approvals"]:
            call = card["tool_call_id"]
            if call not in client.asked:
                client.asked.append(call)
                message = client.answers.get(call, {"approved": False})
                client.send({"type": "approval", "tool_call_id": call, **message})

    def static(self) -> str:
        return html.unescape(self.updates[-1]["text/html"])


def respond(kernel: Kernel, *steps: str) -> None:
    kernel.ok(f"pa.set_responses([{', '.join(steps)}])")


def status(kernel: Kernel) -> str:
    return kernel.ok("%agent status").stdout


ALWAYS = {"approved": True, "answer": "always"}
LISTED = "always allowed: add (until %agent reset or --approve)"


def test_always_allow_runs_later_calls_without_a_card_until_approve_or_reset(
    ui_kernel: Kernel,
) -> None:
    ui_kernel.ok(SETUP)
    respond(ui_kernel, 'calls("a1")', 'calls("a2", "a3")', 'faux_assistant_message("one")')
    client = Answering(ui_kernel, {"a1": ALWAYS})
    assert run_cell(ui_kernel, "%%agent --tools add --approve all\nAdd.", client) == "ok"
    assert client.asked == ["a1"], "a2 and a3 ran without a card"
    assert client.state is not None
    tools = client.state["tools"]
    assert [tools[i]["status"] for i in ("a1", "a2", "a3")] == ["done"] * 3
    assert tools["a2"]["approval"] == "allowed (always allow add)"
    static = client.static()
    assert "Approval: approved by the user: always allow add (this conversation)" in static
    assert static.count("Approval: allowed (always allow add)") == 2
    assert LISTED in status(ui_kernel)

    # The next cell (no --approve: the policy stays): still no card.
    respond(ui_kernel, 'calls("b1")', 'faux_assistant_message("two")')
    client = Answering(ui_kernel, {})
    assert run_cell(ui_kernel, "%%agent\nAgain.", client) == "ok"
    assert client.asked == [] and "Approval: allowed (always allow add)" in client.static()
    assert ui_kernel.ok("print(added)").stdout.strip() == "['a1', 'a2', 'a3', 'b1']"

    # A cell's --approve states the policy afresh: asked again (and allowed always again).
    respond(ui_kernel, 'calls("c1")', 'faux_assistant_message("three")')
    client = Answering(ui_kernel, {"c1": ALWAYS})
    assert run_cell(ui_kernel, "%%agent --approve all\nOnce more.", client) == "ok"
    assert client.asked == ["c1"]
    assert LISTED in status(ui_kernel)

    # %agent reset forgets it too.
    ui_kernel.ok("%agent reset")
    after = status(ui_kernel)
    assert "always allowed" not in after
    assert "approvals: all (asks before every tool call)" in after
    respond(ui_kernel, 'calls("d1")', 'faux_assistant_message("four")')
    client = Answering(ui_kernel, {"d1": {"approved": True}})
    assert run_cell(ui_kernel, "%%agent\nAnd again.", client) == "ok"
    assert client.asked == ["d1"]
    assert "Approval: approved by the user" in client.static()
    assert "always allowed" not in status(ui_kernel)


def test_deny_and_stop_ends_the_run_at_once_and_the_next_cell_works(ui_kernel: Kernel) -> None:
    ui_kernel.ok(SETUP)
    respond(
        ui_kernel,
        'calls("s1")',
        'calls("s2", "s3")',
        'faux_assistant_message("after the stop")',
        'faux_assistant_message("the follow-up answered")',
    )
    client = Answering(ui_kernel, {"s1": {"approved": True}})
    stop = {"approved": False, "answer": "stop"}

    def queue_then_stop(view: PanelClient) -> None:  # a follow-up typed while asked
        assert view.state is not None
        if (
            "s2" in [c["tool_call_id"] for c in view.state["approvals"]]
            and "s2" not in client.asked
        ):
            view.send({"type": "followup", "text": "later please"})
            client.answers["s2"] = stop
        Answering._answer(view)

    client.on_frame = queue_then_stop
    assert run_cell(ui_kernel, "%%agent --tools add --approve all\nAdd.", client) == "ok"
    assert client.asked == ["s1", "s2"], "s3 is never asked about"
    assert ui_kernel.ok("print(added)").stdout.strip() == "['s1']", "nothing ran after the stop"
    state = client.state
    assert state is not None and client.gaps == 0
    assert state["status"]["state"] == "aborted"  # set by agent_end
    assert state["status"]["note"] == "you denied add and stopped the run"
    (run,) = [n for n in state["lifecycle"] if n["kind"] == "run"]
    assert run["end"] is not None
    assert state["tools"]["s2"]["approval"] == "denied and stopped by the user"
    assert state["tools"]["s3"]["status"] == "aborted"
    assert state["approvals"] == []
    static = client.static()
    assert "Approval: denied and stopped by the user" in static
    assert "after the stop" not in static
    assert "later please" in static  # the queue box: still queued for the next cell
    after = status(ui_kernel)
    assert "queued: 0 steering, 1 follow-up" in after
    assert "last run: 2 turns, no limits; stopped: you denied add and stopped the run" in after

    # The next cell runs on the same conversation (and delivers the follow-up).
    client = Answering(ui_kernel, {})
    assert run_cell(ui_kernel, "%%agent\nWhat now?", client) == "ok"
    assert client.asked == []
    static = client.static()
    assert "after the stop" in static and "the follow-up answered" in static
    roles = ui_kernel.ok("print([m.role for m in pn.session().default.state.messages])").stdout
    # s3 never ran and has no result (as after an Abort; providers answer it at request time).
    first = ["user", "assistant", "toolResult", "assistant", "toolResult"]
    assert roles.strip() == str([*first, "user", "assistant", "user", "assistant"])


PLAIN_SETUP = """
import pi_notebook.notebook as pn
import pi_notebook.tools as pt
from pi_notebook.ai import faux_assistant_message, register_faux_provider
from pi_notebook.ai.faux import faux_tool_call

asked = []

async def approver(request, signal):
    asked.append(request.tool_call_id)
    return answers.pop(0)

def calls(*ids):
    return faux_assistant_message(
        [faux_tool_call("run_python", {"code": f"{i} = 1"}, id=i) for i in ids],
        stop_reason="toolUse",
    )

pp = register_faux_provider(token_size=(1, 1))
pn.use_model(pp)
pt.set_approver(approver)
%agent reset
"""


def test_an_approver_of_your_own_answers_always_and_stop_in_plain_mode(kernel: Kernel) -> None:
    """Plain mode has no approval prompt; an approver set with ``set_approver`` gives the same
    answers as the panel's buttons."""
    kernel.ok(PLAIN_SETUP)
    kernel.ok(
        'answers = ["always", "stop"]\n'
        'pp.set_responses([calls("x1"), calls("x2"), faux_assistant_message("ran both"),'
        ' calls("y1"), faux_assistant_message("not sent"), faux_assistant_message("fresh")])'
    )
    first = kernel.ok("%%agent --tools notebook --approve writes\nSet two.").stdout
    assert "assistant: ran both" in first
    assert kernel.ok("print(asked, x1, x2)").stdout == "['x1'] 1 1\n"
    assert LISTED.replace("add", "run_python") in status(kernel)
    # --new starts a conversation without the answers (it keeps the policy): asked, and stopped.
    stopped = kernel.ok("%%agent --new\nOne more.").stdout
    assert "tool run_python (error): denied and stopped by the user" in stopped
    assert "not sent" not in stopped
    assert kernel.ok("print(asked, 'y1' in dir())").stdout == "['x1', 'y1'] False\n"
    after = status(kernel)
    assert "always allowed" not in after
    assert "; stopped: you denied run_python and stopped the run" in after
    # The conversation goes on.
    assert "assistant: not sent" in kernel.ok("%%agent\nWell?").stdout
    kernel.ok("pt.set_approver(None)")
