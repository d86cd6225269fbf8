"""The panel's reducer: agent events -> a JSON-serialisable view state plus delta ops.

:class:`PanelState` keeps ``data`` (what a snapshot sends: status line, transcript, tool cards,
lifecycle tree, queue, step and approval state) and writes, for every change, an op to its
:class:`~.ops.OpSink` so a view can follow along with ``apply_ops``.

Assistant text and thinking arrive as Markdown and leave as sanitised HTML rendered here (the
front end has no Markdown parser): a block's ``html`` lists its finished top-level blocks, each
rendered once (:class:`~.blocks.BlockStream`) and sent once (a block that finishes while shown
in the tail is spliced there and moved off its head, not resent); ``tail`` is the HTML of the
part still streaming, re-rendered when the sink flushes (``render``) and sent as a splice of
what changed; a tail longer than :data:`TAIL_LIMIT` is sent as ``raw`` text instead until its
block ends. When a block ends its whole text is rendered once, so the final HTML is exactly
:func:`~.markdown.render_markdown`'s.

The per-token path is lean: a text delta is appended to a list of parts and the sink is told
there is something to render; nothing copies the message or the transcript per token, and the
state keeps per-run counts, not a record per token. Structural values put into ops are
copies, so later changes to ``data`` never leak into ops still waiting to be sent. This module
must stay pure: no I/O, no widgets, no event loop.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, assert_never, get_args

from ...agent import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
    truncated_call_text,
)
from ...ai import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    redact,
)
from ..estimate import tokens_of_chars
from ..render import PREVIEW_CHARS, preview
from .blocks import BlockStream
from .contract import RunState, ToolStatus
from .markdown import render_markdown
from .ops import OpSink, Path, utf16_len

#: Longest tool-result text kept in the state (the rest is cut with a note).
MAX_RESULT_CHARS = 100_000
#: Image types the panel shows (SVG is left out: it can carry script).
IMAGE_TYPES = frozenset(("image/png", "image/jpeg", "image/gif", "image/webp"))
#: The run states and a tool card's statuses, as the contract spells them (``rejected`` is a
#: call the loop refused before running the tool because the model's call was malformed:
#: unknown tool, invalid or truncated arguments).
STATES: tuple[RunState, ...] = get_args(RunState)
TOOL_STATUSES: tuple[ToolStatus, ...] = get_args(ToolStatus)
#: Longest streaming tail (characters) sent as rendered HTML at every flush; a longer one is
#: sent as raw text until its block ends (so a frame's cost stays bounded).
TAIL_LIMIT = 2_000


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _content_parts(content: Any, limit: int = MAX_RESULT_CHARS) -> tuple[str, list[dict[str, str]]]:
    """(text, images) of a message or tool-result content (str or list of blocks), the text
    at most ``limit`` characters and how many more."""
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
    return preview("\n".join(texts), limit), images


def _args_text(arguments: Any) -> str:
    """A tool call's final arguments, redacted, in the model's key order (the streamed ones are
    replaced by these)."""
    try:
        text = json.dumps(arguments, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        text = str(arguments)
    return redact(text)


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


def _without_diff_line(text: str) -> str:
    """A notebook tool's result text without its ``namespace: ...`` line (the model reads it;
    the card shows the same diff as its own line)."""
    if "namespace: " not in text:
        return text
    return "\n".join(line for line in text.split("\n") if not line.startswith("namespace: "))


def _namespace_diff(details: Any) -> dict[str, list[str]] | None:
    diff = details.get("namespace_diff") if isinstance(details, dict) else None
    if not isinstance(diff, dict):
        return None
    return {k: [str(n) for n in diff.get(k, [])] for k in ("created", "changed", "deleted")}


def initial_state(model: str = "", step: bool = False, granularity: str = "") -> dict[str, Any]:
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
            "waiting_since": None,
            "est_in": 0,
            "est_out": 0,
            "estimated": False,
            "max_tokens": None,
        },
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
    }


class _OpenArgs:
    """A tool card's ``args_text`` growing while the model streams it: its parts and its op
    path (built once), joined only when read."""

    __slots__ = ("card", "parts", "path")

    def __init__(self, card: dict[str, Any], path: Path) -> None:
        self.card = card
        self.parts: list[str] = []
        self.path = path

    def materialize(self) -> None:
        if self.parts:
            self.card["args_text"] += "".join(self.parts)
            self.parts = []


class _OpenText:
    """A text or thinking block while it streams: new parts, the block stream splitting its
    Markdown into final blocks and the open tail, and its op path (built once)."""

    __slots__ = ("block", "dirty", "ended", "parts", "path", "stream")

    def __init__(self, block: dict[str, Any], path: Path) -> None:
        self.block = block
        self.parts: list[str] = []
        self.path = path
        self.stream: BlockStream | None = BlockStream(redact)
        self.dirty = False
        self.ended: str | None = None
        """The block's whole text once it ended (its HTML is then final)."""

    def render(self, sink: OpSink) -> None:
        """Fold the new parts in and send what changed: finished blocks, the tail."""
        self.dirty = False
        stream = self.stream
        if stream is None or not self.parts:
            return
        chunk = "".join(self.parts)
        self.parts = []
        stream.feed(chunk)
        block = self.block
        done = stream.advance()
        raw = len(stream.open) > TAIL_LIMIT
        tail = "" if raw else stream.tail_html()
        if done and block["raw"] is None and block["tail"]:
            # The view shows the old tail, which mostly holds the blocks that just finished:
            # splice it into them + the new tail, then move them off its head (nothing twice).
            self._tail(sink, "".join(done) + tail)
            for html in done:
                block["html"].append(html)
                block["tail"] = block["tail"][len(html) :]
                sink.move(self.path, utf16_len(html))
        else:
            for html in done:
                block["html"].append(html)
                sink.push([*self.path, "html"], html)
        if not raw:
            if block["raw"] is not None:
                self._set(sink, "raw", None)
            self._tail(sink, tail)
        elif block["raw"] is None or done:
            self._tail(sink, "")
            self._set(sink, "raw", stream.open)
        else:
            block["raw"] = stream.open
            sink.append([*self.path, "raw"], chunk)

    def end(self, sink: OpSink, text: str) -> None:
        """The block ended with ``text``: its whole HTML, rendered once, and no tail."""
        self.parts = []
        self.dirty = False
        self.stream = None
        self.ended = text
        final = BlockStream.finish(text)
        html: list[str] = self.block["html"]
        if final[: len(html)] == html:
            for item in final[len(html) :]:
                html.append(item)
                sink.push([*self.path, "html"], item)
        else:
            self._set(sink, "html", final)
        self._tail(sink, "")
        if self.block["raw"] is not None:
            self._set(sink, "raw", None)

    def _set(self, sink: OpSink, key: str, value: Any) -> None:
        self.block[key] = value
        sink.set([*self.path, key], _copy(value))

    def _tail(self, sink: OpSink, html: str) -> None:
        old: str = self.block["tail"]
        if old == html:
            return
        keep = _common_prefix(old, html)
        self.block["tail"] = html
        if keep < 16:
            sink.set([*self.path, "tail"], html)
        else:
            sink.splice([*self.path, "tail"], utf16_len(html[:keep]), html[keep:])


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (slices compare in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def text_block(kind: str) -> dict[str, Any]:
    """A text or thinking block of the view state, before any text arrived."""
    return {"type": kind, "html": [], "tail": "", "raw": None}


class PanelState:
    """Reduces agent events into ``data``, writing ops to ``sink`` (see the module docstring).

    ``render()`` folds the text streamed since the last call into HTML ops; the transport calls
    it before each frame, and ``materialize()`` before a snapshot.
    """

    def __init__(
        self,
        sink: OpSink,
        *,
        model: str = "",
        step: bool = False,
        granularity: str = "",
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.sink = sink
        self.data: dict[str, Any] = initial_state(model, step, granularity)
        self.events: list[dict[str, Any]] = []
        """One record per event, except that a message's updates share one counting record."""
        self.counts: dict[str, int] = {}
        """How many events of each type the run had."""
        self._clock: Callable[[], float] = clock or (lambda: time.time() * 1000.0)
        self._t0: float | None = None
        # Per assistant message being streamed: content index -> open block / tool call id.
        self._message_index: int | None = None
        self._blocks: dict[int, _OpenText] = {}
        self._sources: list[_OpenText | None] = []  # per entry block: its open text, if any
        self._tool_of_index: dict[int, str] = {}
        self._open_args: dict[str, _OpenArgs] = {}
        self._dirty: list[_OpenText] = []
        self._run_node: int | None = None
        self._turn_node: int | None = None
        self._message_node: int | None = None
        self._tool_nodes: dict[str, int] = {}
        self._updates: dict[str, Any] | None = None  # this message's counting record
        self._tool_started: dict[str, float] = {}
        self._held_ms = 0.0  # time held in step mode so far (ms)
        self._held_since: float | None = None
        self._held_at_start: dict[int, float] = {}  # open node -> held time when it started
        self.ended = False
        self.aborted = False
        """Set (by the widget, from the run's signal) before an aborted run's ``agent_end``."""
        self.tool_marks: dict[str, str] = {}
        """Tool name -> the name its card shows (an MCP tool's with its server; the widget)."""
        # The reply being streamed: characters so far (Pi's estimate: 4 a token), whether its
        # first token came, the latest partial (its reported usage), the prompt's estimate.
        self._chars = 0
        self._waiting = False
        self._partial: Any = None
        self._context_estimate = 0

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

    def _node(
        self,
        kind: str,
        label: str,
        parent: int | None,
        detail: str = "",
        target: dict[str, Any] | None = None,
    ) -> int:
        """A lifecycle node; ``target`` is what it points at in the transcript (a message
        index or a tool call id), for the tree's links."""
        nodes = self.data["lifecycle"]
        node: dict[str, Any] = {
            "id": len(nodes),
            "parent": parent,
            "kind": kind,
            "label": label,
            "detail": detail,
            "start": self._now(),
            "end": None,
            "held": 0,
            "updates": 0,
            "target": target,
        }
        nodes.append(node)
        self._held_at_start[node["id"]] = self._held_now()
        self.sink.push(["lifecycle"], _copy(node))
        return int(node["id"])

    def _end_node(self, index: int | None, **extra: Any) -> None:
        """Close a node; its ``held`` is the step-mode time held while it was open (its
        duration without that time is ``end - start - held``)."""
        if index is None:
            return
        self._set(["lifecycle", index, "end"], self._now())
        now = self._held_now()
        held = round(now - self._held_at_start.pop(index, now), 1)
        if held:
            self._set(["lifecycle", index, "held"], held)
        for key, value in extra.items():
            self._set(["lifecycle", index, key], value)

    def _held_now(self) -> float:
        """Milliseconds held in step mode so far, the current hold included."""
        if self._held_since is None:
            return self._held_ms
        return self._held_ms + self._clock() - self._held_since

    def render(self) -> None:
        """Send the HTML of the text streamed since the last call (finished blocks, tails), and
        the token estimate of the reply being streamed (once per frame, not per token)."""
        dirty, self._dirty = self._dirty, []
        for open_text in dirty:
            open_text.render(self.sink)
        if self._message_index is not None or self._waiting:
            est_in, est_out = self._live_estimate()
            self._status("est_in", est_in)
            self._status("est_out", est_out)

    def _live_estimate(self) -> tuple[int, int]:
        """(input, output) tokens of the reply being streamed: what the provider reported so
        far, else the estimate."""
        usage = getattr(self._partial, "usage", None)
        reported_in = usage.input + usage.cache_read + usage.cache_write if usage else 0
        reported_out = usage.output if usage else 0
        return (
            reported_in or self._context_estimate,
            reported_out or tokens_of_chars(self._chars),
        )

    def set_context_estimate(self, tokens: int) -> None:
        """The estimated size of the request being sent (the widget computes it per request)."""
        self._context_estimate = tokens

    def set_max_tokens(self, limit: int | None) -> None:
        """The output limit of this cell's requests (the magic sets it)."""
        self._status("max_tokens", limit)

    def _waiting_for_model(self) -> None:
        if not self._waiting:
            self._waiting = True
            self._status("waiting_since", self._now())
        self._status("state", "waiting")

    def _first_token(self) -> None:
        self._waiting = False
        self._status("waiting_since", None)
        self._status("state", "streaming")

    def materialize(self) -> dict[str, Any]:
        """Render what is pending, fold buffered parts into ``data`` and return it."""
        self.render()
        for args in self._open_args.values():
            args.materialize()
        if self._t0 is not None and not self.ended:
            self.data["status"]["elapsed_ms"] = self._elapsed()
        return self.data

    def _elapsed(self) -> int:
        return int(self._now()) if self._t0 is not None else 0

    # -- the reducer -----------------------------------------------------------------------

    def apply(self, event: AgentEvent) -> None:
        kind = event.type
        counts = self.counts
        counts[kind] = counts.get(kind, 0) + 1
        if isinstance(event, MessageUpdateEvent):  # the per-token path: first, and alone
            self._on_update(event)
            return
        if self._t0 is None:
            self._t0 = self._clock()
        self.events.append({"type": kind, "t": self._now(), **_event_info(event)})
        match event:
            case AgentStartEvent():
                self._on_agent_start()
            case TurnStartEvent():
                self._on_turn_start()
            case TurnEndEvent():
                self._on_turn_end()
            case MessageStartEvent():
                self._on_message_start(event)
            case MessageEndEvent():
                self._on_message_end(event)
            case ToolExecutionStartEvent():
                self._on_tool_execution_start(event)
            case ToolExecutionUpdateEvent():
                self._on_tool_execution_update(event)
            case ToolExecutionEndEvent():
                self._on_tool_execution_end(event)
            case AgentEndEvent():
                self._on_agent_end(event)
            case _:  # pragma: no cover (every event class has its case)
                assert_never(event)

    def _on_agent_start(self) -> None:
        self.ended = False
        self.aborted = False
        self._waiting_for_model()
        self._status("error", None)
        self._run_node = self._node("run", "Agent Run", None)

    def _on_turn_start(self) -> None:
        self._status("turn", self.data["status"]["turn"] + 1)
        self._waiting_for_model()
        turn = self.data["status"]["turn"]
        self._turn_node = self._node("turn", f"Turn {turn}", self._run_node)

    def _on_turn_end(self) -> None:
        self._end_node(self._turn_node)
        self._turn_node = None
        self._status("elapsed_ms", self._elapsed())

    def _on_message_start(self, event: MessageStartEvent) -> None:
        message = event.message
        role = getattr(message, "role", "custom")
        parent = self._turn_node if self._turn_node is not None else self._run_node
        index = len(self.data["messages"])
        target = {"message": index}
        self._message_node = self._node("message", "Message", parent, role, target)
        self._updates = None
        if role == "assistant":
            entry: dict[str, Any] = {
                "role": "assistant",
                "blocks": [],
                "stop_reason": None,
                "error": None,
                "note": None,
            }
            self._message_index = index
            self._blocks = {}
            self._sources = []
            self._open_args = {}
            self._tool_of_index = {}
            self._chars = 0
            self._partial = message
            self._waiting_for_model()  # until its first token
        else:
            entry = _plain_entry(message)
            self._message_index = None
        self.data["messages"].append(entry)
        self.sink.push(["messages"], _copy(entry))

    def _count_update(self, kind: str) -> None:
        record = self._updates
        if record is None:
            if self._t0 is None:
                self._t0 = self._clock()
            record = {"type": "message_update", "t": self._now(), "count": 0, "kinds": {}}
            self.events.append(record)
            self._updates = record
        record["count"] += 1
        kinds = record["kinds"]
        kinds[kind] = kinds.get(kind, 0) + 1

    def _on_update(self, event: MessageUpdateEvent) -> None:
        sub = event.assistant_message_event
        self._count_update(sub.type)
        self._partial = event.message
        if self._waiting:
            self._first_token()
        match sub:
            case TextDeltaEvent() | ThinkingDeltaEvent():
                self._chars += len(sub.delta)
                open_text = self._blocks.get(sub.content_index) or self._open_text(
                    sub.content_index, sub.type[: -len("_delta")]
                )
                if open_text is not None:
                    open_text.parts.append(sub.delta)
                    if not open_text.dirty:
                        open_text.dirty = True
                        self._dirty.append(open_text)
                    self.sink.touch()
            case ToolCallDeltaEvent():
                self._chars += len(sub.delta)
                tool_id = self._tool_of_index.get(sub.content_index)
                if tool_id is None:
                    tool_id = self._tool_block(sub.content_index, sub.partial)
                if tool_id is not None:
                    args = self._open_args.get(tool_id)
                    if args is None:
                        card = self.data["tools"][tool_id]
                        args = _OpenArgs(card, ["tools", tool_id, "args_text"])
                        self._open_args[tool_id] = args
                    args.parts.append(sub.delta)
                    self.sink.append(args.path, sub.delta)
            case TextStartEvent() | ThinkingStartEvent():
                if sub.content_index not in self._blocks:
                    self._open_text(sub.content_index, sub.type[: -len("_start")])
            case TextEndEvent() | ThinkingEndEvent():
                open_text = self._blocks.get(sub.content_index) or self._open_text(
                    sub.content_index, sub.type[: -len("_end")]
                )
                if open_text is not None:  # it streamed raw; what it keeps is redacted
                    open_text.end(self.sink, redact(sub.content))
            case ToolCallStartEvent():
                self._tool_block(sub.content_index, sub.partial)
            case ToolCallEndEvent():
                tool_id = self._tool_of_index.get(sub.content_index) or self._tool_block(
                    sub.content_index, sub.partial
                )
                if tool_id is not None:
                    args = self._open_args.pop(tool_id, None)
                    if args is not None:
                        args.materialize()
                    # The card keeps the call's final arguments, redacted (they streamed raw).
                    self._set(["tools", tool_id, "args_text"], _args_text(sub.tool_call.arguments))
            case StartEvent() | DoneEvent() | ErrorEvent():
                pass
            case _:
                assert_never(sub)

    def _mi(self) -> int:
        index = self._message_index
        assert index is not None
        return index

    def _message_entry(self) -> dict[str, Any] | None:
        if self._message_index is None:
            return None
        entry: dict[str, Any] = self.data["messages"][self._message_index]
        return entry

    def _open_text(self, content_index: int, kind: str) -> _OpenText | None:
        entry = self._message_entry()
        if entry is None:  # an update outside an assistant message: nothing to grow
            return None
        block = text_block(kind)
        position = len(entry["blocks"])
        entry["blocks"].append(block)
        self.sink.push(["messages", self._mi(), "blocks"], _copy(block))
        open_text = _OpenText(block, ["messages", self._mi(), "blocks", position])
        self._blocks[content_index] = open_text
        self._sources.append(open_text)
        return open_text

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
        self._sources.append(None)
        self.sink.push(["messages", self._mi(), "blocks"], dict(block))
        self._new_card(tool_id, call.name, "")
        return str(tool_id)

    def _new_card(self, tool_id: str, name: str, args_text: str) -> None:
        if tool_id in self.data["tools"]:
            return
        card: dict[str, Any] = {
            "id": tool_id,
            "name": self.tool_marks.get(name, name),
            "args_text": args_text,
            "status": "pending",
            "start": None,
            "duration_ms": None,
            "result_text": "",
            "images": [],
            "is_error": False,
            "diff": None,
            "not_run": None,
        }
        self._set(["tools", tool_id], card)

    def _on_message_end(self, event: MessageEndEvent) -> None:
        message = event.message
        updates = self._updates["count"] if self._updates is not None else 0
        self._end_node(self._message_node, updates=updates)
        self._message_node = None
        self._updates = None
        entry = self._message_entry()
        if not isinstance(message, AssistantMessage) or entry is None:
            return
        for args in self._open_args.values():
            args.materialize()
        self._reconcile(entry, message)
        self._set(["messages", self._mi(), "stop_reason"], message.stop_reason)
        if message.error_message:
            error = redact(message.error_message)
            self._set(["messages", self._mi(), "error"], error)
            self._status("error", error)
        if message.provider and message.model:  # the model may change between turns
            self._status("model", f"{message.provider}/{message.model}")
        if message.stop_reason == "length":
            self._set(["messages", self._mi(), "note"], self._length_note())
        # What the provider reported, else the estimate (an abort often comes before usage).
        self._partial = message
        tokens_in, tokens_out = self._live_estimate()
        usage = message.usage
        if tokens_in != usage.input + usage.cache_read + usage.cache_write or (
            tokens_out != usage.output
        ):
            self._status("estimated", True)
        status = self.data["status"]
        self._status("tokens_in", status["tokens_in"] + tokens_in)
        self._status("tokens_out", status["tokens_out"] + tokens_out)
        self._status("est_in", 0)
        self._status("est_out", 0)
        self._status("cost", round(status["cost"] + usage.cost.total, 6))
        self._status("elapsed_ms", self._elapsed())
        self._partial = None
        self._chars = 0
        self._waiting = False
        self._status("waiting_since", None)
        self._message_index = None
        self._blocks = {}
        self._sources = []
        self._open_args = {}
        self._tool_of_index = {}
        self._dirty = [t for t in self._dirty if t.stream is not None and t.dirty]

    def _length_note(self) -> str:
        limit = self.data["status"]["max_tokens"]
        at = f" ({limit} tokens)" if limit else ""
        return (
            f"cut off: the reply reached the output limit{at}; raise it with %%agent --max-tokens N"
        )

    def _reconcile(self, entry: dict[str, Any], message: Any) -> None:
        """Make the blocks match the final message: every text block ended with the message's
        text (else it is rendered from it), tool calls in place (providers that skip updates)."""
        final: list[tuple[str, str]] = []
        for block in message.content:
            if block.type == "text" and block.text:
                final.append(("text", redact(block.text)))
            elif block.type == "thinking" and block.thinking:
                final.append(("thinking", redact(block.thinking)))
            elif block.type == "toolCall":
                final.append(("toolCall", block.id))
                self._new_card(block.id, block.name, _args_text(block.arguments))
        current: list[tuple[str, str]] = []
        kept: list[tuple[dict[str, Any], _OpenText | None]] = []
        for block, source in zip(entry["blocks"], self._sources, strict=True):
            if block["type"] == "toolCall":
                current.append(("toolCall", block["id"]))
            elif source is not None and source.ended:
                current.append((block["type"], source.ended))
            elif source is not None and (source.parts or source.stream is not None):
                current.append((block["type"], "\0unfinished"))
            else:
                continue  # an empty block the final message does not have either
            kept.append((block, source))
        if current == final:
            return
        names = {b.id: b.name for b in message.content if b.type == "toolCall"}
        rebuilt: list[dict[str, Any]] = []
        for kind, value in final:
            if kind == "toolCall":
                rebuilt.append({"type": "toolCall", "id": value, "name": names[value]})
                continue
            reuse = next(
                (b for b, s in kept if s is not None and s.ended == value and b["type"] == kind),
                None,
            )
            rebuilt.append(reuse if reuse is not None else _final_block(kind, value))
        for _, source in kept:
            if source is not None:
                source.stream, source.parts, source.dirty = None, [], False
        self._sources = [None] * len(rebuilt)
        self._set(["messages", self._mi(), "blocks"], rebuilt)

    def _on_tool_execution_start(self, event: ToolExecutionStartEvent) -> None:
        tool_id = event.tool_call_id
        if tool_id not in self.data["tools"]:
            self._new_card(tool_id, event.tool_name, _args_text(event.args))
        self._tool_started[tool_id] = self._clock() - self._held_now()
        self._set(["tools", tool_id, "status"], "running")
        self._set(["tools", tool_id, "start"], self._now())
        self._status("state", "running-tools")
        parent = self._turn_node if self._turn_node is not None else self._run_node
        self._tool_nodes[tool_id] = self._node(
            "tool", "Tool Execution", parent, event.tool_name, {"tool": tool_id}
        )

    def _on_tool_execution_update(self, event: ToolExecutionUpdateEvent) -> None:
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
        text, images = _content_parts(getattr(result, "content", []), PREVIEW_CHARS)
        text = redact(text)  # the card keeps the redacted text: compare with that
        diff = _namespace_diff(getattr(result, "details", None))
        if diff is not None:  # the card shows the diff in its own line: not twice
            text = _without_diff_line(text)
        card = self.data["tools"][tool_id]
        if card["result_text"] != text:
            self._set(["tools", tool_id, "result_text"], text)
        if card["images"] != images:
            self._set(["tools", tool_id, "images"], images)
        if diff is not None and card["diff"] != diff:
            self._set(["tools", tool_id, "diff"], diff)

    def _on_tool_execution_end(self, event: ToolExecutionEndEvent) -> None:
        tool_id = event.tool_call_id
        if tool_id not in self.data["tools"]:
            self._new_card(tool_id, event.tool_name, _args_text(getattr(event, "args", {})))
        self._result(tool_id, event.result)
        started = self._tool_started.pop(tool_id, None)  # (the card's time leaves holds out)
        duration = (
            round(self._clock() - self._held_now() - started, 1) if started is not None else None
        )
        self._set(["tools", tool_id, "duration_ms"], duration)
        self._set(["tools", tool_id, "is_error"], bool(event.is_error))
        card = self.data["tools"][tool_id]
        reason = not_run_reason(event.tool_name, card["result_text"]) if event.is_error else None
        if reason is not None:
            self._set(["tools", tool_id, "not_run"], reason)
        status = "rejected" if reason is not None else "error" if event.is_error else "done"
        self._set(["tools", tool_id, "status"], status)
        self._end_node(self._tool_nodes.pop(tool_id, None))

    def _on_agent_end(self, event: AgentEndEvent) -> None:
        final = "done"
        for message in reversed(getattr(event, "messages", []) or []):
            if getattr(message, "role", None) == "assistant":
                if message.stop_reason == "aborted":
                    final = "aborted"
                elif message.stop_reason == "error":
                    final = "error"
                break
        if self.aborted and final == "done":  # aborted during tools: the answer had finished
            final = "aborted"
        for tool_id, card in list(self.data["tools"].items()):
            if card["status"] in ("pending", "running", "awaiting-approval", "progress"):
                self._set(["tools", tool_id, "status"], "error")
        self._end_node(self._turn_node)
        self._turn_node = None
        self._end_node(self._run_node)
        self._status("state", final)
        self._status("elapsed_ms", self._elapsed())
        self.ended = True

    # -- state set from the widget (not from events) ---------------------------------------

    def set_queue(self, queue: list[dict[str, str]]) -> None:
        if self.data["queue"] != queue:
            self._set(["queue"], queue)

    def set_held(self, point: str | None, words: tuple[str, str] | None = None) -> None:
        """A step-mode hold starts at ``point`` (with what is held and what comes next in
        words) or ends (``None``); the time held is kept apart from the nodes' durations."""
        now = self._clock()
        if self._held_since is not None:
            self._held_ms += now - self._held_since
            self._held_since = None
        what, following = words if words is not None else (None, None)
        # Any op may cut a frame, so a new hold is published last (after its count and words)
        # and a release first: a frame never shows a hold with another hold's count or words.
        if point is None:
            self._set(["step", "held"], None)
        else:
            self._held_since = now
            self._set(["step", "count"], self.data["step"]["count"] + 1)
        self._set(["step", "what"], what)
        self._set(["step", "next"], following)
        if point is not None:
            self._set(["step", "held"], point)

    def set_step_enabled(self, enabled: bool) -> None:
        self._set(["step", "enabled"], enabled)

    def set_context(self, context: dict[str, Any] | None) -> None:
        """What the model is (about to be) sent: the latest request's readable view."""
        self._set(["context"], context)

    def set_context_held(self, held: bool) -> None:
        if self.data["context"] is not None and self.data["context"]["held"] != held:
            self._set(["context", "held"], held)

    def set_context_json(self, text: str) -> None:
        if self.data["context"] is not None:
            self._set(["context", "json"], text)

    def set_note(self, note: str | None) -> None:
        self._status("note", note)

    def add_compaction(self, count: int) -> None:
        """A one-line marker in the transcript: the model now sees a summary in place of the
        conversation's first ``count`` messages."""
        entry = {"role": "compaction", "count": count, "text": compaction_note(count)}
        self.data["messages"].append(entry)
        self.sink.push(["messages"], dict(entry))

    def set_approvals(self, approvals: list[dict[str, Any]]) -> None:
        self._set(["approvals"], approvals)
        state = self.data["status"]["state"]
        if approvals and state not in ("aborted", "error", "done"):
            self._status("state", "awaiting-approval")
        elif not approvals and state == "awaiting-approval":
            self._status("state", "running-tools")

    def set_tool_status(self, tool_id: str, status: str, *, only: str | None = None) -> None:
        """A card's status set from outside the events (approvals); with ``only``, just when
        it is that status now."""
        card = self.data["tools"].get(tool_id)
        if card is None or (only is not None and card["status"] != only):
            return
        if card["status"] != status:
            self._set(["tools", tool_id, "status"], status)


def compaction_note(count: int) -> str:
    """``compacted 12 messages``: the marker the panel and plain mode show."""
    return f"compacted {count} message{'s' if count != 1 else ''}"


def _final_block(kind: str, text: str) -> dict[str, Any]:
    block = text_block(kind)
    block["html"] = BlockStream.finish(text)
    return block


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
        return {"role": "user", "html": render_markdown(redact(text)), "images": images}
    return {
        "role": "custom",
        "custom_role": str(role),
        "html": render_markdown(redact(text)),
        "images": images,
    }


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


__all__ = [
    "IMAGE_TYPES",
    "STATES",
    "TAIL_LIMIT",
    "TOOL_STATUSES",
    "PanelState",
    "compaction_note",
    "initial_state",
    "not_run_reason",
    "redact",
    "text_block",
]
