"""Issue 19 in the browser: the agent's code lands in a new cell below the ``%%agent`` cell.

In JupyterLab and Notebook 7 the ``set_next_input`` payload of the ``%%agent`` cell's reply
becomes a new code cell right below it, holding the run's code; after a kernel restart that
cell alone recreates the variables the agent made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_notebook.notebook.code_cell import CELL_HEADER

from .driver import RUN_TIMEOUT, Notebook, import_playwright, write_notebook

expect = import_playwright().expect

SETUP = """\
%load_ext pi_notebook
from pi_notebook.ai import faux_assistant_message as reply, faux_tool_call as call
from pi_notebook.ai import register_faux_provider

faux = register_faux_provider(token_size=(4, 4))
faux.set_responses([
    reply([call('run_python', {'code': 'import math\\nradii = [1, 2, 3]\\n'
                                       'areas = [round(math.pi * r * r, 2) for r in radii]'},
                id='call_code')], stop_reason='toolUse'),
    reply([call('set_variable', {'name': 'unit', 'expression': '"cm2"'}, id='call_unit'),
           call('set_variable', {'name': 'total', 'expression': 'sum(areas)'}, id='call_total')],
          stop_reason='toolUse'),
    reply('The areas are in `areas`, their sum in `total`.'),
])
"""

AGENT = "%%agent --model faux --tools notebook\nCompute the areas of circles of radius 1, 2, 3."

EXPECTED = f"""{CELL_HEADER}

# run_python (call 1)
import math
radii = [1, 2, 3]
areas = [round(math.pi * r * r, 2) for r in radii]

# set_variable (call 2)
unit = "cm2"

# set_variable (call 3)
total = 43.980000000000004  # sum(areas)
"""

_CELLS = """() => {
    const cells = window.__piNotebook.content.model.cells;
    const out = [];
    for (let i = 0; i < cells.length; i++) {
        const cell = cells.get(i);
        out.push({type: cell.type, source: cell.sharedModel.getSource(),
                  count: cell.type === 'code' ? cell.executionCount : null});
    }
    return out;
}"""

_RESTART = """async () => {
    const w = window.__piNotebook;
    await w.sessionContext.session.kernel.restart();
}"""

_RUN_CELL = """async (index) => {
    const w = window.__piNotebook;
    w.content.activeCellIndex = index;
    await window.jupyterapp.commands.execute('notebook:run-cell');
}"""

_EVALUATE = """async (code) => {
    const kernel = window.__piNotebook.sessionContext.session.kernel;
    const future = kernel.requestExecute({code, store_history: false});
    let text = '';
    future.onIOPub = (msg) => {
        if (msg.header.msg_type === 'stream') text += msg.content.text;
        if (msg.header.msg_type === 'error') text += 'ERROR ' + msg.content.ename;
    };
    await future.done;
    return text;
}"""

_KERNEL_IDLE = """() => {
    const kernel = window.__piNotebook.sessionContext.session.kernel;
    return kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}"""

CHECK = "import json; print(json.dumps([radii, areas, unit, total, 'faux' in globals()]))"


def _cells(nb: Notebook) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = nb.page.evaluate(_CELLS)
    return cells


def test_the_code_lands_in_a_new_cell_that_recreates_the_variables(
    nb: Notebook, workdir: Path
) -> None:
    after = "print('the cell after the agent cell ran')"
    nb.open(write_notebook(workdir / "code_cell.ipynb", [SETUP, AGENT, after]))
    nb.run_all()
    cells = _cells(nb)
    assert [c["type"] for c in cells] == ["code"] * 4, cells
    assert cells[1]["source"] == AGENT and cells[3]["source"] == after
    assert cells[3]["count"] is not None  # Run All went on with the notebook's own cells
    new = cells[2]
    assert new["source"] == EXPECTED  # exactly the payload's text
    assert new["count"] is None  # offered, not run
    expect(nb.cell(2)).to_contain_text("set_variable (call 3)")
    agent_values = json.loads(nb.page.evaluate(_EVALUATE, CHECK))
    assert agent_values[:4] == [[1, 2, 3], [3.14, 12.57, 28.27], "cm2", 43.980000000000004]
    nb.snap("code-cell-offered", nb.cell(2))

    # A fresh kernel: only the new cell runs, and the variables are back.
    nb.page.evaluate(_RESTART)
    nb.page.wait_for_function(_KERNEL_IDLE, timeout=RUN_TIMEOUT)
    assert nb.page.evaluate(_EVALUATE, "print('areas' in globals())") == "False\n"
    nb.page.evaluate(_RUN_CELL, 2)
    nb.page.wait_for_function(_KERNEL_IDLE, timeout=RUN_TIMEOUT)
    assert nb.execution_count(2) is not None
    assert nb.errors() == []
    fresh = json.loads(nb.page.evaluate(_EVALUATE, CHECK))
    assert fresh == [*agent_values[:4], False]  # made by the cell, without the agent
    assert len(_cells(nb)) == 4  # running the offered cell offers nothing more
    assert nb.serious_page_errors() == []
