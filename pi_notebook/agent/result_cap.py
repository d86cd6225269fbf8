"""How much of one tool result the model gets: at most :func:`tool_result_chars` characters.

A tool can return anything (an MCP server a 10 MB page, ``inspect_variable`` a huge repr); all of
it would go to the model on every later request, into the transcript and into ``%agent
context``. :func:`cap_result` keeps a result whose text fits as it is (the same object: Pi's
events and texts are unchanged for normal-sized results); a longer one keeps its first
``limit`` characters of text, then :data:`CUT_NOTE`, and its whole text goes into the result's
``details`` under :data:`FULL_TEXT` (beside a dict's own keys; other details move under
``"details"``), where the user can still read it and the model never sees it.

The limit is :attr:`AgentTool.max_result_chars` for one tool, else
the ``tool_result_chars`` setting (:mod:`pi_notebook.settings`), else
:data:`DEFAULT_TOOL_RESULT_CHARS`.
This module must never drop an image or change a result that fits.
"""

from __future__ import annotations

from typing import Any

from ..ai import TextContent
from ..settings import TOOL_RESULT_CHARS
from .types import AgentToolResult

DEFAULT_TOOL_RESULT_CHARS: int = TOOL_RESULT_CHARS.default
TOOL_RESULT_CHARS_ENV = TOOL_RESULT_CHARS.variable
CUT_NOTE = "[… {n} characters cut; the whole value is in the tool's details]"
FULL_TEXT = "full_text"
"""The key of ``details`` that holds a cut result's whole text."""


def tool_result_chars() -> int:
    """The ``tool_result_chars`` setting (a positive whole number), else the default."""
    return TOOL_RESULT_CHARS.value()


def cap_result(result: AgentToolResult, limit: int) -> AgentToolResult:
    """``result`` with at most ``limit`` characters of text (see the module doc)."""
    content = result.content
    total = 0
    for block in content:
        if isinstance(block, TextContent):
            total += len(block.text)
    if total <= limit:
        return result
    kept: list[Any] = []
    room = limit
    whole: list[str] = []
    noted = False
    for block in content:
        if not isinstance(block, TextContent):
            kept.append(block)
            continue
        whole.append(block.text)
        if noted:
            continue
        if len(block.text) <= room:
            kept.append(block)
            room -= len(block.text)
            continue
        cut = CUT_NOTE.format(n=total - limit)
        kept.append(TextContent(text=f"{block.text[:room]}\n{cut}"))
        noted = True
    return result.model_copy(
        update={"content": kept, "details": _with_full_text(result.details, "\n".join(whole))}
    )


def _with_full_text(details: Any, text: str) -> dict[str, Any]:
    if details is None:
        return {FULL_TEXT: text}
    if isinstance(details, dict):
        return {**details, FULL_TEXT: text}
    return {"details": details, FULL_TEXT: text}


__all__ = [
    "CUT_NOTE",
    "DEFAULT_TOOL_RESULT_CHARS",
    "FULL_TEXT",
    "TOOL_RESULT_CHARS_ENV",
    "cap_result",
    "tool_result_chars",
]
