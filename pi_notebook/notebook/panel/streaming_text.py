"""The panel's streaming text: a text or thinking block, or a tool call's arguments, as it grows.

Assistant text and thinking arrive as Markdown and leave as sanitised HTML rendered here (the
front end has no Markdown parser): a block's ``html`` lists its finished top-level blocks, each
rendered once (:class:`~.blocks.BlockStream`) and sent once (a block that finishes while shown
in the tail is spliced there and moved off its head, not resent); ``tail`` is the HTML of the
part still streaming, re-rendered once per frame (:meth:`OpenText.render`) and sent as a
splice of what changed; a tail longer than :data:`TAIL_LIMIT` is sent as ``raw`` text instead
until its block ends. When a block ends its whole text is rendered once, so the final HTML is
exactly :func:`~.markdown.render_markdown`'s.

Per token, a delta is only appended to a list of parts; the work is done per frame. This
module must stay pure.
"""

from __future__ import annotations

from typing import Literal

from ...ai import redact
from .blocks import BlockStream
from .contract import TextBlock, ToolCard
from .ops import OpSink, Path, utf16_len

#: Longest streaming tail (characters) sent as rendered HTML at every flush; a longer one is
#: sent as raw text until its block ends (so a frame's cost stays bounded).
TAIL_LIMIT = 2_000

TextKind = Literal["text", "thinking"]


def text_block(kind: TextKind) -> TextBlock:
    """A text or thinking block of the view state, before any text arrived."""
    return {"type": kind, "html": [], "tail": "", "raw": None}


def final_block(kind: TextKind, text: str) -> TextBlock:
    """A text or thinking block holding the whole ``text``, rendered once."""
    block = text_block(kind)
    block["html"] = BlockStream.finish(text)
    return block


class OpenArgs:
    """A tool card's ``args_text`` growing while the model streams it: its parts and its op
    path (built once), joined only when read."""

    __slots__ = ("card", "parts", "path")

    def __init__(self, card: ToolCard, path: Path) -> None:
        self.card = card
        self.parts: list[str] = []
        self.path = path

    def materialize(self) -> None:
        if self.parts:
            self.card["args_text"] += "".join(self.parts)
            self.parts = []


class OpenText:
    """A text or thinking block while it streams: new parts, the block stream splitting its
    Markdown into final blocks and the open tail, and its op path (built once)."""

    __slots__ = ("block", "dirty", "ended", "parts", "path", "stream")

    def __init__(self, block: TextBlock, path: Path) -> None:
        self.block = block
        self.parts: list[str] = []
        self.path = path
        self.stream: BlockStream | None = BlockStream(redact)
        self.dirty = False
        self.ended: str | None = None
        """The block's whole text once it ended (its HTML is then final)."""

    @property
    def unfinished(self) -> bool:
        """It has text that has not ended (streamed parts, or a stream still open)."""
        return bool(self.parts) or self.stream is not None

    def drop(self) -> None:
        """Forget what streamed: the block was replaced by the final message's."""
        self.stream, self.parts, self.dirty = None, [], False

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
                self._raw(sink, None)
            self._tail(sink, tail)
        elif block["raw"] is None or done:
            self._tail(sink, "")
            self._raw(sink, stream.open)
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
        html = self.block["html"]
        if final[: len(html)] == html:
            for item in final[len(html) :]:
                html.append(item)
                sink.push([*self.path, "html"], item)
        else:
            self.block["html"] = final
            sink.set([*self.path, "html"], list(final))
        self._tail(sink, "")
        if self.block["raw"] is not None:
            self._raw(sink, None)

    def _raw(self, sink: OpSink, raw: str | None) -> None:
        self.block["raw"] = raw
        sink.set([*self.path, "raw"], raw)

    def _tail(self, sink: OpSink, html: str) -> None:
        old = self.block["tail"]
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


__all__ = ["TAIL_LIMIT", "OpenArgs", "OpenText", "TextKind", "final_block", "text_block"]
