"""A small MCP server for the tests, on the SDK's MCPServer (mcp 2's name for FastMCP).

Tools for progress, structured results, images, resources, errors, slow / hanging calls,
cancellation, crashes and replies that are not MCP. Run as a script:
``python lab_server.py [--http-fd FD] [--pidfile PATH] [--linger] [--once PATH]``.

- ``--http-fd FD``: serve streamable HTTP on the listening socket FD (the test binds it on
  127.0.0.1:0 and passes it, so there is no port race); stdio otherwise.
- ``--pidfile PATH``: write the process id there once started.
- ``--linger``: after stdin closes, keep running (a server that ignores the end of its input;
  only a signal stops it).
- ``--once PATH``: refuse to start a second time (PATH marks the first start).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import EmbeddedResource, TextResourceContents, ToolAnnotations

PNG_1x1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
READ_ONLY = ToolAnnotations(read_only_hint=True)
WIRE = os.dup(1)
"""The real stdout: while serving stdio, the SDK points fd 1 at stderr (stray prints miss the
wire), so tools that must write to the wire itself use this copy."""

server = MCPServer("lab")
cancelled: list[str] = []
cancelled_event = anyio.Event()


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(annotations=READ_ONLY)
def add(a: int, b: int) -> int:
    """Add two integers (a structured result)."""
    return a + b


@server.tool(annotations=READ_ONLY)
async def count(steps: int, ctx: Context) -> str:
    """Report progress once per step, then finish."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted to {steps}"


@server.tool(annotations=READ_ONLY)
def picture() -> Image:
    """A 1x1 PNG."""
    return Image(data=PNG_1x1, format="png")


@server.tool(annotations=READ_ONLY)
def document() -> EmbeddedResource:
    """An embedded text resource."""
    return EmbeddedResource(
        type="resource",
        resource=TextResourceContents(uri="memo://one", mime_type="text/plain", text="hello memo"),
    )


@server.tool(annotations=READ_ONLY)
def fail(message: str) -> str:
    """Fail with the message (an isError result)."""
    raise ToolError(message)


@server.tool(annotations=READ_ONLY)
async def slow(seconds: float, ctx: Context) -> str:
    """Report that it started, then sleep; records a cancellation."""
    await ctx.report_progress(0, None, "started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        cancelled.append(ctx.request_id)
        cancelled_event.set()
        raise
    return f"slept {seconds}"


@server.tool(annotations=READ_ONLY)
async def cancellations(wait: float) -> int:
    """How many calls were cancelled, waiting up to ``wait`` s for the first one."""
    with anyio.move_on_after(wait):
        await cancelled_event.wait()
    return len(cancelled)


@server.tool(annotations=READ_ONLY)
async def hang() -> str:
    """Never answer."""
    await anyio.sleep_forever()
    return "unreachable"


@server.tool(annotations=READ_ONLY)
def crash() -> str:
    """Write a last word to stderr and exit at once, mid-call."""
    sys.stderr.write("lab server: crashing now\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool(annotations=READ_ONLY)
async def garbage(ctx: Context) -> str:
    """Answer this request with a result that is not a CallToolResult, then never answer."""
    request_id: Any = ctx.request_id
    if request_id.isdigit():
        request_id = int(request_id)
    reply = {"jsonrpc": "2.0", "id": request_id, "result": {"content": "not a list"}}
    os.write(WIRE, (json.dumps(reply) + "\n").encode())
    await anyio.sleep_forever()
    return "unreachable"


@server.tool(annotations=READ_ONLY)
def noise(text: str) -> str:
    """Write a line that is not JSON-RPC to stdout, then answer normally."""
    os.write(WIRE, b"this line is not JSON-RPC\n")
    return text


@server.tool(annotations=READ_ONLY)
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool(annotations=READ_ONLY)
def header(name: str, ctx: Context) -> str:
    """An HTTP request header of this call ('' over stdio)."""
    request = ctx.request_context.request
    headers = getattr(request, "headers", None)
    return str(headers.get(name, "")) if headers is not None else ""


@server.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def wipe() -> str:
    """Pretend to delete everything (annotated destructive)."""
    return "wiped"


@server.tool()
def plain() -> str:
    """No annotations at all."""
    return "plain"


def serve_http(fd: int) -> None:
    import uvicorn
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse

    @server.custom_route("/health", methods=["GET"])
    async def health(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    app = server.streamable_http_app(host="127.0.0.1")
    listener = socket.socket(fileno=fd)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    anyio.run(uvicorn.Server(config).serve, [listener])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http-fd", type=int)
    parser.add_argument("--pidfile")
    parser.add_argument("--linger", action="store_true")
    parser.add_argument("--once")
    args = parser.parse_args()
    if args.once:
        marker = Path(args.once)
        if marker.exists():
            sys.stderr.write("lab server: refusing a second start\n")
            sys.exit(2)
        marker.write_text("started")
    if args.pidfile:
        Path(args.pidfile).write_text(str(os.getpid()))
    sys.stderr.write("lab server: starting\n")
    sys.stderr.flush()
    if args.http_fd is not None:
        serve_http(args.http_fd)
        return
    server.run("stdio")
    if args.linger:
        threading.Event().wait()


if __name__ == "__main__":
    main()
