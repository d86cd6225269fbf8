"""pi_notebook.tools — tools made from Python functions, and the built-in notebook tools.

- :func:`tool` (``@tool``): an ``AgentTool`` from a typed Python function.
- :func:`notebook_tools`: ``list_variables``, ``inspect_variable``, ``run_python``,
  ``set_variable`` on the notebook namespace (``%%agent --tools notebook``).
- :func:`undo` / ``%agent undo``: put back the variables a conversation's last run wrote (each
  conversation has its own record; what the user changed since is kept; modules the agent's
  imports bound stay unless ``include_imports``, ``%agent undo --all``);
  :func:`protect`: names the agent may not write.
- Approvals: :class:`ApprovalRequest`, :data:`Approver` (its answers: :data:`ApprovalAnswer`),
  :func:`set_approver`, :class:`ApprovalGate` / :func:`approval_hook` (``%%agent --approve
  writes|all``; *Always allow*, *Deny and stop*); :class:`ApprovalTimeout` and
  :func:`approval_timeout` (``PI_NOTEBOOK_APPROVAL_TIMEOUT``) for an approval nobody answers.
- MCP servers: :func:`mcp_tools` (a server's tools as ``AgentTool`` s, needs the ``mcp`` extra),
  :func:`close_mcp_servers` / :func:`close_mcp_servers_soon` (``%agent reset --mcp``),
  :func:`mcp_status_lines` (``%agent status``).
- The notebook's cells as the kernel knows them (:mod:`.cells`): :func:`cell_log` (each
  failing cell's error, from IPython's ``post_run_cell``), :func:`cell_at`, :func:`recent_cells`.
- Tool names: :func:`unique_tools` (one tool per name, :class:`ToolNameClash` naming both
  sources), :func:`tool_source`, :func:`tool_mark` / :func:`mcp_server_of` (an MCP tool's server).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..agent import AgentTool
from .approval import (
    APPROVAL_ANSWERS,
    APPROVAL_MODES,
    APPROVAL_TIMEOUT_ENV,
    DENIED,
    DENIED_AND_STOPPED,
    ApprovalAnswer,
    ApprovalGate,
    ApprovalMode,
    ApprovalRequest,
    ApprovalTimeout,
    Approver,
    approval_hook,
    approval_timeout,
    as_answer,
    current_approver,
    format_seconds,
    preferring_programmatic,
    set_approver,
    writes_namespace,
)
from .cells import (
    Cell,
    CellError,
    CellLog,
    cell_at,
    cell_log,
    cells_text,
    current_number,
    cut_text,
    recent_cells,
)
from .displays import display_note
from .function_tool import is_function_tool, refresh_tools, tool
from .journal import UndoJournal, UndoReport
from .mcp import McpServerError, close_mcp_servers, mcp_tools, mcp_tools_async
from .mcp import close_soon as close_mcp_servers_soon
from .mcp import status_lines as mcp_status_lines
from .notebook import (
    NOTEBOOK_TOOL_NAMES,
    ToolError,
    Workspace,
    begin_run,
    notebook_tools,
    protect,
    undo,
    unprotect,
    workspace,
)
from .results import to_result
from .summary import summarize
from .tool_names import (
    ToolNameClash,
    mcp_server_of,
    tool_mark,
    tool_marks,
    tool_source,
    unique_tools,
)

BUILTIN_COLLECTIONS: dict[str, Callable[[dict[str, Any] | None], list[AgentTool]]] = {
    "notebook": lambda namespace: notebook_tools(namespace),
}
"""Tool collections ``%%agent --tools`` knows by name (after the notebook's own variables)."""


def builtin_tools(name: str, namespace: dict[str, Any] | None = None) -> list[AgentTool] | None:
    """A built-in collection, or one tool of one, by name; ``None`` if there is none."""
    collection = BUILTIN_COLLECTIONS.get(name)
    if collection is not None:
        return collection(namespace)
    for make in BUILTIN_COLLECTIONS.values():
        for item in make(namespace):
            if item.name == name:
                return [item]
    return None


__all__ = [
    "APPROVAL_ANSWERS",
    "APPROVAL_MODES",
    "APPROVAL_TIMEOUT_ENV",
    "BUILTIN_COLLECTIONS",
    "DENIED",
    "DENIED_AND_STOPPED",
    "NOTEBOOK_TOOL_NAMES",
    "ApprovalAnswer",
    "ApprovalGate",
    "ApprovalMode",
    "ApprovalRequest",
    "ApprovalTimeout",
    "Approver",
    "Cell",
    "CellError",
    "CellLog",
    "McpServerError",
    "ToolError",
    "ToolNameClash",
    "UndoJournal",
    "UndoReport",
    "Workspace",
    "approval_hook",
    "approval_timeout",
    "as_answer",
    "begin_run",
    "builtin_tools",
    "cell_at",
    "cell_log",
    "cells_text",
    "close_mcp_servers",
    "close_mcp_servers_soon",
    "current_approver",
    "current_number",
    "cut_text",
    "display_note",
    "format_seconds",
    "is_function_tool",
    "mcp_server_of",
    "mcp_status_lines",
    "mcp_tools",
    "mcp_tools_async",
    "notebook_tools",
    "preferring_programmatic",
    "protect",
    "recent_cells",
    "refresh_tools",
    "set_approver",
    "summarize",
    "to_result",
    "tool",
    "tool_mark",
    "tool_marks",
    "tool_source",
    "undo",
    "unique_tools",
    "unprotect",
    "workspace",
    "writes_namespace",
]
