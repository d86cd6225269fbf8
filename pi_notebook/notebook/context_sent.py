"""What a run's notebook context sent, read back for the reader: its cells, a title, one line.

The panel shows a run's notebook context (:class:`~.notebook_context.NotebookContextMessage`)
as a collapsed entry at the start of the turn ("notebook context: 3 cells, 1 error
(KeyError)") that opens to each cell as the model got it (``In[n]``'s source, ``Out[n]``, the
error), and plain mode prints one line naming what was sent ("notebook context: In[4], In[5]
(KeyError: 'BMI')"). Both are read from the message's text, the one thing the model got,
rather than from a second copy kept beside it: the text is cut and redacted exactly as sent,
and a conversation loaded from a file (where only the role, the text and the cell numbers are
kept) reads the same. The text's layout is :class:`pi_notebook.tools.Cell`'s (``In [n]:``, the
fenced source, ``Out[n]: …``, ``Error in In [n]: …``); a cell cut by the budget keeps what is
left of it as its source.

It must stay pure: no I/O, never raises on odd text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

FENCE_OPEN = "```python\n"
FENCE_CLOSE = "\n```"
PLAIN_ERROR_CHARS = 80
"""At most this much of an error's first line in the plain line."""
MOST_NAMED = 6
"""The plain line names up to this many cells; more read as a range and a count."""
_START = re.compile(r"(?:^|\n\n)In \[(\d+)\]:\n")


@dataclass(frozen=True, slots=True)
class SentCell:
    """One cell as the model was sent it."""

    number: int
    source: str
    result: str | None
    error: str | None

    @property
    def error_line(self) -> str:
        """The error's first line (``KeyError: 'BMI'``); ``""`` without one."""
        return self.error.split("\n", 1)[0].strip() if self.error else ""

    @property
    def error_type(self) -> str:
        """The exception's name (``KeyError``); ``""`` without an error."""
        return self.error_line.split(":", 1)[0].strip()


def _numbers(message: Any) -> list[int]:
    cells = getattr(message, "cells", None)
    if isinstance(cells, list | tuple):
        return [n for n in cells if isinstance(n, int)]
    return []


def _cell(number: int, body: str) -> SentCell:
    """One cell's section (after its ``In [n]:`` line) taken apart."""
    if not body.startswith(FENCE_OPEN):  # cut by the budget: what is left, as its source
        return SentCell(number, body, None, None)
    out_mark, error_mark = f"\nOut[{number}]: ", f"\nError in In [{number}]: "
    ends = [
        i
        for i in (body.find(FENCE_CLOSE + out_mark), body.find(FENCE_CLOSE + error_mark))
        if i >= 0
    ]
    if ends:
        end = min(ends)
    elif body.endswith(FENCE_CLOSE):
        end = len(body) - len(FENCE_CLOSE)
    else:
        return SentCell(number, body[len(FENCE_OPEN) :], None, None)
    source = body[len(FENCE_OPEN) : end]
    rest = body[end + len(FENCE_CLOSE) :]
    result = error = None
    error_at = rest.find(error_mark)
    if error_at >= 0:
        error = rest[error_at + len(error_mark) :]
        rest = rest[:error_at]
    if rest.startswith(out_mark):
        result = rest[len(out_mark) :]
    return SentCell(number, source, result, error)


def sent_cells(message: Any) -> list[SentCell]:
    """The cells a notebook context message carried, oldest first, as they were sent."""
    text = str(getattr(message, "content", "") or "")
    starts = [(m.start(), m.end(), int(m.group(1))) for m in _START.finditer(text)]
    expected = _numbers(message)
    if expected:  # only the sections of the cells it says it sent, in order
        chosen: list[tuple[int, int, int]] = []
        for start in starts:
            if len(chosen) < len(expected) and start[2] == expected[len(chosen)]:
                chosen.append(start)
        starts = chosen
    cells: list[SentCell] = []
    for i, (_, body_start, number) in enumerate(starts):
        body_end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        cells.append(_cell(number, text[body_start:body_end]))
    return cells


def left_out_note(message: Any) -> str | None:
    """``In [1]–[3] left out to keep it short``, when the budget left cells out."""
    left_out = getattr(message, "left_out", None)
    if isinstance(left_out, list | tuple) and len(left_out) == 2:
        return f"In [{left_out[0]}]–[{left_out[1]}] left out to keep it short"
    return None


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def entry_title(cells: list[SentCell]) -> str:
    """The panel entry's title: ``notebook context: 3 cells, 1 error (KeyError)``."""
    failed = [c for c in cells if c.error is not None]
    title = f"notebook context: {_plural(len(cells), 'cell')}"
    if failed:
        kinds = list(dict.fromkeys(c.error_type or "error" for c in failed))
        title += f", {_plural(len(failed), 'error')} ({', '.join(kinds)})"
    return title


def plain_line(message: Any) -> str:
    """Plain mode's line: ``notebook context: In[4], In[5] (KeyError: 'BMI')``."""
    cells = sent_cells(message)
    numbers = [c.number for c in cells] or _numbers(message)
    if not numbers:
        line = "notebook context: no cells"
    elif len(numbers) <= MOST_NAMED:
        line = "notebook context: " + ", ".join(f"In[{n}]" for n in numbers)
    else:
        line = f"notebook context: In[{numbers[0]}]–In[{numbers[-1]}] ({len(numbers)} cells)"
    errors = [_short(c.error_line) for c in cells if c.error is not None]
    if errors:
        line += f" ({'; '.join(errors)})"
    left_out = left_out_note(message)
    if left_out:
        line += f"; {left_out}"
    return line


def _short(line: str) -> str:
    return line if len(line) <= PLAIN_ERROR_CHARS else line[: PLAIN_ERROR_CHARS - 1] + "…"


__all__ = ["SentCell", "entry_title", "left_out_note", "plain_line", "sent_cells"]
