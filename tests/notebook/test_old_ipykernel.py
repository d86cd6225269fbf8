"""``%%agent`` on the oldest ipykernel pyproject.toml allows, in a venv this module creates.

The venv gets only that ipykernel (pip, from the package index); everything else comes from
this interpreter's site-packages through a ``.pth`` file. A real kernel runs on it, driven by
jupyter_client with the interactive UI, and shows what ``run_mode`` promises there: a plain
run awaits in its cell (the stop button cancels it); a run with the panel goes to the
background, where the panel's Abort still works because the kernel is between cells.

Without a package index (pip fails) the tests skip, except in CI (``CI=true``), where they must
run. All synchronisation is on kernel messages.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

from .conftest import ROOT, Kernel, kernel_env
from .test_panel_kernel import PanelClient

pytestmark = pytest.mark.kernel

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
FLOOR = re.search(r'"ipykernel>=([0-9.]+)"', (ROOT / "pyproject.toml").read_text())
assert FLOOR is not None, "pyproject.toml declares no ipykernel>=X"
VERSION = FLOOR.group(1)
SETUP = """
import asyncio
import pi_notebook.notebook as pn
from pi_notebook.ai import faux_assistant_message, register_faux_provider
"""


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"the ipykernel {VERSION} venv is needed in CI: {reason}")
    pytest.skip(reason)


def _make_venv(where: Path) -> Path:
    """A venv with ipykernel==VERSION whose other packages are this interpreter's."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    outer = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "_pi_notebook_outer.pth").write_text(
        f"import site; site.addsitedir({outer!r})\n"
    )
    install = ["install", "--quiet", "--disable-pip-version-check", f"ipykernel=={VERSION}"]
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), *install],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if pip.returncode != 0:
        _unavailable(f"pip could not install ipykernel=={VERSION}: {pip.stderr.strip()[-500:]}")
    return python


@pytest.fixture(scope="module")
def old_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    tmp = tmp_path_factory.mktemp("old-ipykernel")
    try:
        python = _make_venv(tmp / "venv")
    except (OSError, subprocess.SubprocessError) as exc:
        _unavailable(f"could not create the venv: {exc}")
    spec = tmp / "kernels" / "floor"
    spec.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "language": "python"}))
    specs = KernelSpecManager()
    specs.kernel_dirs = [str(tmp / "kernels")]
    env = kernel_env(tmp)
    env.pop("PI_NOTEBOOK_UI")  # the interactive UI: runs show the panel unless --plain
    km = KernelManager(kernel_name="floor", kernel_spec_manager=specs)
    km.start_kernel(env=env, cwd=str(tmp))
    kernel = Kernel(km)
    try:
        kernel.ok("%load_ext pi_notebook")
        kernel.ok(SETUP)
        yield kernel
    finally:
        kernel.shutdown()


def script(kernel: Kernel, name: str, replies: list[str], tps: float | None = None) -> None:
    kernel.ok(
        f"{name} = register_faux_provider(token_size=(1, 1), tokens_per_second={tps!r})\n"
        f"{name}.set_responses([faux_assistant_message(t) for t in {replies!r}])\n"
        f"pn.use_model({name})\n"
        "%agent reset"
    )


def pump(kernel: Kernel, client: PanelClient, until: Callable[[], bool], timeout: float) -> None:
    """Feed iopub messages to ``client`` (no cell running) until ``until()``."""
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"comm {client.comm_id}, {len(client.frames)} frames: {client.state}"
            )
        try:
            client(kernel.kc.get_iopub_msg(timeout=0.1))
        except queue.Empty:
            continue


def settle(kernel: Kernel, attempts: int = 50) -> None:
    """After an error reply ipykernel 6 aborts the requests that reach it while it flushes its
    queue (a window that grows on a loaded machine): send no-ops until one runs."""
    for _ in range(attempts):
        if kernel.run("pass").status == "ok":
            return
    raise AssertionError(f"the kernel aborted {attempts} requests in a row")


def test_the_kernel_runs_the_oldest_supported_ipykernel(old_kernel: Kernel) -> None:
    version = old_kernel.ok("import ipykernel; print(ipykernel.__version__)").stdout.strip()
    assert version.startswith(VERSION) and len(version.split(".")) == 3
    script(old_kernel, "s", ["unused"])
    status = old_kernel.ok("%agent status").stdout
    assert f"run mode: ipykernel {version} reads widget messages only between cells" in status


def test_a_plain_run_awaits_in_its_cell(old_kernel: Kernel) -> None:
    script(old_kernel, "f1", ["Hello there."])
    result = old_kernel.ok("%%agent --plain\nHi")
    assert result.stdout == "user: Hi\nassistant: Hello there.\n"
    assert old_kernel.ok("print(_agent_reply)").stdout == "Hello there.\n"


def test_the_stop_button_cancels_a_plain_run(old_kernel: Kernel) -> None:
    old_kernel.ok(
        "slow = register_faux_provider(token_size=(1, 1), tokens_per_second=20)\n"
        "def first(ctx, opts, state, model):\n"
        "    print('model called', flush=True)\n"
        "    return faux_assistant_message('one two three four five six seven ' * 10)\n"
        "slow.set_responses([first])\n"
        "pn.use_model(slow)\n"
        "%agent reset"
    )
    sent: list[bool] = []

    def interrupt_once(out: dict[str, Any]) -> None:
        if not sent and "model called" in out.get("text", ""):
            sent.append(True)
            old_kernel.km.interrupt_kernel()

    result = old_kernel.run("%%agent --plain\nGo", on_output=interrupt_once)
    assert sent and result.status == "error"
    assert result.error is not None and result.error["ename"] == "CancelledError"
    assert "assistant [aborted]" in result.stdout
    settle(old_kernel)  # the next test's cells must not land in the abort window


def test_a_panel_run_goes_to_the_background_where_its_abort_works(old_kernel: Kernel) -> None:
    script(old_kernel, "p", ["slow " * 400, "after the abort"], tps=40)
    client = PanelClient(old_kernel)
    reply, _ = old_kernel.run_raw("%%agent\nGo", on_msg=client)
    assert reply["content"]["status"] == "ok"  # the cell returned while the run goes on
    placeholder = "".join(str(d.get("text/plain", "")) for d in client.displays)
    assert "running in the background (ipykernel" in placeholder
    assert "reads the panel's messages only between cells" in placeholder
    pump(old_kernel, client, lambda: client.state is not None and bool(client.text()), 60)
    client.send({"type": "abort"})  # delivered now: no cell is running
    pump(
        old_kernel,
        client,
        lambda: client.state is not None and client.state["status"]["state"] == "aborted",
        60,
    )
    old_kernel.ok("await pn.wait()")
    roles = old_kernel.ok(
        "messages = pn.session().default.state.messages\n"
        "print([(m.role, getattr(m, 'stop_reason', None)) for m in messages])"
    ).stdout
    assert roles == "[('user', None), ('assistant', 'aborted')]\n"
    after = old_kernel.ok("%%agent --plain\nAgain")
    assert after.stdout == "user: Again\nassistant: after the abort\n"
