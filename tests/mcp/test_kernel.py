"""MCP tools in a real kernel: ``%%agent --tools mcp_time`` with ``mcp_time = mcp_tools(...)``
set in a cell, the connection kept across cells, ``%agent status``, ``%agent reset --mcp``, and
the servers closed when the kernel shuts down. A faux model scripts the calls."""

from __future__ import annotations

import os
import select
import signal
import sys
from pathlib import Path

import pytest
from jupyter_client.manager import KernelManager

from ..notebook.conftest import Kernel, kernel_env
from .conftest import LAB

pytestmark = pytest.mark.kernel

SETUP = """
import sys
import pi_notebook.notebook as pn
from pi_notebook.tools import mcp_tools
from pi_notebook.ai import faux_assistant_message as reply, faux_tool_call, register_faux_provider

def calls(*pairs):
    return reply([faux_tool_call(name, args) for name, args in pairs], stop_reason='toolUse')
"""

CONVERT = {"source_timezone": "UTC", "time": "16:30", "target_timezone": "Asia/Tokyo"}


def script(kernel: Kernel, turns: str) -> None:
    kernel.ok(
        "model = register_faux_provider(token_size=(1, 1))\n"
        f"model.set_responses({turns})\n"
        "pn.use_model(model)\n"
        "%agent reset"
    )


def test_agent_cell_uses_an_mcp_tool_list_from_the_namespace(kernel: Kernel) -> None:
    kernel.ok(SETUP)
    made = kernel.ok(
        "mcp_time = mcp_tools([sys.executable, '-m', 'mcp_server_time', '--local-timezone', "
        "'UTC'], name='time')\nprint([t.name for t in mcp_time])"
    )
    assert made.stdout.strip() == "['time__get_current_time', 'time__convert_time']"
    script(
        kernel,
        f"[calls(('time__convert_time', {CONVERT!r})), reply('01:30 in Tokyo'),"
        f" calls(('time__convert_time', {CONVERT!r})), reply('still 01:30')]",
    )
    first = kernel.ok("%%agent --tools mcp_time\nWhat time is 16:30 UTC in Tokyo?")
    assert "time__convert_time" in first.text
    assert '"time_difference": "+9.0h"' in first.text
    assert "01:30 in Tokyo" in first.text
    assert first.stderr == ""
    second = kernel.ok("%%agent\nAnd again?")  # the same tools, the same connection
    assert "still 01:30" in second.text
    status = kernel.ok("%agent status").stdout
    assert "mcp servers:" in status
    assert "  time: stdio " in status
    assert "connected, 2 calls, 1 start" in status


def test_reset_mcp_closes_the_servers_and_the_next_cell_reconnects(
    kernel: Kernel, tmp_path: Path
) -> None:
    pidfile = tmp_path / "lab.pid"
    kernel.ok(SETUP)
    kernel.ok("import pi_notebook.tools as pt\nawait pt.close_mcp_servers()")  # a clean start
    kernel.ok(
        f"lab = mcp_tools([sys.executable, {str(LAB)!r}, '--pidfile', {str(pidfile)!r}], "
        "name='lab')"
    )
    script(
        kernel,
        "[calls(('lab__pid', {})), reply('one'), calls(('lab__pid', {})), reply('two')]",
    )
    kernel.ok("%%agent --tools lab\npid?")
    first_pid = int(pidfile.read_text())
    assert kernel.ok("%agent status").stdout.count("lab server: starting") == 2  # list + call
    reset = kernel.ok("%agent reset --mcp")
    assert reset.stdout == (
        "conversation reset\n"
        "closing 1 MCP server connection(s); they reconnect on the next call\n"
    )
    kernel.ok("await pt.close_mcp_servers()")  # joins the close under way
    assert not alive(first_pid)
    assert ", closed, 1 call, 1 start" in kernel.ok("%agent status").stdout
    kernel.ok("%%agent --tools lab\npid again?")
    assert alive(int(pidfile.read_text()))
    assert ", connected, 2 calls, 2 starts" in kernel.ok("%agent status").stdout


def test_reset_takes_only_the_mcp_option(kernel: Kernel) -> None:
    result = kernel.run("%agent reset --everything")
    assert result.status == "error"
    assert "unknown option '--everything'; expected --mcp or nothing" in str(result.error)


def test_kernel_shutdown_closes_a_server_that_ignores_its_stdin_closing(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "lab.pid"
    km = KernelManager(kernel_name="python3")
    km.kernel_cmd = []
    km.start_kernel(env=kernel_env(tmp_path), cwd=str(tmp_path), extra_arguments=[])
    kernel = Kernel(km)
    try:
        kernel.ok("%load_ext pi_notebook")
        kernel.ok(SETUP)
        kernel.ok(
            f"lab = mcp_tools([sys.executable, {str(LAB)!r}, '--linger', '--pidfile', "
            f"{str(pidfile)!r}], name='lab')"
        )
        script(kernel, "[calls(('lab__pid', {})), reply('done')]")
        kernel.ok("%%agent --tools lab\npid?")
        pid = int(pidfile.read_text())
        exited = os.pidfd_open(pid)
    finally:
        kernel.kc.stop_channels()
        km.shutdown_kernel(now=False)
    try:
        ready, _, _ = select.select([exited], [], [], 30)
        if not ready:  # never leave it behind, then fail
            os.kill(pid, signal.SIGKILL)
        assert ready, "the lingering MCP server outlived the kernel"
    finally:
        os.close(exited)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (FileNotFoundError, IndexError):
        return False


if sys.platform != "linux":  # pidfd and /proc
    pytestmark = pytest.mark.skip(reason="Linux only")
