"""MCP tool servers as agent tools, on the official ``mcp`` SDK (``pip install pi-notebook[mcp]``).

- :func:`mcp_tools` / :func:`mcp_tools_async`: one server's tools as ``AgentTool`` s.
- :func:`close_mcp_servers` (``%agent reset --mcp``): close every connection (they reconnect on
  the next call); :func:`status_lines`: what ``%agent status`` shows about them.

Modules: ``target`` (what to connect to, names), ``server`` (the connection and the calls),
``transport`` (noticing a server went away), ``stderr`` (a server's stderr tail), ``convert``
(tools, results and progress in the agent's terms), ``registry`` (all servers, closing at
exit), ``connect`` (``mcp_tools``). Importing this package never imports the SDK.
"""

from .connect import mcp_tools, mcp_tools_async
from .registry import close_mcp_servers, close_soon, servers, status_lines
from .server import DEFAULT_TIMEOUT, McpServer, McpServerError

__all__ = [
    "DEFAULT_TIMEOUT",
    "McpServer",
    "McpServerError",
    "close_mcp_servers",
    "close_soon",
    "mcp_tools",
    "mcp_tools_async",
    "servers",
    "status_lines",
]
