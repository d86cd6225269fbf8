"""The parts of the panel state built from one value: the initial state, a transcript entry
from a message (a run's notebook context as its own collapsed entry), a tool card, its
result's text and images, a compaction marker.

Everything shown is redacted here or by the reducer before it enters the state; images keep
only raster types (SVG can carry script). This module must stay pure.
"""

from __future__ import annotations

import json
from typing import Any, get_args

from ...agent import truncated_call_text
from ...ai import message_text, redact
from ..context_sent import entry_title, left_out_note, sent_cells
from ..notebook_context import is_notebook_context
from ..render import preview
from .contract import (
    CompactionEntry,
    ContextCell,
    CustomEntry,
    Image,
    NamespaceDiff,
    NotebookContextEntry,
    PanelData,
    RunState,
    ToolCard,
    ToolResultEntry,
    ToolStatus,
    UserEntry,
)
from .markdown import render_markdown, render_prompt
from .status_line import initial_status
from .timeline import empty_timeline

#: Longest tool-result text kept in the state (the rest is cut with a note).
MAX_RESULT_CHARS = 100_000
#: Image types the panel shows (SVG is left out: it can carry script).
IMAGE_TYPES = frozenset(("image/png", "image/jpeg", "image/gif", "image/webp"))
#: The run states and a tool card's statuses, as the contract spells them (``rejected`` is a
#: call the loop refused before running the tool because the model's call was malformed:
#: unknown tool, invalid or truncated arguments).
STATES: tuple[RunState, ...] = get_args(RunState)
TOOL_STATUSES: tuple[ToolStatus, ...] = get_args(ToolStatus)


def initial_state(model: str = "", step: bool = False, granularity: str = "") -> PanelData:
    return {
        "v": 1,
        "status": initial_status(model),
        "messages": [],
        "tools": {},
        "lifecycle": [],
        "queue": [],
        "step": {
            "enabled": step,
            "granularity": granularity,
            "held": None,
            "what": None,
            "next": None,
            "count": 0,
        },
        "approvals": [],
        "context": None,
        "timeline": empty_timeline(),
    }


def content_parts(content: Any, limit: int = MAX_RESULT_CHARS) -> tuple[str, list[Image]]:
    """(text, images) of a message or tool-result content: images the panel shows come apart,
    others read ``[image MIME]``; the text at most ``limit`` characters and how many more."""
    if isinstance(content, str):
        return content, []
    images: list[Image] = [
        {"mime": block.mime_type, "data": block.data}
        for block in content or []
        if getattr(block, "type", None) == "image" and block.mime_type in IMAGE_TYPES
    ]
    return preview(message_text(content or [], hidden_images=IMAGE_TYPES), limit), images


def args_text(arguments: Any) -> str:
    """A tool call's final arguments, redacted, in the model's key order (the streamed ones are
    replaced by these)."""
    try:
        text = json.dumps(arguments, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        text = str(arguments)
    return redact(text)


def new_card(tool_id: str, name: str, arguments: str) -> ToolCard:
    """A tool call's card before it ran."""
    return {
        "id": tool_id,
        "name": name,
        "args_text": arguments,
        "status": "pending",
        "start": None,
        "duration_ms": None,
        "result_text": "",
        "images": [],
        "is_error": False,
        "diff": None,
        "displays": [],
        "not_run": None,
        "label": name,
        "approval": None,
    }


def not_run_reason(tool_name: str, text: str) -> str | None:
    """Why the loop refused a call without running its tool (the model's call was malformed),
    read from Pi's error texts; None when the tool ran (or was refused for another reason)."""
    if text == f"Tool {tool_name} not found":
        return "no tool of that name"
    if text.startswith(f'Validation failed for tool "{tool_name}"'):
        return "its arguments do not match the tool's schema"
    if text == truncated_call_text(tool_name):
        return "its arguments were cut off by the output limit"
    return None


def without_diff_line(text: str) -> str:
    """A notebook tool's result text without its ``namespace: ...`` line (the model reads it;
    the card shows the same diff as its own line)."""
    if "namespace: " not in text:
        return text
    return "\n".join(line for line in text.split("\n") if not line.startswith("namespace: "))


def namespace_diff(details: Any) -> NamespaceDiff | None:
    diff = details.get("namespace_diff") if isinstance(details, dict) else None
    if not isinstance(diff, dict):
        return None
    created, changed, deleted = ([str(n) for n in diff.get(k, [])] for k in _DIFF_KEYS)
    found: NamespaceDiff = {"created": created, "changed": changed, "deleted": deleted}
    imported = diff.get("imported")
    if isinstance(imported, list) and imported:  # only when the call imported a module
        found["imported"] = [str(n) for n in imported]
    return found


_DIFF_KEYS = ("created", "changed", "deleted")
DIFF_LABELS = ("created", "imported", "changed", "deleted")
"""The diff's lists in the order the card's line names them."""


def notebook_context_entry(message: Any) -> NotebookContextEntry:
    """A run's notebook context: its title and its cells as the model was sent them."""
    cells = sent_cells(message)
    shown: list[ContextCell] = [
        {
            "number": cell.number,
            "source": redact(cell.source),
            "result": None if cell.result is None else redact(cell.result),
            "error": None if cell.error is None else redact(cell.error),
        }
        for cell in cells
    ]
    return {
        "role": "notebookContext",
        "title": entry_title(cells),
        "cells": shown,
        "left_out": left_out_note(message),
    }


def plain_entry(
    message: Any,
) -> UserEntry | ToolResultEntry | CustomEntry | NotebookContextEntry:
    """The transcript entry of a message that does not stream (user, tool result, notebook
    context, custom)."""
    role = getattr(message, "role", "custom")
    if is_notebook_context(message):
        return notebook_context_entry(message)
    text, images = content_parts(getattr(message, "content", ""))
    if role == "toolResult":
        return {
            "role": "toolResult",
            "tool_call_id": message.tool_call_id,
            "tool_name": message.tool_name,
            "text": redact(text),
            "images": images,
            "is_error": bool(message.is_error),
        }
    if role == "user":
        return {
            "role": "user",
            "html": render_prompt(redact(text)),  # its line breaks kept
            "images": images,
            "queued": None,
            "entered": None,
        }
    return {
        "role": "custom",
        "custom_role": str(role),
        "html": render_markdown(redact(text)),
        "images": images,
    }


def compaction_note(count: int) -> str:
    """``compacted 12 messages``: the marker the panel and plain mode show."""
    return f"compacted {count} message{'s' if count != 1 else ''}"


def compaction_entry(count: int) -> CompactionEntry:
    return {"role": "compaction", "count": count, "text": compaction_note(count)}


__all__ = [
    "DIFF_LABELS",
    "IMAGE_TYPES",
    "MAX_RESULT_CHARS",
    "STATES",
    "TOOL_STATUSES",
    "args_text",
    "compaction_entry",
    "compaction_note",
    "content_parts",
    "initial_state",
    "namespace_diff",
    "new_card",
    "not_run_reason",
    "notebook_context_entry",
    "plain_entry",
    "without_diff_line",
]
