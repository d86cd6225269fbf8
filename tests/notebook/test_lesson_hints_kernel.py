"""Issue 29.4 in real kernels: the lesson run out of order says what to do in one line.

* After a kernel restart mid-lesson, a later cell (once the extension is loaded by the set-up
  cell at the top) fails with one line naming the set-up cells, not a traceback; so does an
  ``%%agent`` cell whose ``--tools`` name no cell defined yet.
* An ``%%agent`` cell of the lesson run again on its own, its scripted replies used up, keeps
  Pi's error in the transcript and says which cell scripts them.
* The ``%load_ext`` notice of saved conversations names the notebook, never an absolute path,
  and says nothing when conversations are off.

The lesson's cells are read from ``notebooks/02_loop_lifecycle.ipynb`` itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from jupyter_client.manager import KernelManager

from pi_notebook.notebook.hints import NO_REPLIES_HINT, SETUP_HINT

from .conftest import ROOT, Kernel, kernel_env

pytestmark = pytest.mark.kernel

LESSON = ROOT / "notebooks" / "02_loop_lifecycle.ipynb"

Start = Callable[..., Kernel]


def lesson_cells() -> list[str]:
    notebook = json.loads(LESSON.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def cell_starting(cells: list[str], prefix: str) -> int:
    return next(n for n, source in enumerate(cells) if source.startswith(prefix))


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """Start a kernel in the lesson's folder (``notebook``: a notebook path for saving)."""
    kernels: list[Kernel] = []

    def launch(notebook: Path | None = None, cwd: Path = LESSON.parent, **env: str) -> Kernel:
        environment = kernel_env(tmp_path)
        if notebook is not None:
            environment["JPY_SESSION_NAME"] = str(notebook)
        environment.update(env)
        km = KernelManager(kernel_name="python3")
        km.start_kernel(env=environment, cwd=str(cwd), extra_arguments=[])
        kernel = Kernel(km)
        kernels.append(kernel)
        return kernel

    yield launch
    for kernel in kernels:
        kernel.shutdown()


def restart(kernel: Kernel) -> None:
    kernel.km.restart_kernel(now=True)
    kernel.kc.wait_for_ready(timeout=60)


def one_line_error(result_text: str) -> str:
    lines = result_text.strip("\n").splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_a_later_cell_after_a_restart_says_run_the_set_up_cells_in_one_line(
    start: Start,
) -> None:
    cells = lesson_cells()
    kernel = start()
    for source in cells[:4]:  # the lesson's first sections
        kernel.ok(source)
    restart(kernel)
    kernel.ok(cells[0])  # the set-up cell at the top (it loads the extension)

    later = cells[cell_starting(cells, "async def add(")]  # uses make_tool's AgentTool, faux
    result = kernel.run(later)
    assert result.status == "error"  # the cell failed (Run All stops here)
    assert result.error is not None and result.error["ename"] == "NameError"
    assert [out["type"] for out in result.outputs] == ["stream"]  # no traceback output
    line = one_line_error(result.stderr)
    pattern = rf"NameError: name 'faux' is not defined \(line (\d+); {SETUP_HINT}\)"
    found = re.fullmatch(pattern, line)
    assert found is not None, line
    assert "faux" in later.splitlines()[int(found[1]) - 1]  # the line the name is used on
    assert result.stdout == ""

    restart(kernel)
    magic = cells[cell_starting(cells, "%%agent --plain --tools ADD")]
    # Before the set-up cell, IPython itself says the magic is missing, in one line.
    early = kernel.run(magic)
    assert one_line_error(early.stderr) == "UsageError: Cell magic `%%agent` not found."
    kernel.ok(cells[0])
    failed = kernel.run(magic)
    assert failed.status == "error" and failed.stdout == ""
    line = one_line_error(failed.stderr)  # IPython shows a UsageError as one line
    assert "unknown tool 'ADD'" in line and line.endswith(f"({SETUP_HINT})")


def test_a_name_error_inside_a_function_keeps_its_traceback(start: Start) -> None:
    kernel = start()
    kernel.ok("%load_ext pi_notebook")
    result = kernel.run("def f():\n    return missing_name\n\nf()")
    assert result.error is not None and result.error["ename"] == "NameError"
    text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(result.error["traceback"]))  # no colours
    assert "return missing_name" in text and SETUP_HINT not in text
    kernel.ok("%unload_ext pi_notebook")  # the handler goes with the extension
    again = kernel.run("missing_name")
    assert again.error is not None and again.error["traceback"] and SETUP_HINT not in again.stderr


def test_an_agent_cell_run_again_on_its_own_names_the_cell_that_scripts_it(
    start: Start,
) -> None:
    cells = lesson_cells()
    kernel = start()
    magic = cell_starting(cells, "%%agent --plain --tools ADD")
    for source in cells[: magic + 1]:
        kernel.ok(source, timeout=120)
    again = kernel.ok(cells[magic]).stdout.splitlines()
    assert again[0] == "user: What is 20 + 22?"
    assert "assistant [error]: No more faux responses queued" in again  # Pi's text stays
    assert again[-1] == f"[{NO_REPLIES_HINT}]"


def test_the_saved_conversation_notice_names_no_path_and_is_silent_when_off(
    start: Start, tmp_path: Path
) -> None:
    folder = tmp_path / "class" / "week 1"
    folder.mkdir(parents=True)
    notebook = folder / "lesson.ipynb"
    first = start(notebook, cwd=folder)
    first.ok("%load_ext pi_notebook")
    first.ok(
        "from pi_notebook.ai import register_faux_provider, faux_assistant_message\n"
        "import pi_notebook.notebook as pn\n"
        "faux = register_faux_provider()\n"
        "faux.set_responses([faux_assistant_message('Hi.')])\n"
        "pn.use_model(faux)"
    )
    first.ok("%%agent --no-context\nHello.")
    assert (folder / ".pi_notebook" / "lesson.default.jsonl").is_file()

    restart(first)
    notice = first.ok("%load_ext pi_notebook").stdout
    assert notice.startswith("pi_notebook: a saved conversation for lesson.ipynb: default (")
    assert str(tmp_path) not in notice and "/" not in notice and "week 1" not in notice

    off = start(notebook, cwd=folder, PI_NOTEBOOK_SESSIONS="off")
    loaded = off.ok("%load_ext pi_notebook")
    assert loaded.stdout == loaded.stderr == "" and loaded.outputs == []
