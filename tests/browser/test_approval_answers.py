"""Always allow and Deny and stop, clicked in the panel's approval box (JupyterLab and
Notebook 7): what the user sees live, in the static transcript the run leaves, and in the saved
notebook reopened without a kernel.

As in ``test_panel.py``, the notebook scripts a faux model; every step waits on the page.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .driver import Notebook, import_playwright, write_notebook
from .server import JupyterServer
from .test_panel import SETUP, TOOL_SETUP, _assert_clean, _panel

expect = import_playwright().expect

RESPONSES = """[
    faux_assistant_message(
        faux_tool_call("slow_add", {"a": 1, "b": 2}, id="asked"), stop_reason="toolUse"),
    faux_assistant_message(
        faux_tool_call("slow_add", {"a": 3, "b": 4}, id="allowed"), stop_reason="toolUse"),
    faux_assistant_message("Both added."),
    faux_assistant_message([
        faux_tool_call("slow_add", {"a": 5, "b": 6}, id="stopped"),
        faux_tool_call("slow_add", {"a": 7, "b": 8}, id="never"),
    ], stop_reason="toolUse"),
    faux_assistant_message("Asked again after the stop."),
]"""

ALWAYS_LINE = "Approval: approved by the user: always allow slow_add (this conversation)"
ALLOWED_LINE = "Approval: allowed (always allow slow_add)"
STOPPED_LINE = "Approval: denied and stopped by the user"


@pytest.mark.notebook7
def test_always_allow_and_deny_and_stop(nb: Notebook, workdir: Path, server: JupyterServer) -> None:
    setup = SETUP.format(tps=None) + TOOL_SETUP + f"faux.set_responses({RESPONSES})\n"
    name = write_notebook(
        workdir / "approval-answers.ipynb",
        [
            setup,
            "%%agent --model faux --tools slow_add --approve all\nAdd twice.",
            "%agent status",
            "%%agent --model faux --approve all\nAdd once more.",
            "%%agent --model faux\nAnd now?",
        ],
    )
    nb.open(name)
    nb.start_run_all()

    # Cell 1: the first call asks; "Always allow slow_add" runs it and the next one unasked.
    first = _panel(nb, 1)
    ask = first.locator('.pi-approval[data-tool-call-id="asked"]')
    expect(ask.locator("button")).to_have_text(
        ["Approve", "Always allow slow_add", "Deny", "Deny and stop"]
    )
    nb.snap("approval-four-answers", first)
    ask.locator("button.pi-always").click()
    expect(ask).to_have_count(0)
    live_card = first.locator('.pi-tool-card[data-tool-call-id="allowed"]')
    expect(live_card.locator(".pi-tool-approval")).to_have_text(ALLOWED_LINE)
    expect(live_card).to_have_attribute("data-status", "done")
    static = nb.output(1).locator(".pi-panel.pi-static")
    expect(static).to_have_attribute("data-state", "done")
    expect(static.locator('[data-tool-call-id="asked"] .pi-tool-approval')).to_have_text(
        ALWAYS_LINE
    )
    expect(static.locator('[data-tool-call-id="allowed"] .pi-tool-approval')).to_have_text(
        ALLOWED_LINE
    )
    expect(static.locator(".pi-approval")).to_have_count(0)  # never asked about "allowed"
    expect(nb.output(2)).to_contain_text(
        "always allowed: slow_add (until %agent reset or --approve)"
    )

    # Cell 3: --approve asks afresh; "Deny and stop" ends the run at once.
    third = _panel(nb, 3)
    ask = third.locator('.pi-approval[data-tool-call-id="stopped"]')
    expect(ask).to_be_visible()
    ask.locator("button.pi-deny-stop").click()
    static = nb.output(3).locator(".pi-panel.pi-static")
    expect(static).to_have_attribute("data-state", "aborted")
    stopped = static.locator('.pi-tool-card[data-tool-call-id="stopped"]')
    expect(stopped.locator(".pi-tool-approval")).to_have_text(STOPPED_LINE)
    expect(static.locator('.pi-tool-card[data-tool-call-id="never"]')).to_have_attribute(
        "data-status", "aborted"
    )
    expect(static.locator(".pi-status .pi-note")).to_contain_text(
        "you denied slow_add and stopped the run"
    )
    expect(static).not_to_contain_text("Asked again after the stop.")
    nb.snap("deny-and-stop", static)

    # Cell 4: the conversation goes on.
    nb.wait_run_done()
    answer = nb.output(4).locator(".pi-panel.pi-static .pi-message[data-role=assistant]").last
    expect(answer).to_contain_text("Asked again after the stop.")
    nb.save()
    _assert_clean(nb)

    # The saved notebook, reopened without a kernel, says the same.
    nb.reopen(between=server.shutdown_kernels)
    saved = nb.output(1).locator(".pi-panel.pi-static")
    expect(saved.locator('[data-tool-call-id="allowed"] .pi-tool-approval')).to_have_text(
        ALLOWED_LINE
    )
    saved = nb.output(3).locator(".pi-panel.pi-static")
    expect(saved.locator('[data-tool-call-id="stopped"] .pi-tool-approval')).to_have_text(
        STOPPED_LINE
    )
    nb.snap("deny-and-stop-reopened", saved)
    _assert_clean(nb)
