"""Fixtures for the MCP tests: the lab server over stdio and streamable HTTP, real servers'
commands, and closing every MCP connection after each test (on the test's own loop).

The HTTP lab server listens on a socket this process binds on 127.0.0.1:0 and hands over, and
is ready once its /health route answers (polled with a deadline, never a fixed sleep).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from pi_notebook.agent import AgentTool
from pi_notebook.tools import close_mcp_servers, mcp_tools

from ..notebook.conftest import kernel  # noqa: F401  (the real-kernel fixture)
from ..tools.conftest import faux, run_agent, text_of  # noqa: F401  (shared fixtures, helpers)

LAB = Path(__file__).with_name("lab_server.py")
READY_TIMEOUT = 60.0


def lab_command(*options: str) -> list[str]:
    return [sys.executable, str(LAB), *options]


@pytest.fixture(autouse=True)
async def close_mcp_after_test() -> AsyncIterator[None]:
    yield
    await close_mcp_servers()


class HttpLab:
    """The lab server over streamable HTTP, in a subprocess serving a socket this object keeps,
    so a new process can take over the same URL after the old one died."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        fd = self.listener.fileno()
        self.process = subprocess.Popen(
            lab_command("--http-fd", str(fd)),
            pass_fds=(fd,),
            stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until_healthy(self.url.replace("/mcp", "/health"), self.process)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def close(self) -> None:
        self.stop()
        self.listener.close()


@pytest.fixture(scope="module")
def http_lab_url() -> Iterator[str]:
    """The lab server over streamable HTTP for a whole module; its endpoint URL."""
    server = HttpLab()
    try:
        server.start()
        yield server.url
    finally:
        server.close()


@pytest.fixture
def http_lab() -> Iterator[HttpLab]:
    """An HTTP lab server of this test's own (started), to crash and replace."""
    server = HttpLab()
    try:
        server.start()
        yield server
    finally:
        server.close()


def wait_until_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    with httpx.Client(timeout=5.0) as client:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the HTTP lab server exited with {process.returncode}")
            try:
                if client.get(url).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the HTTP lab server did not answer {url} in time")


@pytest.fixture(scope="module", params=["stdio", "http"])
def lab(request: pytest.FixtureRequest) -> list[AgentTool]:
    """The lab server's tools, named ``lab__<tool>``, over each transport."""
    if request.param == "stdio":
        return mcp_tools(lab_command(), name="lab", timeout=30)
    url = request.getfixturevalue("http_lab_url")
    return mcp_tools(url, name="lab", timeout=30)


def by_name(tools: list[AgentTool]) -> dict[str, AgentTool]:
    return {t.name: t for t in tools}
