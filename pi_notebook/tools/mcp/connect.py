"""``mcp_tools(command_or_url, ...)``: connect to one MCP server and return its tools.

The synchronous :func:`mcp_tools` (what a notebook cell calls) lists the tools through a short
connection on a worker thread, since a cell cannot wait on the kernel's own loop; the
connection the calls use opens on the kernel's loop at the first call and stays for later
cells. :func:`mcp_tools_async` lists on the running loop and keeps that connection. This module
must never leave the listing connection open.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Mapping, Sequence

from ...agent import AgentTool
from .convert import make_agent_tool
from .server import DEFAULT_START_TIMEOUT, DEFAULT_TIMEOUT, McpServer, McpServerError
from .target import default_name, parse_target

INSTALL_HINT = "mcp_tools needs the MCP SDK: pip install 'pi-notebook[mcp]' (or pip install mcp)"


def mcp_tools(
    command_or_url: str | Sequence[str | os.PathLike[str]],
    *,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    start_timeout: float | None = DEFAULT_START_TIMEOUT,
    prefix: bool = True,
) -> list[AgentTool]:
    """The tools of one MCP server, as ``AgentTool`` s named ``<server>__<tool>``.

    The server's name is ``name``, else one made from the command or URL (``mcp-server-git``
    gives ``mcp-server-git__git_status``); ``prefix=False`` keeps the tools' own names (a name
    that clashes with another tool of the run is then refused when the cell starts).

    ``command_or_url``: a command string (``"uvx mcp-server-time"``) or argv list runs a stdio
    server (with ``env`` added to a minimal inherited environment, in ``cwd``); an ``http(s)://``
    URL speaks streamable HTTP (with ``headers``). ``timeout`` bounds each request and
    ``start_timeout`` a (re)start, in seconds (``None``: no limit). Raises
    :class:`McpServerError` when the server cannot be started or listed.
    """
    server = _server(command_or_url, name, env, cwd, headers, timeout, start_timeout)
    outcome: list[list[AgentTool]] = []
    failure: list[BaseException] = []

    def list_on_own_loop() -> None:
        try:
            outcome.append(asyncio.run(_list_and_close(server, prefix)))
        except BaseException as exc:
            failure.append(exc)

    worker = threading.Thread(target=list_on_own_loop, name=f"mcp-list-{server.name}")
    worker.start()
    worker.join()
    if failure:
        raise failure[0]
    return outcome[0]


async def mcp_tools_async(
    command_or_url: str | Sequence[str | os.PathLike[str]],
    *,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    start_timeout: float | None = DEFAULT_START_TIMEOUT,
    prefix: bool = True,
) -> list[AgentTool]:
    """:func:`mcp_tools` on the running loop, keeping the connection open for the calls."""
    server = _server(command_or_url, name, env, cwd, headers, timeout, start_timeout)
    return _offered(server, [make_agent_tool(server, t, prefix) for t in await server.list_tools()])


def _server(
    command_or_url: str | Sequence[str | os.PathLike[str]],
    name: str | None,
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
    headers: Mapping[str, str] | None,
    timeout: float | None,
    start_timeout: float | None,
) -> McpServer:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise ImportError(INSTALL_HINT) from None
    target = parse_target(command_or_url, env=env, cwd=cwd, headers=headers)
    for label, value in (("timeout", timeout), ("start_timeout", start_timeout)):
        if value is not None and not value > 0:
            raise ValueError(f"mcp_tools: {label} must be positive seconds or None, got {value!r}")
    return McpServer(target, name or default_name(target), timeout, start_timeout)


async def _list_and_close(server: McpServer, prefix: bool) -> list[AgentTool]:
    try:
        tools = await server.list_tools(counted=False)
        return _offered(server, [make_agent_tool(server, tool, prefix) for tool in tools])
    finally:
        await server.aclose()


def _offered(server: McpServer, tools: list[AgentTool]) -> list[AgentTool]:
    server.offered = [tool.name for tool in tools]
    return tools


__all__ = ["INSTALL_HINT", "McpServerError", "mcp_tools", "mcp_tools_async"]
