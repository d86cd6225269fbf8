"""Why JupyterLab's kernel indicator reads "Idle" while an ``%%agent`` cell runs, and the server
setting the README's troubleshooting gives for it (issue 27, item 6).

ipykernel answers each request it handles with a busy/idle status pair; when the panel appears,
JupyterLab's widget manager sends the kernel a ``create_subshell_request`` (and, without
subshells, each panel message is a ``comm_msg``); JupyterLab sets the kernel status from every
status message whose request is not of an untracked type. So with the server's defaults the
status reads idle while the run waits for the model, and with both types added to
``MappingKernelManager.untracked_message_types`` it reads busy until the cell ends.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .driver import Notebook, import_playwright, write_notebook
from .server import JupyterServer
from .test_panel import SETUP, _panel

expect = import_playwright().expect

UNTRACKED_COMM = """\
from jupyter_server.services.kernels.kernelmanager import MappingKernelManager

c.MappingKernelManager.untracked_message_types = [
    *MappingKernelManager.class_traits()["untracked_message_types"].default(),
    "create_subshell_request",
    "comm_msg",
]
"""

WAIT_FOR_ABORT = """\
async def _until_aborted(context, options, state, model):
    await options.signal.sleep(600)  # a model that never answers: the run waits for it
    return faux_assistant_message("never")

faux.set_responses([_until_aborted])
"""

KERNEL_STATUS = """() => {
    const w = window.__piNotebook;
    return w.sessionContext.session.kernel.status;
}"""


@pytest.fixture(scope="module")
def configured_lab() -> Iterator[JupyterServer]:
    """A JupyterLab server started with the README's setting."""
    base = Path(tempfile.mkdtemp(prefix="pi-browser-untracked-"))
    (base / "config").mkdir(parents=True)
    (base / "config" / "jupyter_server_config.py").write_text(UNTRACKED_COMM, encoding="utf-8")
    srv = JupyterServer("lab", base)
    try:
        srv.start()
        yield srv
    finally:
        srv.stop()
        shutil.rmtree(base, ignore_errors=True)


def _status_while_waiting(nb: Notebook, workdir: Path) -> str:
    name = write_notebook(
        workdir / "status.ipynb",
        [SETUP.format(tps=None) + WAIT_FOR_ABORT, "%%agent --model faux\nAre you there?"],
    )
    nb.open(name)
    nb.start_run_all()
    panel = _panel(nb)
    label = panel.locator(".pi-status .pi-state-label")
    expect(label).to_contain_text("waiting for the model")
    # The view said hello (a comm message) before the panel could show its state: every status
    # message ipykernel sent for it has reached the page by now.
    status = str(nb.page.evaluate(KERNEL_STATUS))
    panel.locator("button.pi-abort").click()
    nb.wait_run_done()
    return status


def test_with_the_servers_defaults_the_status_reads_idle_while_the_cell_runs(
    nb: Notebook, workdir: Path, server: JupyterServer
) -> None:
    if server.frontend != "lab":
        pytest.skip("JupyterLab only (Notebook 7 shares the same kernel connection code)")
    assert _status_while_waiting(nb, workdir) == "idle"


def test_with_comm_msg_untracked_the_status_reads_busy_while_the_cell_runs(
    browser: Any, configured_lab: JupyterServer
) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        nb = Notebook(context.new_page(), configured_lab)
        assert _status_while_waiting(nb, configured_lab.root) == "busy"
    finally:
        context.close()
        configured_lab.shutdown_kernels()
