"""MCP tool calls: pi_notebook's McpServer against the SDK's own Client, in the same run.

Each peer talks to its own lab server process (tests/mcp/lab_server.py, started the same way)
over stdio and makes the same sequential ``echo`` calls:

* ``sdk``: ``mcp.Client(stdio_client(...)).call_tool`` (the floor: the SDK alone);
* ``ours``: ``McpServer.call_tool`` (the owner task, the relay that watches the stream, the
  error mapping);
* ``ours+tool``: ``AgentTool.execute`` of an MCP tool (also the content conversion).

All three connections are open at once and the timed runs alternate between the peers (so a
busy machine slows them alike); each figure is the best of --repeat runs after one warm-up, in
µs per call, with the ratios to ``sdk``. The start (process, handshake, tool listing) of each
peer is shown once, for information.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

LAB = Path(__file__).resolve().parent.parent / "tests" / "mcp" / "lab_server.py"

Call = Callable[[str], Awaitable[Any]]


async def sdk_peer(stack: AsyncExitStack) -> tuple[float, Call]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(LAB)])
    quiet = stack.enter_context(open("/dev/null", "w"))  # noqa: SIM115
    began = time.perf_counter()
    client = await stack.enter_async_context(Client(stdio_client(params, errlog=quiet)))
    await client.list_tools()
    return time.perf_counter() - began, lambda i: client.call_tool("echo", {"text": i})


async def ours_peer(stack: AsyncExitStack, through_tool: bool) -> tuple[float, Call]:
    from pi_notebook.tools.mcp import McpServer
    from pi_notebook.tools.mcp.convert import make_agent_tool
    from pi_notebook.tools.mcp.target import parse_target

    server = McpServer(parse_target([sys.executable, str(LAB)]), "lab")
    stack.push_async_callback(server.aclose)
    began = time.perf_counter()
    tools = {t.name: t for t in await server.list_tools()}
    start = time.perf_counter() - began
    if not through_tool:
        return start, lambda i: server.call_tool("echo", {"text": i})
    echo = make_agent_tool(server, tools["echo"], None)

    async def call(i: str) -> Any:
        result = await echo.execute("c", {"text": i}, None, lambda _: None)
        assert result.content[0].text == i
        return result

    return start, call


async def timed(calls: int, call: Call) -> float:
    began = time.perf_counter()
    for i in range(calls):
        await call(str(i))
    return (time.perf_counter() - began) / calls


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="sequential calls per run")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per peer (best shown)")
    args = parser.parse_args()
    async with AsyncExitStack() as stack:
        peers = {
            "sdk": await sdk_peer(stack),
            "ours": await ours_peer(stack, through_tool=False),
            "ours+tool": await ours_peer(stack, through_tool=True),
        }
        best = {name: float("inf") for name in peers}
        for _, call in peers.values():  # warm-up
            await timed(args.calls, call)
        for _ in range(args.repeat):
            for name, (_, call) in peers.items():
                best[name] = min(best[name], await timed(args.calls, call))
    print(f"MCP echo over stdio, {args.calls} sequential calls, best of {args.repeat}")
    print(f"{'peer':12} {'start (s)':>10} {'µs/call':>10}")
    for name, (start, _) in peers.items():
        print(f"{name:12} {start:10.2f} {best[name] * 1e6:10.0f}")
    print(f"ours / sdk      {best['ours'] / best['sdk']:6.2f}")
    print(f"ours+tool / sdk {best['ours+tool'] / best['sdk']:6.2f}")


if __name__ == "__main__":
    asyncio.run(main())
