"""MCP tools and results in the agent's terms: ``AgentTool``, ``AgentToolResult``, progress.

A server's tool becomes an :class:`AgentTool` whose parameters are the tool's input schema (the
loop validates and coerces arguments against it, as for any tool) and whose ``execute`` calls
the server. Text, image and embedded-resource content become result content, ``isError`` an
error (raised, as tools fail), ``structuredContent`` the result's ``details``, and progress
notifications partial results. A tool writes (``--approve writes`` asks) only when its
annotations say it changes its environment: ``readOnlyHint`` false or ``destructiveHint`` true.

This module must never call a server itself (:class:`McpServer` does) or drop content silently:
content with no agent equivalent (audio, binary resources) is described in a text block.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...agent import AgentTool, AgentToolResult, ToolFailure
from ...ai import AbortSignal, ImageContent, TextContent
from .target import agent_tool_name

if TYPE_CHECKING:
    from mcp.types import CallToolResult, ContentBlock, ToolAnnotations
    from mcp.types import Tool as McpTool

    from .server import McpServer


DESCRIPTION_CHARS = 4_000
"""At most this much of a tool's description goes to the model (a server writes it, not us)."""
DESCRIPTION_CUT = "\n[… {n} characters of the server's description cut]"


def make_agent_tool(server: McpServer, tool: McpTool, prefix: bool = True) -> AgentTool:
    """The agent's view of one of ``server``'s tools: ``<server>__<name>`` (``prefix=False``:
    the tool's own name), labelled with the server, its description capped."""
    return AgentTool(
        name=agent_tool_name(server.name if prefix else None, tool.name),
        label=f"{tool.title or tool.name} (MCP {server.name})",
        description=capped_description(tool.description or tool.title or ""),
        parameters=dict(tool.input_schema),
        execute=McpExecute(server, tool.name),
        writes_namespace=writes(tool.annotations),
    )


def capped_description(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """``text``, or its first ``limit`` characters and a note of how many were cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + DESCRIPTION_CUT.format(n=len(text) - limit)


def writes(annotations: ToolAnnotations | None) -> bool:
    """Whether a tool says it changes its environment (unannotated tools do not)."""
    if annotations is None or annotations.read_only_hint is True:
        return False
    return annotations.read_only_hint is False or annotations.destructive_hint is True


class McpExecute:
    """The ``execute`` of an MCP tool: the validated arguments go to the server."""

    def __init__(self, server: McpServer, tool_name: str) -> None:
        self.server = server
        self.tool_name = tool_name

    async def __call__(
        self,
        tool_call_id: str,
        params: Any,
        signal: AbortSignal | None,
        on_update: Callable[[AgentToolResult], None],
    ) -> AgentToolResult:
        arguments = dict(params) if isinstance(params, dict) else {}

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            on_update(progress_result(progress, total, message))

        result = await self.server.call_tool(self.tool_name, arguments, progress, signal)
        return agent_result(result)


def agent_result(result: CallToolResult) -> AgentToolResult:
    """A tool result for the agent; raises :class:`ToolFailure` when ``isError`` is set."""
    content = agent_content(result.content)
    details = result.structured_content
    if result.is_error:
        text = "\n".join(block.text for block in content if isinstance(block, TextContent))
        raise ToolFailure(text or "the MCP tool reported an error without a message", details)
    return AgentToolResult(content=content, details=details)


def agent_content(blocks: list[ContentBlock]) -> list[TextContent | ImageContent]:
    """MCP content blocks as text and image blocks, in order."""
    from mcp import types

    content: list[TextContent | ImageContent] = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            content.append(TextContent(text=block.text))
        elif isinstance(block, types.ImageContent):
            content.append(ImageContent(data=block.data, mime_type=block.mime_type))
        elif isinstance(block, types.EmbeddedResource):
            content.append(_resource(block.resource))
        elif isinstance(block, types.ResourceLink):
            about = f" ({block.description})" if block.description else ""
            content.append(TextContent(text=f"[resource link {block.name}: {block.uri}]{about}"))
        elif isinstance(block, types.AudioContent):
            size = _decoded_size(block.data)
            content.append(TextContent(text=f"[audio {block.mime_type}, {size} bytes, not shown]"))
        else:
            content.append(TextContent(text=f"[{getattr(block, 'type', 'unknown')} content]"))
    return content


def _resource(resource: Any) -> TextContent | ImageContent:
    from mcp import types

    mime = resource.mime_type or ""
    if isinstance(resource, types.TextResourceContents):
        return TextContent(text=f"[resource {resource.uri}]\n{resource.text}")
    if isinstance(resource, types.BlobResourceContents) and mime.startswith("image/"):
        return ImageContent(data=resource.blob, mime_type=mime)
    size = _decoded_size(getattr(resource, "blob", ""))
    return TextContent(text=f"[resource {resource.uri}: {mime or 'binary'}, {size} bytes]")


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return 0


def progress_result(value: float, total: float | None, message: str | None) -> AgentToolResult:
    """A progress notification as a partial result (``tool_execution_update``)."""
    amount = f"{value:g}/{total:g}" if total is not None else f"{value:g}"
    text = f"{message} ({amount})" if message else amount
    return AgentToolResult(
        content=[TextContent(text=text)],
        details={"progress": value, "total": total, "message": message},
    )


__all__ = [
    "DESCRIPTION_CHARS",
    "McpExecute",
    "agent_content",
    "agent_result",
    "capped_description",
    "make_agent_tool",
    "progress_result",
    "writes",
]
