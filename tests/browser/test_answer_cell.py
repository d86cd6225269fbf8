"""Issue 27.4 in the browser: "insert as cell" on a code block of the agent's answer.

In JupyterLab and Notebook 7 the live panel puts a button on each Python block of an ended
answer; a click makes a new code cell below the ``%%agent`` cell holding that block under a
header saying it has not run (``%agent code --answer``'s rules, one block). The run is held by
step mode so the live panel is still there to click (the finished run becomes the static
transcript); nothing sleeps: each step waits on the step bar's ``data-count``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_notebook.notebook.answer_code import BLOCK_HEADER

from .driver import Notebook, write_notebook
from .test_code_cell import _CELLS
from .test_panel import _assert_clean, _panel, expect

ANSWER = (
    "The column is lower case:\n\n```python\nmeans = df['bmi'].mean()\nprint(means)\n```\n\n"
    "List the files with\n\n```bash\nls data/\n```\n"
)
SETUP = f"""\
%load_ext pi_notebook
from pi_notebook.ai import faux_assistant_message, register_faux_provider
faux = register_faux_provider(token_size=(4, 4))
faux.set_responses([faux_assistant_message({ANSWER!r})])
"""
AGENT = "%%agent --model faux --step\nWhy did the cell above fail?"


def _cells(nb: Notebook) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = nb.page.evaluate(_CELLS)
    return cells


@pytest.mark.notebook7
def test_insert_as_cell_puts_an_answers_block_below_the_agent_cell(
    nb: Notebook, workdir: Path
) -> None:
    nb.open(write_notebook(workdir / "answer_cell.ipynb", [SETUP, AGENT]))
    nb.start_run_all()
    panel = _panel(nb)
    bar = panel.locator(".pi-step")
    insert = panel.locator(".pi-message[data-role=assistant] button.pi-insert-cell")
    holds = 0
    while True:  # step to the first hold after the answer ended
        holds += 1
        expect(bar).to_have_attribute("data-count", str(holds))
        if insert.count():
            break
        assert bar.get_attribute("data-held") != "agent_end", "the answer never got a button"
        bar.locator("button.pi-next").click()
    expect(insert).to_have_count(1)  # the Python block; the bash one gets none
    expect(insert).to_have_text("insert as cell")
    nb.snap("answer-block-button", panel)
    insert.click()
    expect(insert).to_have_text("inserted below the %%agent cell")
    cells = _cells(nb)
    assert [c["source"] for c in cells[:2]] == [SETUP, AGENT]
    assert cells[2] == {
        "type": "code",
        "source": f"{BLOCK_HEADER}\nmeans = df['bmi'].mean()\nprint(means)\n",
        "count": None,  # inserted, not run
    }
    nb.snap("answer-block-inserted", nb.cell(2))
    bar.locator("button.pi-run-to-end").click()
    nb.wait_run_done()
    cells = _cells(nb)
    assert len(cells) == 3 and cells[2]["source"].startswith(BLOCK_HEADER)
    expect(nb.output(1).locator(".pi-panel.pi-static")).to_have_count(1)
    _assert_clean(nb)
