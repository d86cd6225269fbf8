"""One name, one tool: where each tool of a run came from, and a clash refused before any request.

A tool's name is what the model calls. Two tools of one name in one run would leave it to list
order which one a call reaches (an MCP server's ``run_python`` silently took the built-in's
place), so :func:`unique_tools` refuses them, naming both sources, unless both come from the
same source: a ``@tool`` function defined again by re-running its cell, or the built-in tools
named twice (``--tools notebook,run_python``), where the later one wins as before.

:func:`tool_source` names where a tool came from, :func:`tool_mark` is its name as ``%agent
status`` shows it (an MCP tool with its server), and :func:`builtin_writes` lets the approval
policy treat any tool named like a built-in that writes as writing, whatever its own flags (an
MCP server's ``readOnlyHint``) say. This module must never run a tool or contact a server.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ..agent import AgentTool
from .function_tool import FunctionExecute
from .mcp.convert import McpExecute
from .mcp.target import agent_tool_name

BUILTIN_SOURCE = "the built-in notebook tools"


class ToolNameClash(ValueError):
    """Two tools of one run share a name and come from different sources."""


def mcp_server_of(tool: AgentTool) -> str | None:
    """The name of the MCP server ``tool`` calls, or None for any other tool."""
    execute = tool.execute
    return execute.server.name if isinstance(execute, McpExecute) else None


def _is_builtin(tool: AgentTool) -> bool:
    execute = tool.execute
    return (
        isinstance(execute, FunctionExecute)
        and not execute.registered
        and getattr(execute.fn, "__module__", None) == "pi_notebook.tools.notebook"
        and tool.name in _builtin_flags()
    )


def tool_source(tool: AgentTool, given: str | None = None) -> str:
    """Where ``tool`` came from, in words (``given``, e.g. the variable, when unrecognised)."""
    server = mcp_server_of(tool)
    if server is not None:
        return f"MCP server {server!r}"
    if _is_builtin(tool):
        return BUILTIN_SOURCE
    if isinstance(tool.execute, FunctionExecute) and tool.execute.registered:
        return f"the @tool function {tool.name!r}"
    return given or f"the AgentTool {tool.name!r}"


def tool_mark(tool: AgentTool) -> str:
    """``tool``'s name, with its server for an MCP tool (``git__status (MCP git)``)."""
    server = mcp_server_of(tool)
    return f"{tool.name} (MCP {server})" if server is not None else tool.name


def hidden_server(tool: AgentTool) -> str | None:
    """The MCP server of a tool whose name does not already say it (``prefix=False``), else
    None: what an approval request must add so the tool cannot pass for a built-in."""
    server = mcp_server_of(tool)
    if server is None or tool.name.startswith(agent_tool_name(server, "")):
        return None
    return server


def tool_marks(tools: Sequence[AgentTool]) -> dict[str, str]:
    """Name -> :func:`tool_mark` for the MCP tools among ``tools`` (what a tool card shows)."""
    return {tool.name: tool_mark(tool) for tool in tools if mcp_server_of(tool) is not None}


def unique_tools(sourced: Sequence[tuple[AgentTool, str]]) -> list[AgentTool]:
    """The tools of ``(tool, source)`` pairs, one per name; :class:`ToolNameClash` when two of
    one name come from different sources (of the same source, the later one wins)."""
    unique: dict[str, tuple[AgentTool, str]] = {}
    for item, source in sourced:
        earlier = unique.pop(item.name, None)
        if earlier is not None and earlier[1] != source:
            raise ToolNameClash(
                f"two tools are named {item.name!r}: one from {earlier[1]}, one from {source}; "
                "drop one, or rename it (mcp_tools prefixes its tools with the server's name "
                "unless prefix=False)"
            )
        unique[item.name] = (item, source)
    return [item for item, _ in unique.values()]


@functools.cache
def _builtin_flags() -> dict[str, bool]:
    """Each built-in tool's name -> whether it writes (made once, from the tools themselves)."""
    from .notebook import notebook_tools

    return {made.name: made.writes_namespace for made in notebook_tools({})}


def builtin_writes(name: str) -> bool:
    """Whether a built-in tool of this name writes variables or runs code."""
    return _builtin_flags().get(name, False)


__all__ = [
    "BUILTIN_SOURCE",
    "ToolNameClash",
    "builtin_writes",
    "hidden_server",
    "mcp_server_of",
    "tool_mark",
    "tool_marks",
    "tool_source",
    "unique_tools",
]
