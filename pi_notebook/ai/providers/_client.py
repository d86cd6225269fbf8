"""The pooled HTTP client: one ``httpx.AsyncClient`` per event loop (HTTP/1.1), and timeouts.

Every provider request goes through :func:`get_client`, so connections are reused across
requests of one loop. It must never follow redirects (a key must not travel to another host)
and never outlive its loop's use (:func:`aclose_client`).
"""

from __future__ import annotations

import asyncio
import weakref

import httpx

from ..types import StreamOptions

DEFAULT_TIMEOUT = httpx.Timeout(connect=30.0, read=600.0, write=60.0, pool=60.0)

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)


def get_client() -> httpx.AsyncClient:
    """The shared client of the running event loop (created on first use)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            http1=True,
            http2=False,
            timeout=DEFAULT_TIMEOUT,
            limits=httpx.Limits(
                max_connections=100, max_keepalive_connections=20, keepalive_expiry=30.0
            ),
            follow_redirects=False,
        )
        _clients[loop] = client
    return client


async def aclose_client() -> None:
    """Close the running loop's shared client (a new one is made on next use)."""
    client = _clients.pop(asyncio.get_running_loop(), None)
    if client is not None:
        await client.aclose()


def request_timeout(options: StreamOptions | None) -> httpx.Timeout:
    """``options.timeout_ms`` as one timeout for every phase, else :data:`DEFAULT_TIMEOUT`."""
    if options is not None and options.timeout_ms is not None:
        return httpx.Timeout(max(options.timeout_ms, 1) / 1000)
    return DEFAULT_TIMEOUT
