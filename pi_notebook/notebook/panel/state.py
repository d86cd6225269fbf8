"""The panel's reducer: agent events -> a JSON-serialisable view state plus delta ops.

:class:`PanelState` keeps ``data`` (what a snapshot sends: status line, transcript, tool cards,
lifecycle tree, queue, step and approval state) and writes, for every change, an op to its
:class:`~.ops.OpSink` so a view can follow along with ``apply_ops``. The per-token path is
lean: a text delta appends the delta to a list of parts and emits one ``append`` op with a
path object built once per block; nothing copies the message or the transcript per token.
Structural values put into ops are copies, so later changes to ``data`` never leak into ops
still waiting to be sent. This module must stay pure: no I/O, no widgets, no event loop.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from ...ai import redact
from .ops import OpSink, Path

#: Longest tool-result text kept in the state (the rest is cut with a note).
MAX_RESULT_CHARS = 100_000
#: Image types the panel shows (SVG is left out: it can carry script).
IMAGE_TYPES = frozenset(("image/png", "image/jpeg", "image/gif", "image/webp"))
STATES = ("idle", "streaming", "running-tools", "aborted", "error", "done")


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _content_parts(content: Any) -> tuple[str, list[dict[str, str]]]:
    """(text, images) of a message or tool-result content (str or list of blocks)."""
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    images: list[dict[str, str]] = []
    for block in content or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "image":
            if block.mime_type in IMAGE_TYPES:
                images.append({"mime": block.mime_type, "data": block.data})
            else:
                texts.append(f"[image {block.mime_type}]")
    text = "\n".join(texts)
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + f"\n[… {len(text) - MAX_RESULT_CHARS} more characters]"
    return text, images


def _args_text(arguments: Any) -> str:
    """A tool call's final arguments, redacted (the streamed ones are replaced by these)."""
    try:
        text = json.dumps(arguments, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = str(arguments)
    return redact(text)


def _namespace_diff(details: Any) -> dict[str, list[str]] | None:
    diff = details.get("namespace_diff") if isinstance(details, dict) else None
    if not isinstance(diff, dict):
        return None
    return {k: [str(n) for n in diff.get(k, [])] for k in ("created", "changed", "deleted")}


def initial_state(model: str = "", step: bool = False) -> dict[str, Any]:
    return {
        "v": 1,
        "status": {
            "state": "idle",
            "model": model,
            "turn": 0,
            "tokens_in": 0,
            "tokens_out": 0,
            "cost": 0.0,
            "elapsed_ms": 0,
            "error": None,
            "note": None,
        },
        "messages": [],
        "tools": {},
        "lifecycle": [],
        "queue": [],
        "step": {"enabled": step, "held": None, "count": 0},
        "approvals": [],
    }


class _OpenBlock:
    """A string growing while it streams (a text/thinking block's ``text``, a tool card's
    ``args_text``): its parts and its op path (built once), joined only when read."""

    __slots__ = ("block", "key", "parts", "path")

    def __init__(self, block: dict[str, Any], path: Path, key: str = "text") -> None:
        self.block = block
        self.key = key
        self.parts: list[str] = []
        self.path = path

    def materialize(self) -> None:
        if self.parts:
            self.block[self.key] += "".join(self.parts)
            self.parts = []


class PanelState:
    """Reduces agent events (pydantic models) into ``data``, writing ops to ``sink``."""

    def __init__(
        self,
        sink: OpSink,
        *,
        model: str = "",
        step: bool = False,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.sink = sink
        self.data: dict[str, Any] = initial_state(model, step)
        self.events: list[dict[str, Any]] = []
        self._clock: Callable[[], float] = clock or (lambda: time.time() * 1000.0)
        self._t0: float | None = None
        # Per assistant message being streamed: content index -> open block / tool call id.
        self._message_index: int | None = None
        self._blocks: dict[int, _OpenBlock] = {}
        self._tool_of_index: dict[int, str] = {}
        self._open_args: dict[str, _OpenBlock] = {}
        self._run_node: int | None = None
        self._turn_node: int | None = None
        self._message_node: int | None = None
        self._tool_nodes: dict[str, int] = {}
        self._updates = 0
        self._tool_started: dict[str, float] = {}
        self.ended = False

    # -- helpers ---------------------------------------------------------------------------

    def _now(self) -> float:
        """Milliseconds since the run started (0 before it did)."""
        now = self._clock()
        if self._t0 is None:
            return 0.0
        return round(now - self._t0, 1)

    def _set(self, path: Path, value: Any) -> None:
        target: Any = self.data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        self.sink.set(path, _copy(value))

    def _status(self, key: str, value: Any) -> None:
        if self.data["status"].get(key) != value:
            self._set(["status", key], value)

    def _node(self, kind: str, label: str, parent: int | None, detail: str = "") -> int:
        nodes = self.data["lifecycle"]
        node: dict[str, Any] = {
            "id": len(nodes),
            "parent": parent,
            "kind": kind,
            "label": label,
            "detail": detail,
            "start": self._now(),
            "end": None,
            "updates": 0,
        }
        nodes.append(node)
        self.sink.push(["lifecycle"], _copy(node))
        return int(node["id"])

    def _end_node(self, index: int | None, **extra: Any) -> None:
        if index is None:
            return
        self._set(["lifecycle", index, "end"], self._now())
        for key, value in extra.items():
            self._set(["lifecycle", index, key], value)

    def materialize(self) -> dict[str, Any]:
        """Fold buffered text parts into ``data`` and return it (for snapshots)."""
        self._materialize_open()
        if self._t0 is not None and not self.ended:
            self.data["status"]["elapsed_ms"] = self._elapsed()
        return self.data

    def _elapsed(self) -> int:
        return int(self._now()) if self._t0 is not None else 0

    # -- the reducer -----------------------------------------------------------------------

    def apply(self, event: Any) -> None:
        kind = event.type
        if kind == "message_update":
            self._on_update(event)
            return
        if self._t0 is None:
            self._t0 = self._clock()
        self.events.append({"type": kind, "t": self._now(), **_event_info(event)})
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(event)

    def _on_agent_start(self, event: Any) -> None:
        self.ended = False
        self._status("state", "streaming")
        self._status("error", None)
        self._run_node = self._node("run", "Agent Run", None)

    def _on_turn_start(self, event: Any) -> None:
        self._status("turn", self.data["status"]["turn"] + 1)
        self._status("state", "streaming")
        turn = self.data["status"]["turn"]
        self._turn_node = self._node("turn", f"Turn {turn}", self._run_node)

    def _on_turn_end(self, event: Any) -> None:
        self._end_node(self._turn_node)
        self._turn_node = None
        self._status("elapsed_ms", self._elapsed())

    def _on_message_start(self, event: Any) -> None:
        message = event.message
        role = getattr(message, "role", "custom")
        parent = self._turn_node if self._turn_node is not None else self._run_node
        self._message_node = self._node("message", "Message", parent, role)
        self._updates = 0
        index = len(self.data["messages"])
        if role == "assistant":
            entry: dict[str, Any] = {
                "role": "assistant",
                "blocks": [],
                "stop_reason": None,
                "error": None,
            }
            self._message_index = index
            self._blocks = {}
            self._open_args = {}
            self._tool_of_index = {}
            self._status("state", "streaming")
        else:
            entry = _plain_entry(message)
            self._message_index = None
        self.data["messages"].append(entry)
        self.sink.push(["messages"], _copy(entry))

    def _on_update(self, event: Any) -> None:
        self._updates += 1
        sub = event.assistant_message_event
        kind = sub.type
        if kind in ("text_delta", "thinking_delta"):
            open_block = self._blocks.get(sub.content_index) or self._open_block(
                sub.content_index, kind[: -len("_delta")]
            )
            if open_block is not None:
                open_block.parts.append(sub.delta)
                self.sink.append(open_block.path, sub.delta)
            self.events.append({"type": "message_update", "t": self._now(), "update": kind})
            return
        if kind == "toolcall_delta":
            tool_id = self._tool_of_index.get(sub.content_index)
            if tool_id is None:
                tool_id = self._tool_block(sub.content_index, sub.partial)
            if tool_id is not None:
                args = self._open_args.get(tool_id)
                if args is None:
                    card = self.data["tools"][tool_id]
                    args = _OpenBlock(card, ["tools", tool_id, "args_text"], "args_text")
                    self._open_args[tool_id] = args
                args.parts.append(sub.delta)
                self.sink.append(args.path, sub.delta)
            self.events.append({"type": "message_update", "t": self._now(), "update": kind})
            return
        self.events.append({"type": "message_update", "t": self._now(), "update": kind})
        if kind in ("text_start", "thinking_start"):
            if sub.content_index not in self._blocks:
                self._open_block(sub.content_index, kind[: -len("_start")])
        elif kind in ("text_end", "thinking_end"):
            open_block = self._blocks.get(sub.content_index) or self._open_block(
                sub.content_index, kind[: -len("_end")]
            )
            if open_block is not None:
                open_block.materialize()
                final = redact(sub.content)  # the block streamed raw; it is kept redacted
                if open_block.block["text"] != final:
                    self._set([*open_block.path], final)
        elif kind == "toolcall_start":
            self._tool_block(sub.content_index, sub.partial)
        elif kind == "toolcall_end":
            call = sub.tool_call
            tool_id = self._tool_of_index.get(sub.content_index) or self._tool_block(
                sub.content_index, sub.partial
            )
            if tool_id is not None:
                args = self._open_args.pop(tool_id, None)
                if args is not None:
                    args.materialize()
                self._set(["tools", tool_id, "args_text"], _args_text(call.arguments))

    def _mi(self) -> int:
        index = self._message_index
        assert index is not None
        return index

    def _message_entry(self) -> dict[str, Any] | None:
        if self._message_index is None:
            return None
        entry: dict[str, Any] = self.data["messages"][self._message_index]
        return entry

    def _materialize_open(self) -> None:
        for open_block in self._blocks.values():
            open_block.materialize()
        for args in self._open_args.values():
            args.materialize()

    def _open_block(self, content_index: int, kind: str) -> _OpenBlock | None:
        entry = self._message_entry()
        if entry is None:  # an update outside an assistant message: nothing to grow
            return None
        block = {"type": kind, "text": ""}
        position = len(entry["blocks"])
        entry["blocks"].append(block)
        self.sink.push(["messages", self._mi(), "blocks"], dict(block))
        path: Path = ["messages", self._mi(), "blocks", position, "text"]
        open_block = _OpenBlock(block, path)
        self._blocks[content_index] = open_block
        return open_block

    def _tool_block(self, content_index: int, partial: Any) -> str | None:
        entry = self._message_entry()
        try:
            call = partial.content[content_index]
        except (AttributeError, IndexError, TypeError):
            return None
        tool_id = getattr(call, "id", None)
        if entry is None or not tool_id:
            return None
        self._tool_of_index[content_index] = tool_id
        block = {"type": "toolCall", "id": tool_id, "name": call.name}
        entry["blocks"].append(block)
        self.sink.push(["messages", self._mi(), "blocks"], dict(block))
        self._new_card(tool_id, call.name, "")
        return str(tool_id)

    def _new_card(self, tool_id: str, name: str, args_text: str) -> None:
        if tool_id in self.data["tools"]:
            return
        card: dict[str, Any] = {
            "id": tool_id,
            "name": name,
            "args_text": args_text,
            "status": "pending",
            "start": None,
            "duration_ms": None,
            "result_text": "",
            "images": [],
            "is_error": False,
            "diff": None,
        }
        self._set(["tools", tool_id], card)

    def _on_message_end(self, event: Any) -> None:
        message = event.message
        role = getattr(message, "role", "custom")
        self._end_node(self._message_node, updates=self._updates)
        self._message_node = None
        entry = self._message_entry()
        if role != "assistant" or entry is None:
            return
        self._materialize_open()
        self._reconcile(entry, message)
        self._set(["messages", self._mi(), "stop_reason"], message.stop_reason)
        if message.error_message:
            error = redact(message.error_message)
            self._set(["messages", self._mi(), "error"], error)
            self._status("error", error)
        if message.provider and message.model:  # the model may change between turns
            self._status("model", f"{message.provider}/{message.model}")
        usage = message.usage
        status = self.data["status"]
        self._status(
            "tokens_in", status["tokens_in"] + usage.input + usage.cache_read + usage.cache_write
        )
        self._status("tokens_out", status["tokens_out"] + usage.output)
        self._status("cost", round(status["cost"] + usage.cost.total, 6))
        self._status("elapsed_ms", self._elapsed())
        self._message_index = None
        self._blocks = {}
        self._open_args = {}
        self._tool_of_index = {}

    def _reconcile(self, entry: dict[str, Any], message: Any) -> None:
        """Make the blocks match the final message (providers that skipped updates)."""
        final: list[dict[str, Any]] = []
        for block in message.content:
            if block.type == "text":
                final.append({"type": "text", "text": redact(block.text)})
            elif block.type == "thinking":
                final.append({"type": "thinking", "text": redact(block.thinking)})
            elif block.type == "toolCall":
                final.append({"type": "toolCall", "id": block.id, "name": block.name})
                self._new_card(block.id, block.name, _args_text(block.arguments))
        final = [b for b in final if b["type"] == "toolCall" or b["text"]]
        current = [b for b in entry["blocks"] if b["type"] == "toolCall" or b["text"]]
        if current != final:
            self._set(["messages", self._mi(), "blocks"], final)

    def _on_tool_execution_start(self, event: Any) -> None:
        tool_id = event.tool_call_id
        if tool_id not in self.data["tools"]:
            self._new_card(tool_id, event.tool_name, _args_text(event.args))
        self._tool_started[tool_id] = self._clock()
        self._set(["tools", tool_id, "status"], "running")
        self._set(["tools", tool_id, "start"], self._now())
        self._status("state", "running-tools")
        parent = self._turn_node if self._turn_node is not None else self._run_node
        self._tool_nodes[tool_id] = self._node("tool", "Tool Execution", parent, event.tool_name)

    def _on_tool_execution_update(self, event: Any) -> None:
        tool_id = event.tool_call_id
        if tool_id not in self.data["tools"]:
            return
        self._set(["tools", tool_id, "status"], "progress")
        self._result(tool_id, event.partial_result)
        node = self._tool_nodes.get(tool_id)
        if node is not None:
            count = self.data["lifecycle"][node]["updates"] + 1
            self._set(["lifecycle", node, "updates"], count)

    def _result(self, tool_id: str, result: Any) -> None:
        text, images = _content_parts(getattr(result, "content", []))
        text = redact(text)  # the card keeps the redacted text: compare with that
        card = self.data["tools"][tool_id]
        if card["result_text"] != text:
            self._set(["tools", tool_id, "result_text"], text)
        if card["images"] != images:
            self._set(["tools", tool_id, "images"], images)
        diff = _namespace_diff(getattr(result, "details", None))
        if diff is not None and card["diff"] != diff:
            self._set(["tools", tool_id, "diff"], diff)

    def _on_tool_execution_end(self, event: Any) -> None:
        tool_id = event.tool_call_id
        if tool_id not in self.data["tools"]:
            self._new_card(tool_id, event.tool_name, _args_text(getattr(event, "args", {})))
        self._result(tool_id, event.result)
        started = self._tool_started.pop(tool_id, None)
        duration = round(self._clock() - started, 1) if started is not None else None
        self._set(["tools", tool_id, "duration_ms"], duration)
        self._set(["tools", tool_id, "is_error"], bool(event.is_error))
        self._set(["tools", tool_id, "status"], "error" if event.is_error else "done")
        self._end_node(self._tool_nodes.pop(tool_id, None))

    def _on_agent_end(self, event: Any) -> None:
        final = "done"
        for message in reversed(getattr(event, "messages", []) or []):
            if getattr(message, "role", None) == "assistant":
                if message.stop_reason == "aborted":
                    final = "aborted"
                elif message.stop_reason == "error":
                    final = "error"
                break
        for tool_id, card in list(self.data["tools"].items()):
            if card["status"] in ("pending", "running", "progress"):
                self._set(["tools", tool_id, "status"], "error")
        self._end_node(self._turn_node)
        self._turn_node = None
        self._end_node(self._run_node)
        self._status("state", final)
        self._status("elapsed_ms", self._elapsed())
        self.ended = True
        if self.data["step"]["held"] is not None:
            self._set(["step", "held"], None)

    # -- state set from the widget (not from events) ---------------------------------------

    def set_queue(self, queue: list[dict[str, str]]) -> None:
        if self.data["queue"] != queue:
            self._set(["queue"], queue)

    def set_held(self, event_type: str | None) -> None:
        self._set(["step", "held"], event_type)
        if event_type is not None:
            self._set(["step", "count"], self.data["step"]["count"] + 1)

    def set_note(self, note: str | None) -> None:
        self._status("note", note)

    def set_approvals(self, approvals: list[dict[str, Any]]) -> None:
        self._set(["approvals"], approvals)


def _plain_entry(message: Any) -> dict[str, Any]:
    role = getattr(message, "role", "custom")
    text, images = _content_parts(getattr(message, "content", ""))
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
        return {"role": "user", "text": redact(text), "images": images}
    return {"role": "custom", "custom_role": str(role), "text": redact(text), "images": images}


def _event_info(event: Any) -> dict[str, Any]:
    info: dict[str, Any] = {}
    message = getattr(event, "message", None)
    if message is not None:
        info["role"] = getattr(message, "role", None)
    tool_id = getattr(event, "tool_call_id", None)
    if tool_id is not None:
        info["tool_call_id"] = tool_id
        info["tool_name"] = event.tool_name
    if event.type == "tool_execution_end":
        info["is_error"] = bool(event.is_error)
    if event.type == "agent_end":
        info["messages"] = len(getattr(event, "messages", []) or [])
    return info


__all__ = ["IMAGE_TYPES", "STATES", "PanelState", "initial_state", "redact"]
