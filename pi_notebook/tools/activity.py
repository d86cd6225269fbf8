"""Who else may have written the namespace while a tool call ran, so the call is not blamed.

During a ``--background`` run the user keeps working, and two conversations may run at once: a
cell, or another conversation's run (its tools, the magic setting ``_agent_reply``), may create or
change variables while a ``run_python`` call runs on its worker thread. :class:`Activity` follows
a namespace's writers: the IPython shell's cells (``pre_run_cell`` / ``post_run_cell``), the
conversations' runs (:meth:`Activity.begin_run` / :meth:`Activity.end_run`) and the tool calls
(:meth:`Activity.open_call`). :meth:`CallWindow.close` tells whether any writer other than the
call itself and its own cell was active while it ran. Cells run by the agent's own code (from a
worker thread) are the agent's and are not counted.

This module never runs code and never changes a namespace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .worker import in_worker


@dataclass
class Activity:
    """The writers of one namespace: cells, conversation runs and tool calls."""

    cells_started: int = 0
    cells: list[Any] = field(default_factory=list)
    """The running cells (their ``ExecutionInfo``), outermost first."""
    runs_started: int = 0
    runs: list[Any] = field(default_factory=list)
    """The active conversation runs (their undo records)."""
    calls_started: int = 0
    calls_open: int = 0

    # -- cells ---------------------------------------------------------------------------------

    def attach(self, shell: Any) -> None:
        """Follow the cells of an IPython shell."""
        shell.events.register("pre_run_cell", self.pre_run_cell)
        shell.events.register("post_run_cell", self.post_run_cell)

    def pre_run_cell(self, info: Any = None) -> None:
        if in_worker():
            return
        self.cells_started += 1
        self.cells.append(info)

    def post_run_cell(self, result: Any = None) -> None:
        if in_worker():
            return
        info = getattr(result, "info", None)
        for i in range(len(self.cells) - 1, -1, -1):
            if self.cells[i] is info:
                del self.cells[i]
                return
        if info is None and self.cells:  # an event without its info: the innermost cell ended
            self.cells.pop()

    @property
    def current_cell(self) -> Any:
        """The innermost running cell, or ``None``."""
        return self.cells[-1] if self.cells else None

    # -- runs and calls ----------------------------------------------------------------------------

    def begin_run(self, run: Any) -> None:
        self.runs_started += 1
        self.runs.append(run)

    def end_run(self, run: Any) -> None:
        for i, active in enumerate(self.runs):
            if active is run:
                del self.runs[i]
                return

    def open_call(self, run: Any, own_cell: Any, own_cell_known: bool) -> CallWindow:
        """A tool call of ``run`` starts (``run``: its undo record). Its own cell is
        ``own_cell`` if known; otherwise the cells running as the call starts are the caller's."""
        window = CallWindow(
            self,
            run,
            [own_cell] if own_cell_known else list(self.cells),
            self.cells_started,
            list(self.cells),
            self.runs_started,
            [r for r in self.runs if r is not run],
            self.calls_started,
            self.calls_open,
        )
        self.calls_started += 1
        self.calls_open += 1
        return window


@dataclass
class CallWindow:
    """One tool call, from :meth:`Activity.open_call` to :meth:`close`."""

    activity: Activity
    run: Any
    own_cells: list[Any]
    cells_started: int
    cells: list[Any]
    runs_started: int
    other_runs: list[Any]
    calls_started: int
    calls_open: int
    closed: bool = False

    def close(self) -> bool:
        """The call ended: whether another writer was active meanwhile."""
        a = self.activity
        if not self.closed:
            self.closed = True
            a.calls_open -= 1
        cells = [*self.cells, *a.cells]
        return (
            a.cells_started != self.cells_started
            or any(all(cell is not own for own in self.own_cells) for cell in cells)
            or a.runs_started != self.runs_started
            or bool(self.other_runs)
            or any(r is not self.run for r in a.runs)
            or a.calls_started != self.calls_started + 1
            or self.calls_open > 0
        )


__all__ = ["Activity", "CallWindow"]
