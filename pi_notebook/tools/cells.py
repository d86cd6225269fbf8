"""The notebook's executed cells as the kernel knows them: sources, results and errors.

Read kernel-side, through IPython's public records, so it is the same in every front end
(JupyterLab, Notebook 7, VS Code, nbclient): a cell's source is ``history_manager.input_hist_raw``
(``In[n]`` as the user typed it, magics unexpanded), its result ``history_manager.output_hist``
(``Out[n]``). IPython keeps no per-cell error, and a runner that executes cells without storing
history (nbval) leaves nothing there at all, so :class:`CellLog` (a ``post_run_cell`` listener,
installed by ``%load_ext pi_notebook``) notes each cell as it runs: its source, its result (held
for the last few cells only), and a failing cell's error as text (type, message and the last
frames of its traceback, cut to a few hundred characters; the whole traceback cut to
:data:`FULL_ERROR_CHARS`). It keeps text, never the exception (a traceback holds every frame's
locals alive). An error raised before the extension was loaded is still found, as the last one,
through ``sys.last_exc`` / ``sys.last_value``. Silent executions (a front end's own) fire no
event and are never seen.

:func:`cell_at` reads one cell (constant time: a list index and dict lookups), so a caller that
walks newest first and stops at its budget never walks the whole history. Everything here is
bounded: a 1 MB error message or a ``repr`` of a huge value costs a few hundred characters.

This module never redacts (its callers redact the whole text they send, once), never prints and
never changes the namespace or the shell's history.
"""

from __future__ import annotations

import linecache
import os
import reprlib
import sys
import traceback
from collections import OrderedDict
from dataclasses import dataclass
from itertools import islice
from types import TracebackType
from typing import Any

from .summary import bounded

AGENT_CELL = "%%agent"
AGENT_LINE = "%agent"
SOURCE_CHARS = 2_000
"""At most this much of one cell's source (its head and a marked tail)."""
RESULT_CHARS = 400
"""At most this much of one cell's result (``Out[n]``'s repr)."""
MESSAGE_CHARS = 400
"""At most this much of an error's message."""
FRAME_LINE_CHARS = 160
LAST_FRAMES = 3
"""The frames an error shows: the cell's own (where it failed in the cell) and the last ones."""
FULL_ERROR_CHARS = 20_000
"""At most this much of a whole traceback (``last_error()``, ``{Err}``)."""
KEPT_ERRORS = 64
"""The most recent failing cells whose errors the log keeps."""
KEPT_CELLS = 256
"""The most recent cells whose sources the log keeps."""
KEPT_VALUES = 16
"""The most recent cells whose results the log holds (IPython's ``Out`` holds the others, when
the kernel stores history)."""


def cut_text(text: str, limit: int) -> str:
    """``text`` in at most about ``limit`` characters: its head and tail around a marker that
    says how much was left out."""
    if len(text) <= limit:
        return text
    tail = limit // 4
    head = limit - tail
    return f"{text[:head]}[… {len(text) - head - tail} characters cut …]{text[-tail:]}"


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text[: limit * 2].split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# -- errors ----------------------------------------------------------------------------------


def _message(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # an exception whose __str__ fails still has a type
        text = "(its message could not be read)"
    return cut_text(text, MESSAGE_CHARS)


def _frames(tb: TracebackType | None) -> list[TracebackType]:
    """The traceback's entries without IPython's own leading ones (``run_code``'s exec)."""
    entries: list[TracebackType] = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    ipython = os.sep + "IPython" + os.sep
    while entries and ipython in entries[0].tb_frame.f_code.co_filename:
        entries.pop(0)
    return entries


def _is_cell(filename: str) -> bool:
    """A cell's code (IPython and ipykernel compile cells under names that are no file)."""
    return filename.startswith("<") or not os.path.exists(filename)


def _frame_line(entry: TracebackType) -> str:
    code = entry.tb_frame.f_code
    filename, lineno = code.co_filename, entry.tb_lineno
    source = linecache.getline(filename, lineno).strip()
    where = "cell" if _is_cell(filename) else os.sep.join(filename.split(os.sep)[-2:])
    line = f"  {where}, line {lineno}, in {code.co_name}"
    if source:
        line += f": {source}"
    return line if len(line) <= FRAME_LINE_CHARS else line[: FRAME_LINE_CHARS - 1] + "…"


def short_error(exc: BaseException) -> str:
    """``KeyError: 'BMI'`` and the frames that say where: the first frame in the cell, then
    the last :data:`LAST_FRAMES`; a few hundred characters whatever the exception."""
    head = f"{type(exc).__name__}: {_message(exc)}"
    if isinstance(exc, SyntaxError) and exc.text:
        return f"{head}\n  line {exc.lineno}: {_one_line(exc.text, FRAME_LINE_CHARS)}"
    entries = _frames(exc.__traceback__)
    if not entries:
        return head
    chosen = [0, *range(max(1, len(entries) - LAST_FRAMES), len(entries))]
    lines = [head, "Traceback (the cell's frame and the last ones):"]
    previous = -1
    for index in chosen:
        if index > previous + 1:
            lines.append(f"  … {index - previous - 1} frames …")
        lines.append(_frame_line(entries[index]))
        previous = index
    return "\n".join(lines)


def full_error(exc: BaseException) -> str:
    """The whole traceback as Python prints it (IPython's own frames left out), cut to
    :data:`FULL_ERROR_CHARS`."""
    entries = _frames(exc.__traceback__)
    tb = entries[0] if entries else None
    try:
        lines = traceback.format_exception(type(exc), exc, tb)
    except Exception:
        lines = [short_error(exc)]
    return cut_text("".join(lines).rstrip(), FULL_ERROR_CHARS)


@dataclass(frozen=True, slots=True)
class CellError:
    """A failing cell's error, as text."""

    cell: int
    """The cell's number (``In[n]``)."""
    short: str
    full: str


@dataclass(slots=True)
class LoggedCell:
    """A cell as the log saw it run (for a kernel that does not store history)."""

    source: str
    value: Any = None
    has_value: bool = False


class CellLog:
    """What IPython's ``post_run_cell`` event says of each cell, most recent last: the errors
    of failing cells (which IPython keeps nowhere), and every cell's source and result, so a
    cell run without storing history (``store_history=False``: nbval, some runners) is seen
    too. Numbered as IPython numbers them (``In[n]``): a cell that stores no history takes the
    number after the last one. Silent executions (a front end's own) never fire the event."""

    def __init__(self, keep: int = KEPT_ERRORS, keep_cells: int = KEPT_CELLS) -> None:
        self.keep = keep
        self.keep_cells = keep_cells
        self.errors: OrderedDict[int, CellError] = OrderedDict()
        self.cells: OrderedDict[int, LoggedCell] = OrderedDict()
        self.last_number: int | None = None
        """The number of the last cell seen."""

    def __call__(self, result: Any) -> None:
        """The ``post_run_cell`` listener: note the cell, and its error if it had one."""
        try:
            self.record(result)
        except Exception:  # never a warning in the user's cell for this note
            pass

    def record(self, result: Any) -> int:
        info = getattr(result, "info", None)
        count = result.execution_count
        stored = getattr(info, "store_history", True) and isinstance(count, int)
        # A cell not stored in the history keeps IPython's count: the number after the last.
        number = count if stored else (self.last_number or 0) + 1
        self.last_number = number
        raw = getattr(info, "raw_cell", None)
        if isinstance(raw, str):
            value = result.result
            source = cut_text(raw, SOURCE_CHARS * 2)
            self.cells[number] = LoggedCell(source, value, value is not None)
            self.cells.move_to_end(number)
            while len(self.cells) > self.keep_cells:
                self.cells.popitem(last=False)
            for older in islice(reversed(self.cells), KEPT_VALUES, KEPT_VALUES + 1):
                self.cells[older].value = None  # older results are no longer held here
        exc = result.error_before_exec or result.error_in_exec
        if exc is not None:
            self.add(number, exc)
        return number

    def clear(self) -> None:
        """Forget every cell (a new shell: its numbers start again)."""
        self.errors.clear()
        self.cells.clear()
        self.last_number = None

    def next_number(self, shell: Any) -> int:
        """The number of the cell running now (IPython's, or the log's own when the kernel
        stores no history)."""
        count = shell.execution_count if isinstance(shell.execution_count, int) else 0
        if self.last_number is not None and self.last_number >= count:
            return self.last_number + 1
        return count

    def add(self, cell: int, exc: BaseException) -> CellError:
        error = CellError(cell, short_error(exc), full_error(exc))
        self.errors[cell] = error
        self.errors.move_to_end(cell)
        while len(self.errors) > self.keep:
            self.errors.popitem(last=False)
        return error

    def error_of(self, cell: int) -> CellError | None:
        return self.errors.get(cell)

    def last(self) -> CellError | None:
        """The most recent error: the log's, else the interpreter's last one (an error from
        before ``%load_ext``), numbered 0 when its cell is unknown."""
        if self.errors:
            return next(reversed(self.errors.values()))
        exc = _interpreter_last_error()
        return CellError(0, short_error(exc), full_error(exc)) if exc is not None else None

    def install(self, shell: Any) -> None:
        if self not in shell.events.callbacks["post_run_cell"]:
            shell.events.register("post_run_cell", self)

    def uninstall(self, shell: Any) -> None:
        if self in shell.events.callbacks["post_run_cell"]:
            shell.events.unregister("post_run_cell", self)


def _interpreter_last_error() -> BaseException | None:
    """``sys.last_exc`` (3.12+) or ``sys.last_value``: what IPython's ``showtraceback`` set."""
    exc = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
    return exc if isinstance(exc, BaseException) else None


_log = CellLog()


def cell_log() -> CellLog:
    """The kernel's cell log (``%load_ext pi_notebook`` installs it on the shell)."""
    return _log


# -- cells -----------------------------------------------------------------------------------


_repr = reprlib.Repr()
_repr.maxstring = RESULT_CHARS
_repr.maxother = RESULT_CHARS
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 20


def result_text(value: Any) -> str:
    """A short repr of a cell's result."""
    try:
        text = _repr.repr(value)
    except Exception as exc:
        text = f"<{type(value).__name__}: repr failed: {type(exc).__name__}>"
    return cut_text(text, RESULT_CHARS)


def user_source(raw: str) -> str:
    """A cell's source without its ``%agent`` lines; ``""`` for an ``%%agent`` cell."""
    if raw.lstrip().startswith(AGENT_CELL):
        return ""
    if AGENT_LINE not in raw:
        return raw.strip()
    kept = [line for line in raw.splitlines() if not line.lstrip().startswith(AGENT_LINE)]
    return "\n".join(kept).strip()


@dataclass(frozen=True, slots=True)
class Cell:
    """One executed cell, as the model is shown it."""

    number: int
    source: str
    result: str | None
    error: str | None

    def text(self) -> str:
        parts = [f"In [{self.number}]:\n```python\n{self.source}\n```"]
        if self.result is not None:
            parts.append(f"Out[{self.number}]: {self.result}")
        if self.error is not None:
            parts.append(f"Error in In [{self.number}]: {self.error}")
        return "\n".join(parts)


def current_number(shell: Any, log: CellLog | None = None) -> int:
    """The number of the cell running now (the next one, between cells)."""
    return (log or _log).next_number(shell)


def cell_at(shell: Any, number: int, log: CellLog | None = None) -> Cell | None:
    """Cell ``number`` (``None``: unknown, an ``%%agent`` cell, or empty once its ``%agent``
    lines are left out), from IPython's history, else from the log. Constant time."""
    log = log or _log
    history = shell.history_manager
    raw_inputs = history.input_hist_raw
    outputs = history.output_hist
    logged = log.cells.get(number)
    if 0 < number < len(raw_inputs):
        raw = str(raw_inputs[number])
    elif logged is not None:
        raw = logged.source
    else:
        return None
    source = user_source(raw)
    if not source:
        return None
    if number in outputs:
        result: str | None = result_text(outputs[number])
    elif logged is not None and logged.has_value and logged.value is not None:
        result = result_text(logged.value)
    else:
        result = None
    error = log.error_of(number)
    return Cell(number, cut_text(source, SOURCE_CHARS), result, error.short if error else None)


def recent_cells(
    shell: Any, last: int, before: int | None = None, log: CellLog | None = None
) -> list[Cell]:
    """Up to ``last`` cells run before cell ``before`` (default: the running one), oldest
    first; ``%%agent`` cells are skipped (and not counted)."""
    number = (current_number(shell, log) if before is None else before) - 1
    cells: list[Cell] = []
    visited = 0
    while number > 0 and len(cells) < last and visited < last * 20:
        cell = cell_at(shell, number, log)
        if cell is not None:
            cells.append(cell)
        number -= 1
        visited += 1
    cells.reverse()
    return cells


def cells_text(cells: list[Cell], limit: int) -> str:
    """The cells, one after the other, in at most ``limit`` characters."""
    return bounded("\n\n".join(c.text() for c in cells), limit)


__all__ = [
    "Cell",
    "CellError",
    "CellLog",
    "LoggedCell",
    "cell_at",
    "cell_log",
    "cells_text",
    "current_number",
    "cut_text",
    "full_error",
    "recent_cells",
    "result_text",
    "short_error",
    "user_source",
]
