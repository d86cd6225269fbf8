"""A transport wrapper that tells its owner when the server's side of the connection ended.

The MCP SDK's clients wake waiting requests when a server goes away but do not say so to whoever
holds the session; this relay (an ``mcp.client.Transport`` around the real one) forwards every
message unchanged, calls ``on_end`` when the server's stream ends (exit, crash, dropped HTTP
stream) and ``on_noise`` for anything the server sent that is not MCP. Hand-written because the
SDK exposes neither event. It must never change, reorder or drop a message.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from mcp.client import Transport


@asynccontextmanager
async def watched(
    inner: Transport,
    on_end: Callable[[], None],
    on_noise: Callable[[Exception], None],
) -> AsyncIterator[Any]:
    """``inner``'s streams, with the read side relayed through a watcher task."""
    from mcp.shared.message import SessionMessage

    async with inner as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay() -> None:
            try:
                async with send:
                    async for item in read_stream:
                        if isinstance(item, Exception):
                            on_noise(item)
                        await send.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                pass
            finally:
                on_end()

        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            try:
                yield receive, write_stream
            finally:
                group.cancel_scope.cancel()


__all__ = ["watched"]
