"""One MCP server: its connection on the event loop, its tool calls, its failures, its close.

An :class:`McpServer` connects lazily, on the loop of the first call (the kernel's loop in a
notebook), and keeps the session for later calls and cells. The SDK's clients are async context
managers built on anyio task groups, so each connection is entered and exited inside one owner
task that this class starts; tool calls talk to the session from their own tasks. A connection
whose server went away (exit, crash, dropped stream), timed out or was closed is replaced on the
next call. Every failure is a :class:`McpServerError` whose text names the server; an aborted
call cancels its request (the SDK sends MCP's ``notifications/cancelled``, or aborts the HTTP
request at protocol 2026-07-28) and fails at once.

This module imports the MCP SDK only when a server connects. It must never print (a server's
stderr goes to :class:`StderrTail`), never leave an owner task or a server process behind when
closed, and never show an ``env`` / ``headers`` value or anything :func:`pi_notebook.ai.redact`
hides.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...ai import AbortSignal
from ...ai import redact as redact_secrets
from .registry import register
from .stderr import StderrTail
from .target import HttpTarget, StdioTarget, Target, redactor, secret_values
from .transport import watched

if TYPE_CHECKING:
    from mcp import Client
    from mcp.shared.dispatcher import ProgressFnT
    from mcp.types import CallToolResult
    from mcp.types import Tool as McpTool

DEFAULT_TIMEOUT = 60.0
"""Seconds a request may take (``timeout=None``: no limit)."""
DEFAULT_START_TIMEOUT = 60.0
"""Seconds a server may take to start and answer the handshake and the tool listing."""
CANCEL_WAIT_SECONDS = 1.0
"""After an abort, how long a cancelled request may take to send its cancellation."""
HTTP_TIMEOUT, HTTP_READ_TIMEOUT = 30.0, 300.0
"""The SDK's own HTTP client timeouts (connect / write / pool, and read for event streams)."""
STDERR_IN_ERRORS = 3
"""How many of the last stderr lines an error text quotes."""


class McpServerError(RuntimeError):
    """An MCP server failed to start, answer, or stay connected; the text names the server."""


@dataclass(eq=False)
class _Connection:
    """One session with the server, owned by ``owner``."""

    loop: asyncio.AbstractEventLoop
    ready: asyncio.Future[Client]
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    lost: bool = False
    """The server's side ended (exit, crash, dropped stream) while the session was open."""
    failed: bool = False
    """The connection never became ready."""
    owner: asyncio.Task[None] | None = None
    tools: list[McpTool] = field(default_factory=list)


class McpServer:
    """One MCP server (a command or a URL) and its current connection, if any."""

    def __init__(
        self,
        target: Target,
        name: str,
        timeout: float | None = DEFAULT_TIMEOUT,
        start_timeout: float | None = DEFAULT_START_TIMEOUT,
    ) -> None:
        self.target = target
        self.name = name
        self.timeout = timeout
        self.start_timeout = start_timeout
        given = redactor(secret_values(target))
        self.redact: Callable[[str], str] = lambda text: redact_secrets(given(text))
        """Hides the ``env`` / ``headers`` values, then what looks like a secret anywhere."""
        self.stderr: StderrTail | None = (
            StderrTail(self.redact) if isinstance(target, StdioTarget) else None
        )
        self.state = "not connected"
        self.last_error: str | None = None
        self.starts = 0
        self.calls = 0
        self.offered: list[str] = []
        """The names its tools have as agent tools (set by ``mcp_tools``), for ``%agent status``."""
        self._noise: str | None = None
        self._conn: _Connection | None = None
        register(self)

    def described(self) -> str:
        """The command line or URL, with secrets hidden."""
        return self.redact(self.target.describe())

    def __repr__(self) -> str:
        return f"McpServer({self.name!r}, {self.target.transport}, {self.state})"

    # -- connecting --------------------------------------------------------------------------

    async def connect(self, *, counted: bool = True) -> Client:
        """The live session on the running loop, connecting (or reconnecting) if needed.

        ``counted=False``: a connection not counted in :attr:`starts` (``mcp_tools``'s listing).
        """
        loop = asyncio.get_running_loop()
        conn = self._conn
        if conn is not None and conn.loop is loop and conn.stop.is_set():
            await self._finished(conn)  # closing or lost: let the old process go first
            conn = self._conn
        if conn is None or conn.loop is not loop or conn.stop.is_set():
            conn = self._start(loop, counted)
        return await asyncio.shield(conn.ready)

    async def list_tools(self, *, counted: bool = True) -> list[McpTool]:
        """The server's tools (the listing made when the current connection opened)."""
        await self.connect(counted=counted)
        conn = self._conn
        return list(conn.tools) if conn is not None else []

    def _start(self, loop: asyncio.AbstractEventLoop, counted: bool) -> _Connection:
        conn = _Connection(loop=loop, ready=loop.create_future())
        self._conn = conn
        self.starts += counted
        self.state = "connecting"
        self._noise = None
        conn.owner = loop.create_task(self._own(conn), name=f"mcp-server-{self.name}")
        return conn

    async def _own(self, conn: _Connection) -> None:
        """The owner task: enter the client, publish it, wait for the stop, exit the client.

        One cancel scope spans the whole session (anyio scopes must nest): its deadline bounds
        the start and is lifted once the session is ready.
        """
        import anyio
        from mcp import Client

        quiet_sdk_logs()
        stderr = self.stderr
        limit = self.start_timeout
        start = anyio.CancelScope(
            deadline=math.inf if limit is None else anyio.current_time() + limit
        )
        try:
            with start:
                async with AsyncExitStack() as stack:
                    transport = watched(self._transport(), lambda: self._lost(conn), self._on_noise)
                    client = Client(transport, read_timeout_seconds=self.timeout, cache=None)
                    try:
                        await stack.enter_async_context(client)
                        conn.tools = await _all_tools(client)
                    finally:
                        if stderr is not None:
                            stderr.spawned()
                    start.deadline = math.inf
                    if self._conn is conn:
                        self.state = "connected"
                        self.last_error = None
                    conn.ready.set_result(client)
                    await conn.stop.wait()
            if start.cancelled_caught and not conn.ready.done():
                raise TimeoutError
        except BaseException as exc:
            if not conn.ready.done():
                message = await self._start_failure(exc)
                self.last_error = message
                conn.failed = True
                conn.ready.set_exception(McpServerError(message))
            if not isinstance(exc, Exception):
                raise
        finally:
            conn.stop.set()
            if self._conn is conn:
                self.state = "failed to start" if conn.failed else "closed"

    def _transport(self) -> Any:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        target = self.target
        if isinstance(target, HttpTarget):
            return _http_transport(target)
        params = StdioServerParameters(
            command=target.argv[0], args=list(target.argv[1:]), env=target.env, cwd=target.cwd
        )
        assert self.stderr is not None
        return stdio_client(params, errlog=self.stderr.open())

    def _lost(self, conn: _Connection) -> None:
        if not conn.stop.is_set():
            conn.lost = True
            conn.stop.set()

    def _on_noise(self, exc: Exception) -> None:
        self._noise = self.redact(_first_line(exc))

    async def _finished(self, conn: _Connection) -> None:
        conn.stop.set()
        if conn.owner is not None and not conn.owner.done():
            await asyncio.shield(conn.owner)
        if self._conn is conn:
            self._conn = None

    # -- calling -----------------------------------------------------------------------------

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        on_progress: ProgressFnT | None = None,
        signal: AbortSignal | None = None,
    ) -> CallToolResult:
        """Call ``tool``; an abort of ``signal`` cancels the request and fails the call."""
        call = asyncio.ensure_future(self._call(tool, arguments, on_progress))
        if signal is None:
            return await call
        aborted = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait({call, aborted}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            call.cancel()
            raise
        finally:
            aborted.cancel()
        if call.done():
            return call.result()
        call.cancel()
        await asyncio.wait({call}, timeout=CANCEL_WAIT_SECONDS)
        raise McpServerError(
            f"aborted: the call of {tool!r} on MCP server {self.name!r} was cancelled"
        )

    async def _call(
        self, tool: str, arguments: dict[str, Any], on_progress: ProgressFnT | None
    ) -> CallToolResult:
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT
        from pydantic import ValidationError

        client = await self.connect()
        conn = self._conn
        self.calls += 1
        try:
            return await client.call_tool(
                tool, arguments, read_timeout_seconds=self.timeout, progress_callback=on_progress
            )
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                raise McpServerError(await self._lost_text(tool, conn)) from None
            if exc.code == REQUEST_TIMEOUT:
                self._restart_later(conn)
                noise = f"; it also sent data that is not MCP: {self._noise}" if self._noise else ""
                raise McpServerError(
                    f"MCP server {self.name!r} did not answer {tool!r} within "
                    f"{self.timeout:g} s; the request was cancelled and the server is "
                    f"restarted on the next call{noise}"
                ) from None
            raise McpServerError(f"MCP server {self.name!r}: {self.redact(exc.message)}") from None
        except ValidationError as exc:
            raise McpServerError(
                f"MCP server {self.name!r} answered {tool!r} with a reply that is not valid MCP: "
                f"{self.redact(_first_line(exc))}"
            ) from None
        except (McpServerError, asyncio.CancelledError):
            raise
        except Exception as exc:
            reason = self.redact(_first_line(_leaf(exc)))
            raise McpServerError(f"MCP server {self.name!r}: {tool!r} failed: {reason}") from None

    def _restart_later(self, conn: _Connection | None) -> None:
        if conn is not None:
            conn.stop.set()

    async def _lost_text(self, tool: str, conn: _Connection | None) -> str:
        closed_by_us = conn is not None and conn.stop.is_set() and not conn.lost
        self._restart_later(conn)
        if closed_by_us:
            return f"MCP server {self.name!r}: the connection was closed during {tool!r}"
        text = (
            f"MCP server {self.name!r} closed the connection during {tool!r} (it exited or "
            "crashed); it is restarted on the next call"
        )
        message = text + await self._stderr_note()
        self.last_error = message
        return message

    async def _start_failure(self, exc: BaseException) -> str:
        if isinstance(exc, asyncio.CancelledError):
            return f"MCP server {self.name!r}: the connection was cancelled while starting"
        leaf = _leaf(exc)
        if isinstance(leaf, TimeoutError):
            limit = self.start_timeout
            reason = f"did not start within {limit:g} s" if limit else "timed out while starting"
        elif isinstance(leaf, FileNotFoundError | PermissionError) and isinstance(
            self.target, StdioTarget
        ):
            reason = f"could not run {self.target.argv[0]!r}: {leaf.strerror or leaf}"
        else:
            reason = f"failed to start: {self.redact(_first_line(leaf))}"
        return f"MCP server {self.name!r} ({self.described()}) {reason}" + (
            await self._stderr_note()
        )

    async def _stderr_note(self) -> str:
        stderr = self.stderr
        if stderr is None:
            return ""
        await asyncio.get_running_loop().run_in_executor(None, stderr.wait_closed, 1.0)
        lines = stderr.lines(STDERR_IN_ERRORS)
        return f"; its stderr ended with: {' | '.join(lines)}" if lines else ""

    # -- closing -----------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the connection (on its loop) and wait until its process is gone."""
        conn = self._conn
        if conn is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if conn.loop is running:
            await self._finished(conn)
        elif not conn.loop.is_closed():
            conn.loop.call_soon_threadsafe(conn.stop.set)
        if self._conn is conn:
            self._conn = None
        self.state = "closed"

    def close_soon(self) -> bool:
        """Ask the connection to close without waiting (from sync code); False if none."""
        conn = self._conn
        if conn is None or conn.stop.is_set() or conn.loop.is_closed():
            return False
        conn.loop.call_soon_threadsafe(conn.stop.set)
        self.state = "closing"
        return True

    @property
    def connection_loop(self) -> asyncio.AbstractEventLoop | None:
        conn = self._conn
        return conn.loop if conn is not None and not conn.stop.is_set() else None

    # -- status ------------------------------------------------------------------------------

    def status_lines(self, stderr_lines: int = 5) -> list[str]:
        """Name, transport, state, calls, last error and the stderr tail, for ``%agent status``."""
        state = self.state
        if self._conn is not None and self._conn.lost:
            state = "disconnected (restarts on the next call)"
        lines = [
            f"  {self.name}: {self.target.transport} {self.described()!r}, {state}, "
            f"{self.calls} call{'s' if self.calls != 1 else ''}, "
            f"{self.starts} start{'s' if self.starts != 1 else ''}"
        ]
        if self.offered:
            lines.append(f"    tools: {', '.join(self.offered)}")
        if self.last_error:
            lines.append(f"    last error: {self.last_error}")
        if self._noise:
            lines.append(f"    ignored output that is not MCP: {self._noise}")
        if self.stderr is not None:
            tail = self.stderr.lines(stderr_lines)
            if tail:
                lines.append("    stderr (last lines):")
                lines.extend(f"      {line}" for line in tail)
        return lines


async def _all_tools(client: Client) -> list[McpTool]:
    tools: list[McpTool] = []
    cursor: str | None = None
    for _ in range(100):  # a paginator that never ends cannot hang the connect
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


@asynccontextmanager
async def _http_transport(target: HttpTarget) -> AsyncIterator[Any]:
    """The SDK's streamable-HTTP transport; with ``headers``, over an httpx2 client of ours
    (the SDK's documented way to set headers), closed with the transport."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    if not target.headers:
        async with streamable_http_client(target.url) as streams:
            yield streams
        return
    timeout = httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT)
    async with (
        httpx2.AsyncClient(headers=dict(target.headers), timeout=timeout) as http,
        streamable_http_client(target.url, http_client=http) as streams,
    ):
        yield streams


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside ``exc`` (anyio task groups wrap errors)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _first_line(exc: BaseException) -> str:
    """One line about ``exc``; for a pydantic error, where and what (and the input if short)."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError) and exc.errors():
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error.get("loc", ()))
        text = f"{where}: {error.get('msg', '')}" if where else str(error.get("msg", ""))
        given = error.get("input")
        if isinstance(given, str):
            text += f" (got {given[:80]!r})"
    else:
        text = str(exc).strip() or type(exc).__name__
    first = text.splitlines()[0] if text else type(exc).__name__
    return first if len(first) <= 300 else first[:297] + "..."


def quiet_sdk_logs() -> None:
    """Give the SDK's ``mcp`` logger a handler, so that without a logging setup its warnings
    (say, about a server's stray stdout line, which we report ourselves) are not printed on
    stderr by Python's last-resort handler, i.e. over the notebook. Records still propagate."""
    logger = logging.getLogger("mcp")
    if not any(isinstance(handler, logging.NullHandler) for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())


__all__ = ["DEFAULT_TIMEOUT", "McpServer", "McpServerError"]
