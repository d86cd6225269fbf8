"""Every MCP server this process made tools for: closing them all, and their status.

``%agent reset --mcp`` closes them (:func:`close_soon` from sync code, or ``await
close_mcp_servers()``), as does the end of the process (``atexit``: each connection is closed on
its own loop when that loop is still usable, so stdio servers get the SDK's shutdown sequence
instead of being orphaned). This module must never start a connection.
"""

from __future__ import annotations

import asyncio
import atexit
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .server import McpServer

EXIT_TIMEOUT_SECONDS = 10.0
"""At exit, how long closing every server may take in all."""
STOPS_TOLERATED = 10
"""At exit, how many pending ``loop.stop()`` calls (ipykernel queues some) to run through."""

_servers: weakref.WeakSet[McpServer] = weakref.WeakSet()
_atexit_installed = False


def register(server: McpServer) -> None:
    global _atexit_installed
    _servers.add(server)
    if not _atexit_installed:
        atexit.register(close_at_exit)
        _atexit_installed = True


def servers() -> list[McpServer]:
    """The known servers, by name."""
    return sorted(_servers, key=lambda server: server.name)


async def close_mcp_servers() -> int:
    """Close every MCP server connection; returns how many were open. They reconnect on use."""
    live = [server for server in servers() if server.connection_loop is not None]
    await asyncio.gather(*(server.aclose() for server in servers()))
    return len(live)


def close_soon() -> int:
    """Ask every connection to close (sync code on the loop, e.g. a line magic); how many."""
    return sum(server.close_soon() for server in servers())


def close_at_exit() -> None:
    """Close the connections whose loop is stopped but not closed (kernel shutdown)."""
    by_loop: dict[asyncio.AbstractEventLoop, list[McpServer]] = {}
    for server in servers():
        loop = server.connection_loop
        if loop is not None and not loop.is_closed() and not loop.is_running():
            by_loop.setdefault(loop, []).append(server)
    for loop, group in by_loop.items():
        closing = loop.create_task(asyncio.wait_for(_close(group), EXIT_TIMEOUT_SECONDS))
        for _ in range(STOPS_TOLERATED):
            try:
                loop.run_until_complete(closing)
            except RuntimeError:  # a stop() the kernel queued while shutting down: go on
                continue
            except Exception:  # the process is ending: what could not close is left to the OS
                pass
            break


async def _close(group: list[McpServer]) -> None:
    await asyncio.gather(*(server.aclose() for server in group))


def status_lines() -> list[str]:
    """``%agent status`` lines for the MCP servers (none when there are none)."""
    found = servers()
    if not found:
        return []
    lines = ["mcp servers:"]
    for server in found:
        lines.extend(server.status_lines())
    return lines


__all__ = [
    "close_at_exit",
    "close_mcp_servers",
    "close_soon",
    "register",
    "servers",
    "status_lines",
]
