"""``send_with_retries(..., on_sent)``: called once the request is written and its reply is
awaited (what starts the schema warm-up), against a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio

from pi_notebook.ai.providers._request import PreparedRequest
from pi_notebook.ai.providers._retry import send_with_retries

from .server import Conn, Request, ScriptServer, sse, stream_bytes


async def test_on_sent_is_called_after_the_request_is_written_and_before_the_reply(
    server: ScriptServer,
) -> None:
    sent = asyncio.Event()
    calls: list[int] = []

    def on_sent() -> None:
        calls.append(1)
        sent.set()

    async def held(request: Request, conn: Conn) -> None:
        await asyncio.wait_for(sent.wait(), 10)  # no reply until the client says it waits
        await stream_bytes(sse({"ok": True}))(request, conn)

    server.queue(held)
    prepared = PreparedRequest(url=server.url + "/v1/x", headers={}, body={"tools": [1]})
    response = await asyncio.wait_for(send_with_retries(prepared, None, on_sent), 20)
    try:
        assert response.status_code == 200
        assert server.requests[0].json() == {"tools": [1]}
        assert len(calls) == 1
    finally:
        await response.aclose()


async def test_without_on_sent_the_request_is_sent_as_before(server: ScriptServer) -> None:
    server.queue(stream_bytes(sse({"ok": True})))
    prepared = PreparedRequest(url=server.url + "/v1/x", headers={}, body={})
    response = await asyncio.wait_for(send_with_retries(prepared, None), 20)
    try:
        assert response.status_code == 200
        assert "trace" not in response.request.extensions
    finally:
        await response.aclose()
