"""The quickstart notebook, opened and run in the browser as a user would.

The notebook is checked by nbval with its saved outputs; here the same outputs must appear
when it runs in JupyterLab and Notebook 7 (its folder is copied, so recordings next to it are
found).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .driver import Notebook, import_playwright
from .server import JupyterServer

expect = import_playwright().expect

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
QUICKSTART = NOTEBOOKS / "quickstart.ipynb"


def _streams(outputs: list[dict[str, Any]]) -> str:
    parts = []
    for out in outputs:
        if out.get("output_type") == "stream":
            text = out["text"]
            parts.append(text if isinstance(text, str) else "".join(text))
    return _without_settings("".join(parts))


def _without_settings(text: str) -> str:
    """``%agent status`` without its settings and notebook-context lines: they name the
    environment variables set away from their defaults, and the stored outputs come from a
    plain-mode kernel outside a notebook server (``PI_NOTEBOOK_UI=plain``; no
    ``JPY_SESSION_NAME``; the notebook context on), unlike this one."""
    lines = text.splitlines(keepends=True)
    kept, skipping = [], False
    for line in lines:
        if line.startswith("notebook context:"):  # off here (tests/browser/server.py)
            continue
        if line.startswith("settings"):
            skipping = line.rstrip().endswith(":")  # a block of indented lines follows
            continue
        if skipping and line.startswith("  "):
            continue
        skipping = False
        kept.append(line)
    return "".join(kept)


def _code_cell(source: str) -> dict[str, Any]:
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": [],
            "execution_count": None}  # fmt: skip


def test_quickstart_runs_in_the_browser(nb: Notebook, server: JupyterServer) -> None:
    notebook = json.loads(QUICKSTART.read_text(encoding="utf-8"))
    saved = notebook["cells"]
    folder = server.copy_in(NOTEBOOKS)
    # The stored outputs were made with the notebook context on, as a user has it; this
    # server's kernels run with it off (server.py): a first cell turns it back on.
    notebook["cells"] = [_code_cell("%env PI_NOTEBOOK_CONTEXT=on"), *saved]
    copy = server.root / folder / QUICKSTART.name
    copy.write_text(json.dumps(notebook), encoding="utf-8")
    nb.open(f"{folder}/{QUICKSTART.name}")
    nb.run_all()
    nb.snap("quickstart-done")

    assert nb.errors() == []
    agent_cells = 0
    for saved_index, cell in enumerate(saved):
        if cell["cell_type"] != "code":
            continue
        index = saved_index + 1  # after the cell that turned the context on
        assert nb.execution_count(index) is not None, index
        expected = _streams(cell["outputs"])
        assert _streams(nb.cell_outputs(index)) == expected, (index, cell["source"])
        source = "".join(cell["source"])
        if source.startswith("%%agent") and expected:
            agent_cells += 1
            # What the user sees: the transcript's first lines in the cell's output area.
            for line in expected.splitlines()[:2]:
                expect(nb.output(index)).to_contain_text(line.strip())
    assert agent_cells >= 2
    assert nb.serious_page_errors() == []
