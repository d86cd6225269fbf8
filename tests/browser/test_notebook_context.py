"""The notebook context and run_python's figures in the panel, in JupyterLab and Notebook 7.

A cell fails (``KeyError: 'BMI'``), then an ``%%agent`` cell asks why: the panel starts the
turn with a collapsed "notebook context" entry that opens to the failing cell and its error.
The agent's ``run_python`` call plots with matplotlib and displays a DataFrame: the figure and
the table are in that call's card, live (the run waits on an approval meanwhile), in the static
transcript the cell keeps, and after the notebook is saved and reopened without a kernel. The
browser kernels run with the notebook context off (server.py): the first cell turns it on.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .driver import Notebook, import_playwright, write_notebook
from .server import JupyterServer

if TYPE_CHECKING:
    from playwright.sync_api import Locator

expect = import_playwright().expect

PLOT = (
    "import matplotlib.pyplot as plt\\nimport pandas as pd\\n"
    "from IPython.display import display\\n"
    "fig, ax = plt.subplots(figsize=(3, 2))\\nax.plot([0, 1, 2], [3, 1, 2])\\n"
    "ax.set_title('bmi by visit')\\nplt.show()\\n"
    "display(pd.DataFrame({'visit': [1, 2], 'bmi': [21.5, 30.1]}))"
)

SETUP = f"""\
%env PI_NOTEBOOK_CONTEXT=on
%load_ext pi_notebook
from pi_notebook.agent import AgentTool, AgentToolResult
from pi_notebook.ai import (
    TextContent, faux_assistant_message, faux_tool_call, register_faux_provider,
)

async def _done(tool_call_id, params, signal, on_update):
    return AgentToolResult(content=[TextContent(text="noted")])

note = AgentTool(name="note", description="Note it.", parameters={{"type": "object"}},
                 execute=_done)
faux = register_faux_provider(token_size=(1, 1))
faux.set_responses([
    faux_assistant_message(
        faux_tool_call("run_python", {{"code": "{PLOT}"}}, id="call_plot"),
        stop_reason="toolUse",
    ),
    faux_assistant_message(faux_tool_call("note", {{}}, id="call_note"), stop_reason="toolUse"),
    faux_assistant_message("The frame has no 'BMI' column: it is spelled 'bmi'."),
])
"""

AGENT = (
    "%%agent --model faux --tools notebook,note --approve all --no-code-cell\n"
    "why did the cell above fail?"
)


def _context_notebook(workdir: Path) -> str:
    """Set-up, a cell that defines data, one that fails on it (tagged ``raises-exception`` so
    Run All goes on), the agent cell."""
    path = workdir / "context.ipynb"
    write_notebook(path, [SETUP, "df = {'age': [50, 61]}", "df['BMI']", AGENT])
    notebook = json.loads(path.read_text(encoding="utf-8"))
    notebook["cells"][2]["metadata"]["tags"] = ["raises-exception"]
    path.write_text(json.dumps(notebook, indent=1) + "\n", encoding="utf-8")
    return path.name


def _check_context(root: Locator) -> None:
    """The entry is collapsed at the start of the turn; opened, it shows the failing cell."""
    entry = root.locator(".pi-message").first.locator("details.pi-nbcontext")
    expect(entry).to_have_count(1)
    expect(entry).not_to_have_attribute("open", "")
    summary = entry.locator("summary")
    expect(summary).to_have_text("notebook context: 3 cells, 1 error (KeyError)")
    error = entry.locator(".pi-nbcell-error")
    expect(error).to_be_hidden()
    summary.click()
    expect(error).to_be_visible()
    expect(error).to_contain_text("KeyError: 'BMI'")
    expect(entry.locator(".pi-nbcell-source").last).to_have_text("df['BMI']")


def _check_card(root: Locator) -> None:
    """The run_python card holds the figure (a decoded PNG) and the DataFrame's table."""
    card = root.locator('.pi-tool-card[data-tool-call-id="call_plot"]')
    expect(card).to_have_attribute("data-status", "done")
    image = card.locator(".pi-tool-result img.pi-image")
    expect(image).to_have_count(1)
    expect(image).to_have_attribute("src", re.compile(r"^data:image/png;base64,"))
    width = image.evaluate("(img) => img.decode().then(() => img.naturalWidth)")
    assert width > 100, width
    table = card.locator(".pi-tool-result .pi-tool-display table")
    expect(table.locator("thead th")).to_have_text(["", "visit", "bmi"])
    expect(table.locator("tbody td").last).to_have_text("30.1")
    expect(card).to_contain_text("a figure was drawn: 1 axes, 1 lines, titled 'bmi by visit'")


@pytest.mark.notebook7
def test_the_context_entry_and_a_figure_in_its_card_live_static_and_reopened(
    nb: Notebook, workdir: Path, server: JupyterServer
) -> None:
    nb.open(_context_notebook(workdir))
    nb.start_run_all()
    live = nb.output(3).locator(".pi-panel:not(.pi-static)")
    # Live: the run waits for the second call's approval, the first call's card is done.
    ask = live.locator('.pi-approval[data-tool-call-id="call_plot"]')
    ask.locator("button.pi-approve").click()
    expect(live.locator('.pi-approval[data-tool-call-id="call_note"]')).to_be_visible()
    _check_context(live)
    _check_card(live)
    nb.snap("context-live", live)
    live.locator('.pi-approval[data-tool-call-id="call_note"] button.pi-approve').click()
    nb.wait_run_done()
    static = nb.output(3).locator(".pi-panel.pi-static")
    expect(static).to_have_attribute("data-state", "done")
    _check_context(static)
    _check_card(static)
    nb.snap("context-static", static)
    # Nothing of the agent's code showed below the cells: only the failing cell's error.
    assert [e["ename"] for e in nb.errors()] == ["KeyError"]
    assert not any(
        "image/png" in out.get("data", {}) for i in range(4) for out in nb.cell_outputs(i)
    )
    nb.save()
    assert nb.serious_page_errors() == []
    # Reopened without the kernel (and without saved widget state, Jupyter's default).
    nb.reopen(between=server.shutdown_kernels)
    reopened = nb.output(3).locator(".pi-panel.pi-static")
    expect(reopened).to_have_attribute("data-state", "done", timeout=3_000)
    _check_context(reopened)
    _check_card(reopened)
    nb.snap("context-reopened", reopened)
    assert nb.serious_page_errors() == []
    # As a colleague gets it (saved elsewhere: untrusted, so Jupyter's sanitizer drops the
    # <style> and the data-* attributes): the entry still opens to the error, the card still
    # holds the figure and the table.
    shared = json.loads((workdir / "context.ipynb").read_text(encoding="utf-8"))
    shared["metadata"]["shared_by"] = "a colleague"
    (workdir / "context-shared.ipynb").write_text(json.dumps(shared), encoding="utf-8")
    nb.open("context-shared.ipynb")
    sanitized = nb.output(3).locator(".pi-panel.pi-static")
    entry = sanitized.locator("details.pi-nbcontext")
    expect(entry.locator("summary")).to_have_text("notebook context: 3 cells, 1 error (KeyError)")
    entry.locator("summary").click()
    expect(entry.locator(".pi-nbcell-error")).to_contain_text("KeyError: 'BMI'")
    card = sanitized.locator(".pi-tool-card").first
    expect(card.locator(".pi-tool-display table tbody td").last).to_have_text("30.1")
    expect(card.locator("img.pi-image")).to_have_count(1)
    nb.snap("context-untrusted", sanitized)
