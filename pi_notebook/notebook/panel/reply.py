"""The assistant reply being streamed: its transcript entry, its blocks and their sources.

:class:`StreamingReply` lives from an assistant message's start to its end. Per streamed event
it grows the entry: a text or thinking block gets an :class:`~.streaming_text.OpenText` (its
parts are rendered once per frame, from the shared ``dirty`` list), a tool call gets a block and
a card whose arguments stream into an :class:`~.streaming_text.OpenArgs`. At the end
(:meth:`StreamingReply.end`) the blocks are made to match the final message (providers that
skip updates, text changed by redaction) and the entry gets its stop reason, error and note.
This module must stay pure.
"""

from __future__ import annotations

from typing import Any, Literal, assert_never

from ...ai import (
    AssistantMessage,
    AssistantMessageEvent,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextContent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingContent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    redact,
)
from ..render import shows_nothing
from .contract import AssistantBlock, AssistantEntry, ToolCallBlock
from .entries import args_text
from .ops import OpSink, copy_value
from .status_line import StatusLine
from .streaming_text import OpenArgs, OpenText, TextKind, final_block, text_block
from .tool_cards import ToolCards

BlockKey = tuple[Literal["text", "thinking", "toolCall"], str]


def assistant_entry() -> AssistantEntry:
    return {"role": "assistant", "blocks": [], "stop_reason": None, "error": None, "note": None}


class StreamingReply:
    """One assistant message while it streams (see the module docstring)."""

    __slots__ = (
        "_blocks",
        "_open_args",
        "_sources",
        "_tool_of_index",
        "cards",
        "dirty",
        "entry",
        "index",
        "sink",
        "status",
    )

    def __init__(
        self,
        entry: AssistantEntry,
        index: int,
        *,
        sink: OpSink,
        cards: ToolCards,
        status: StatusLine,
        dirty: list[OpenText],
    ) -> None:
        self.entry = entry
        self.index = index
        """The entry's index in ``messages``."""
        self.sink = sink
        self.cards = cards
        self.status = status
        self.dirty = dirty
        """The reducer's texts to render at the next frame (this reply adds its own)."""
        self._blocks: dict[int, OpenText] = {}  # content index -> its open text
        self._sources: list[OpenText | None] = []  # per entry block: its open text, if any
        self._tool_of_index: dict[int, str] = {}
        self._open_args: dict[str, OpenArgs] = {}

    def materialize(self) -> None:
        """Fold the streamed tool-call arguments into their cards."""
        for args in self._open_args.values():
            args.materialize()

    def end(self, message: AssistantMessage) -> None:
        """The message ended: blocks as the final message has them, and its outcome."""
        self.materialize()
        self._reconcile(message)
        self._field("stop_reason", message.stop_reason)
        if message.error_message:
            error = redact(message.error_message)
            self._field("error", error)
            self.status.set("error", error)
        if message.provider and message.model:  # the model may change between turns
            self.status.set("model", f"{message.provider}/{message.model}")
        if message.stop_reason == "length":
            self._field("note", self.status.length_note())

    def update(self, sub: AssistantMessageEvent) -> None:
        """One streamed event of the reply (the per-token path)."""
        status = self.status
        match sub:
            case TextDeltaEvent() | ThinkingDeltaEvent():
                status.chars += len(sub.delta)
                open_text = self._blocks.get(sub.content_index) or self._open_text(
                    sub.content_index, "text" if isinstance(sub, TextDeltaEvent) else "thinking"
                )
                if open_text is not None:
                    open_text.parts.append(sub.delta)
                    if not open_text.dirty:
                        open_text.dirty = True
                        self.dirty.append(open_text)
            case ToolCallDeltaEvent():
                status.chars += len(sub.delta)
                tool_id = self._tool_of_index.get(sub.content_index)
                if tool_id is None:
                    tool_id = self._tool_block(sub.content_index, sub.partial)
                if tool_id is not None:
                    args = self._open_args.get(tool_id)
                    if args is None:
                        card = self.cards.tools[tool_id]
                        args = OpenArgs(card, ["tools", tool_id, "args_text"])
                        self._open_args[tool_id] = args
                    args.parts.append(sub.delta)
                    self.sink.append(args.path, sub.delta)
            case TextStartEvent() | ThinkingStartEvent():
                if sub.content_index not in self._blocks:
                    kind: TextKind = "text" if isinstance(sub, TextStartEvent) else "thinking"
                    self._open_text(sub.content_index, kind)
            case TextEndEvent() | ThinkingEndEvent():
                open_text = self._blocks.get(sub.content_index) or self._open_text(
                    sub.content_index, "text" if isinstance(sub, TextEndEvent) else "thinking"
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
                    self.cards.set(tool_id, "args_text", args_text(sub.tool_call.arguments))
            case StartEvent() | DoneEvent() | ErrorEvent():
                pass
            case _:
                assert_never(sub)

    def _open_text(self, content_index: int, kind: TextKind) -> OpenText:
        entry, index = self.entry, self.index
        block = text_block(kind)
        position = len(entry["blocks"])
        entry["blocks"].append(block)
        self.sink.push(["messages", index, "blocks"], copy_value(block))
        open_text = OpenText(block, ["messages", index, "blocks", position])
        self._blocks[content_index] = open_text
        self._sources.append(open_text)
        return open_text

    def _tool_block(self, content_index: int, partial: Any) -> str | None:
        entry, index = self.entry, self.index
        try:
            call = partial.content[content_index]
        except (AttributeError, IndexError, TypeError):
            return None
        tool_id = getattr(call, "id", None)
        if not tool_id:
            return None
        self._tool_of_index[content_index] = tool_id
        block: ToolCallBlock = {"type": "toolCall", "id": tool_id, "name": call.name}
        entry["blocks"].append(block)
        self._sources.append(None)
        self.sink.push(["messages", index, "blocks"], dict(block))
        self.cards.new(tool_id, call.name, "")
        return str(tool_id)

    def _field(
        self,
        key: Literal["stop_reason", "error", "note"],
        value: str | None,
    ) -> None:
        self.entry[key] = value
        self.sink.set(["messages", self.index, key], value)

    def _reconcile(self, message: AssistantMessage) -> None:
        """Make the blocks match the final message: every text block ended with the message's
        text (else it is rendered from it), tool calls in place (providers that skip updates)."""
        entry, index = self.entry, self.index
        final: list[BlockKey] = []
        names: dict[str, str] = {}
        for block in message.content:
            match block:
                case TextContent(text=text) if text and not shows_nothing(text):
                    final.append(("text", redact(text)))
                case ThinkingContent(thinking=thinking) if thinking:
                    final.append(("thinking", redact(thinking)))
                case ToolCall():
                    final.append(("toolCall", block.id))
                    names[block.id] = block.name
                    self.cards.new(block.id, block.name, args_text(block.arguments))
                case _:  # an empty text or thinking block (or one of bare code fences, which
                    pass  # would show an empty bar): the entry has none either
        current: list[BlockKey] = []
        kept: list[tuple[AssistantBlock, OpenText | None]] = []
        for shown, source in zip(entry["blocks"], self._sources, strict=True):
            if shown["type"] == "toolCall":
                current.append(("toolCall", shown["id"]))
            elif source is not None and source.ended:
                current.append((shown["type"], source.ended))
            elif source is not None and source.unfinished:
                current.append((shown["type"], "\0unfinished"))
            else:
                continue  # an empty block the final message does not have either
            kept.append((shown, source))
        if current == final:
            return
        rebuilt: list[AssistantBlock] = []
        for kind, value in final:
            if kind == "toolCall":
                rebuilt.append({"type": "toolCall", "id": value, "name": names[value]})
                continue
            reuse = next(
                (b for b, s in kept if s is not None and s.ended == value and b["type"] == kind),
                None,
            )
            rebuilt.append(reuse if reuse is not None else final_block(kind, value))
        for _, source in kept:
            if source is not None:
                source.drop()
        self._sources = [None] * len(rebuilt)
        entry["blocks"] = rebuilt
        self.sink.set(["messages", index, "blocks"], copy_value(rebuilt))


__all__ = ["StreamingReply", "assistant_entry"]
