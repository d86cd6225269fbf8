"""A tiny scripted HTTP/1.1 server on 127.0.0.1 for provider tests (no httpx mocking).

Each incoming request is recorded and answered by the next queued handler. Handlers write raw
bytes (status line, headers, chunked SSE frames), so tests can replay any byte-level shape:
CRLF, split UTF-8, dropped connections, stalls. It must never be exposed beyond 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Conn:
    """The server side of one exchange."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.keep_alive = True

    async def head(
        self, status: int = 200, headers: dict[str, str] | None = None, chunked: bool = True
    ) -> None:
        lines = [f"HTTP/1.1 {status} {'OK' if status < 400 else 'Error'}"]
        all_headers = {"content-type": "text/event-stream"} if chunked else {}
        all_headers.update(headers or {})
        if chunked:
            all_headers["transfer-encoding"] = "chunked"
        lines += [f"{k}: {v}" for k, v in all_headers.items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await self.writer.drain()

    async def chunk(self, data: bytes) -> None:
        if data:
            self.writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await self.writer.drain()

    async def end(self) -> None:
        self.writer.write(b"0\r\n\r\n")
        await self.writer.drain()

    async def respond(
        self, status: int, body: bytes | str, headers: dict[str, str] | None = None
    ) -> None:
        data = body.encode() if isinstance(body, str) else body
        all_headers = {"content-type": "application/json", "content-length": str(len(data))}
        all_headers.update(headers or {})
        await self.head(status, all_headers, chunked=False)
        self.writer.write(data)
        await self.writer.drain()

    def drop(self) -> None:
        """Close the connection abruptly."""
        self.keep_alive = False
        self.writer.transport.abort()

    async def wait_client_gone(self) -> None:
        """Return when the client closes the connection."""
        while await self.reader.read(1024):
            pass


Handler = Callable[[Request, Conn], Awaitable[None]]


@dataclass
class ScriptServer:
    host: str = "127.0.0.1"
    port: int = 0
    handlers: deque[Handler] = field(default_factory=deque)
    requests: list[Request] = field(default_factory=list)
    request_seen: asyncio.Event = field(default_factory=asyncio.Event)
    disconnected: asyncio.Event = field(default_factory=asyncio.Event)
    disconnect_time: float | None = None
    _server: asyncio.Server | None = None
    _writers: set[asyncio.StreamWriter] = field(default_factory=set)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def queue(self, *handlers: Handler) -> None:
        self.handlers.extend(handlers)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = Conn(reader, writer)
        self._writers.add(writer)
        try:
            while conn.keep_alive:
                request = await self._read_request(reader)
                if request is None:
                    break
                self.requests.append(request)
                self.request_seen.set()
                handler = self.handlers.popleft() if self.handlers else _not_found
                await handler(request, conn)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._writers.discard(writer)
            if not writer.is_closing():
                writer.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> Request | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        body = await reader.readexactly(length) if length else b""
        return Request(method, path, headers, body)

    def mark_disconnected(self) -> None:
        loop = asyncio.get_running_loop()
        self.disconnect_time = loop.time()
        self.disconnected.set()


async def _not_found(request: Request, conn: Conn) -> None:
    await conn.respond(404, '{"error":{"message":"no handler queued"}}')


# --------------------------------------------------------------------------------------------
# Handler builders


def sse(*events: Any, end: bool = True) -> bytes:
    """``data: <json>\\n\\n`` frames; a str is sent verbatim as the data."""
    out = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event)
        out.append(f"data: {data}\n\n")
    if end:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def named_sse(*events: tuple[str, Any]) -> bytes:
    """``event: <name>\\ndata: <json>\\n\\n`` frames (the Anthropic shape)."""
    out = []
    for name, payload in events:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        out.append(f"event: {name}\ndata: {data}\n\n")
    return "".join(out).encode()


def gemini_sse(*chunks: Any) -> bytes:
    """``data: <json>\r\n\r\n`` frames, as ``streamGenerateContent?alt=sse`` sends them (no
    ``[DONE]``: the stream ends after the chunk with a ``finishReason``)."""
    out = []
    for chunk in chunks:
        data = chunk if isinstance(chunk, str) else json.dumps(chunk)
        out.append(f"data: {data}\r\n\r\n")
    return "".join(out).encode()


def stream_bytes(
    payload: bytes | list[bytes],
    *,
    split: int | None = None,
    drop: bool = False,
    headers: dict[str, str] | None = None,
) -> Handler:
    """Reply 200 with ``payload`` as chunked frames (split every ``split`` bytes)."""

    async def handler(request: Request, conn: Conn) -> None:
        await conn.head(200, headers)
        parts = payload if isinstance(payload, list) else [payload]
        for part in parts:
            if split:
                for i in range(0, len(part), split):
                    await conn.chunk(part[i : i + split])
            else:
                await conn.chunk(part)
        if drop:
            conn.drop()
            return
        await conn.end()

    return handler


@dataclass
class Endless:
    """What an :func:`endless` reply sent: ``frames``, and ``finished`` once it stopped."""

    frames: int = 0
    finished: asyncio.Event = field(default_factory=asyncio.Event)


def endless(head: bytes, frame: bytes, tally: Endless, *, frames: int = 20_000) -> Handler:
    """Reply 200 with ``head``, then ``frame`` again and again, as a server that ignores
    ``max_tokens`` does: until the client goes away, or after ``frames`` frames (then the
    stream just ends, so a client that reads everything still finishes). Writes wait only
    when the socket's buffer is full, so the client reads as it goes."""

    async def handler(request: Request, conn: Conn) -> None:
        try:
            await conn.head(200)
            await conn.chunk(head)
            while tally.frames < frames:
                await conn.chunk(frame)
                tally.frames += 1
            await conn.end()
        finally:
            tally.finished.set()

    return handler


def error(status: int, body: Any, headers: dict[str, str] | None = None) -> Handler:
    async def handler(request: Request, conn: Conn) -> None:
        data = body if isinstance(body, str | bytes) else json.dumps(body)
        await conn.respond(status, data, headers)

    return handler


def stall(server: ScriptServer, first: bytes, started: asyncio.Event) -> Handler:
    """Send ``first``, then hang until the client disconnects (recorded on the server)."""

    async def handler(request: Request, conn: Conn) -> None:
        await conn.head(200)
        await conn.chunk(first)
        started.set()
        await conn.wait_client_gone()
        server.mark_disconnected()
        conn.keep_alive = False

    return handler


def stream_compressed(
    payload: bytes | list[bytes], encoding: str, *, split: int | None = None
) -> Handler:
    """Reply 200 with ``payload`` compressed as ``content-encoding: gzip`` or ``deflate``.

    The compressor is flushed after each part (and each ``split`` piece), so every chunked
    frame decodes on its own, as a compressing proxy that streams sends it.
    """
    wbits = {"gzip": 31, "deflate": 15}[encoding]

    async def handler(request: Request, conn: Conn) -> None:
        await conn.head(200, {"content-encoding": encoding})
        compressor = zlib.compressobj(wbits=wbits)
        parts = payload if isinstance(payload, list) else [payload]
        for part in parts:
            step = split or len(part) or 1
            for i in range(0, len(part), step):
                piece = compressor.compress(part[i : i + step])
                await conn.chunk(piece + compressor.flush(zlib.Z_SYNC_FLUSH))
        await conn.chunk(compressor.flush())
        await conn.end()

    return handler


@dataclass
class BodyTally:
    """How much of a big body a handler got into the socket before the client went away."""

    total: int = 0
    sent: int = 0
    client_closed: asyncio.Event = field(default_factory=asyncio.Event)


def big_body(
    status: int,
    size: int,
    tally: BodyTally,
    *,
    content_type: str = "text/html",
    fill: bytes = b"<p>bad gateway</p>\n",
) -> Handler:
    """Reply ``status`` with a ``size``-byte body (``content-length``) written piece by piece;
    ``tally`` records the bytes written and whether the client closed before the end."""

    async def handler(request: Request, conn: Conn) -> None:
        tally.total = size
        await conn.head(
            status, {"content-type": content_type, "content-length": str(size)}, chunked=False
        )
        piece = (fill * (65536 // len(fill) + 1))[:65536]
        try:
            while tally.sent < size:
                part = piece[: size - tally.sent]
                conn.writer.write(part)
                await conn.writer.drain()
                tally.sent += len(part)
        except ConnectionError:
            tally.client_closed.set()
            conn.keep_alive = False
            return
        # All of it is in the socket; the client may still close without reading it all.
        await conn.wait_client_gone()
        conn.keep_alive = False

    return handler
