"""A streamed Markdown text split into final top-level blocks and the open tail.

:class:`BlockStream` takes the text of one streaming block as it grows (``feed``) and, on
``advance``, re-parses only the *open region*: the text from the start of the first block that
may still change. A top-level block is final once a later block starts on a complete line, or
once a blank line follows its last line and it is not a list or an indented code block (the
only closed blocks a blank line does not end; an unclosed fence holds its blank lines). Its
HTML never changes after that, so each finished block is rendered once. Only complete lines
decide: a partial last line can still change its meaning (``#x`` is not a heading, ``***x``
not a rule). Parsing a suffix that starts at a closed block's boundary gives the same blocks as
parsing the whole text; link reference definitions are kept in a shared env, and
:meth:`finish` renders the whole text once to be exact.

A ``clean`` function (the panel passes :func:`pi_notebook.ai.redact`) is applied to the text of
blocks as they finish and to the tail as it is rendered, never to a single streamed token.

The cost of ``advance`` is that of the open region; for a very long open block (one huge
paragraph or code fence) the region is re-parsed only after it grew by an eighth, so the total
parsing work stays linear in the text. This module must stay pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .markdown import Block, render_blocks, render_markdown

#: Open regions up to this many characters are re-parsed at every advance with a new line.
SMALL_REGION = 2_048
#: Block kinds a blank line does not end (a later indented line may continue them).
_OPEN_AFTER_BLANK = frozenset(("bullet_list_open", "ordered_list_open", "code_block"))


class BlockStream:
    """Finished blocks (HTML, final) and the open region (raw text) of a growing text."""

    __slots__ = ("_clean", "_env", "_parsed", "finished", "open")

    def __init__(self, clean: Callable[[str], str] = str) -> None:
        self._clean = clean
        self.open = ""
        """The text not yet in a finished block (it starts at a block boundary)."""
        self.finished: list[str] = []
        self._parsed = 0  # length of the complete part of ``open`` at the last parse
        self._env: dict[str, Any] = {}

    def feed(self, text: str) -> None:
        self.open += text

    def advance(self) -> list[str]:
        """Blocks that became final since the last call (their HTML), in order."""
        complete = self.open.rfind("\n") + 1
        grown = complete - self._parsed
        if grown <= 0 or (complete > SMALL_REGION and grown * 8 < complete):
            return []
        region = self.open[:complete]
        self._parsed = complete
        blocks = render_blocks(region, self._env)
        cut_block, cut_at = self._cut(region, blocks)
        if cut_block == 0:
            return []
        source = region[:cut_at]
        cleaned = self._clean(source)
        if cleaned == source:
            done = [block.html for block in blocks[:cut_block]]
        else:  # rendered again from the cleaned text (it may even split differently)
            done = [block.html for block in render_blocks(cleaned, self._env)]
        self.finished.extend(done)
        self.open = self.open[cut_at:]
        self._parsed -= cut_at
        return done

    @staticmethod
    def _cut(region: str, blocks: list[Block]) -> tuple[int, int]:
        """(how many blocks are final, where the open region starts after them)."""
        if not blocks:
            return 0, 0
        last = blocks[-1]
        lines = region[:-1].split("\n")  # ``region`` ends with "\n"
        blank = len(lines) - 1
        if (
            not lines[blank].strip()
            and last.kind not in _OPEN_AFTER_BLANK
            and last.end is not None
            and last.end <= blank
        ):
            return len(blocks), len(region)  # a blank line after it closed the last block
        # Otherwise every block before the last one that says where it starts is final.
        for k in range(len(blocks) - 1, 0, -1):
            line = blocks[k].line
            if line is not None:
                return k, sum(len(x) + 1 for x in lines[:line])
        return 0, 0

    def tail_html(self) -> str:
        """The open region rendered as it stands (it may change with the next text)."""
        return render_markdown(self._clean(self.open)) if self.open.strip() else ""

    @staticmethod
    def finish(text: str) -> list[str]:
        """The whole ``text``'s blocks, rendered once (what a finished block shows)."""
        return [block.html for block in render_blocks(text)]


__all__ = ["SMALL_REGION", "BlockStream"]
