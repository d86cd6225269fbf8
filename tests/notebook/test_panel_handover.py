"""What the user types in the panel outlives the run, and Interrupt & send (issue 16.3, 16.8),
in a real kernel with the interactive UI, its front end played by a :class:`PanelClient`.

Synchronisation is on the panel's frames and the kernel's messages, never on sleeps.
"""

from __future__ import annotations

from typing import Any

from .conftest import Kernel
from .test_panel_kernel import PanelClient, run_cell, script


def test_an_unsent_draft_becomes_the_next_cells_follow_up(ui_kernel: Kernel) -> None:
    script(ui_kernel, "h1", ["first " * 60, "second answer", "about the draft"], tps=400)
    client = PanelClient(ui_kernel)
    client.draft = "  and what about the outliers?  "  # typed, never sent, when the run ends
    assert run_cell(ui_kernel, "%%agent --no-tools --approve none\nOne", client) == "ok"
    assert [f["type"] for _, f in client.frames].count("closing") == 1
    static = client.updates[-1]
    assert "and what about the outliers?" in static["text/html"]
    assert "Queued for the next %%agent cell" in static["text/html"]
    assert "queued as a follow-up for the next %%agent cell" in static["text/html"]
    status = ui_kernel.ok("%agent status").stdout
    assert "queued: 0 steering, 1 follow-up\n  follow-up: and what about the outliers?" in status
    # The next cell answers its own prompt, then the draft.
    nxt = PanelClient(ui_kernel)
    assert run_cell(ui_kernel, "%%agent\nTwo", nxt) == "ok"
    history = ui_kernel.ok("%agent history").stdout
    assert history.endswith(
        "user: Two\nassistant: second answer\n"
        "user: and what about the outliers?\nassistant: about the draft\n"
    )
    assert "queued: 0 steering, 0 follow-up" in ui_kernel.ok("%agent status").stdout


def test_a_steer_sent_as_the_run_closes_goes_to_the_next_prompt(ui_kernel: Kernel) -> None:
    script(ui_kernel, "h2", ["done " * 60, "next one"], tps=400)

    class LateClient(PanelClient):
        def _frame(self, frame: dict[str, Any]) -> None:
            if frame["type"] == "closing":  # clicked Steer just as the run ended
                self.send({"type": "steer", "text": "late steer"})
            super()._frame(frame)

    client = LateClient(ui_kernel)
    assert run_cell(ui_kernel, "%%agent\nGo", client) == "ok"
    assert "late steer" in client.updates[-1]["text/html"]
    nxt = PanelClient(ui_kernel)
    assert run_cell(ui_kernel, "%%agent\nAnd now", nxt) == "ok"
    assert ui_kernel.ok("%agent history").stdout.endswith(
        "user: And now\nuser: late steer\nassistant: next one\n"
    )


def test_interrupt_and_send_stops_the_answer_and_sends_at_once(ui_kernel: Kernel) -> None:
    script(ui_kernel, "h3", ["long " * 400, "right away"], tps=100)
    sent: list[bool] = []

    def on_frame(client: PanelClient) -> None:
        assert client.state is not None
        if not sent and "long long" in client.text():
            sent.append(True)
            client.send({"type": "interrupt_send", "text": "Stop: answer this instead"})

    client = PanelClient(ui_kernel, on_frame)
    assert run_cell(ui_kernel, "%%agent\nTalk", client) == "ok"
    assert sent and client.state is not None
    # One cell, one panel: the aborted answer is kept, then the message, then its answer.
    messages = client.state["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[1]["stop_reason"] == "aborted"
    assert "Stop: answer this instead" in messages[2]["html"]
    assert messages[3]["stop_reason"] == "stop"
    assert client.state["status"]["state"] == "done"
    assert client.closed == [client.comm_id]
    runs = [n for n in client.state["lifecycle"] if n["kind"] == "run"]
    assert len(runs) == 2, "two runs of the same conversation in the same panel"
    assert ui_kernel.ok("print(_agent_reply)").stdout == "right away\n"
    history = ui_kernel.ok("%agent history").stdout
    assert "assistant [aborted]" in history and history.endswith(
        "user: Stop: answer this instead\nassistant: right away\n"
    )


APPROVAL_TOOL = """
from pi_notebook.agent import AgentTool, AgentToolResult
from pi_notebook.ai import TextContent
from pi_notebook.ai.faux import faux_tool_call

async def _touch(tool_call_id, params, signal, on_update):
    return AgentToolResult(content=[TextContent(text="touched")])

touch = AgentTool(name="touch", description="t", parameters={"type": "object"}, execute=_touch)
h4 = register_faux_provider(token_size=(1, 1))
h4.set_responses([
    faux_assistant_message(faux_tool_call("touch", {}, id="t1"), stop_reason="toolUse"),
    faux_assistant_message("ok"),
])
pn.use_model(h4)
%agent reset
import os
os.environ["PI_NOTEBOOK_APPROVAL_TIMEOUT"] = "0.2"
"""


def test_panel_mode_without_a_front_end_refuses_an_approval_after_the_timeout(
    ui_kernel: Kernel,
) -> None:
    ui_kernel.ok(APPROVAL_TOOL)
    try:
        # No view ever attaches (nobody says hello): the approval cannot be answered.
        reply, messages = ui_kernel.run_raw("%%agent --tools touch --approve all\nTouch it")
    finally:
        ui_kernel.ok("del os.environ['PI_NOTEBOOK_APPROVAL_TIMEOUT']")
        ui_kernel.ok("%%agent --no-tools --approve none\nclean up")
    assert reply["content"]["status"] == "ok"
    updates = [m["content"]["data"] for m in messages if m["msg_type"] == "update_display_data"]
    static = updates[-1]["text/plain"]
    assert "tool touch (error): approval required (--approve all) but nobody answered" in static
    assert "no answer to the approval of touch within 0.2 seconds" in updates[-1]["text/html"]
