"""Running agent-written Python in the notebook namespace, on a worker thread, abortably.

:func:`run_code` compiles the code (the last expression's value is returned, as in a cell) and
runs it with :func:`~.worker.run_on_thread`, so the kernel's event loop keeps serving messages
and an abort stops busy loops and ``time.sleep`` at once (code blocked in another C call stops
when the call returns; ``run_code`` waits ``grace`` seconds for that and otherwise reports it
still running). ``print`` output of *that thread only* is captured (:mod:`.capture`), and the
code may not end or fork the kernel (:mod:`.kernel_guard`: such a call fails the run with the
rule as its error). What the code displays (figures, images, a DataFrame's table) is kept for
the call's result instead of going below the cell (:mod:`.displays`).

This module must never block the event loop while user code runs and never redirect the
output of code it did not start.
"""

from __future__ import annotations

import ast
import asyncio
import linecache
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..ai import AbortSignal
from . import kernel_guard
from .capture import BoundedBuffer, OutputProgress, capture
from .displays import Shown, displays, open_figures, take_new_figures
from .worker import RunAborted, run_on_thread

DEFAULT_OUTPUT_CHARS = 4000
PROGRESS_INTERVAL = 0.1
"""Seconds between two reports of a run's output while it runs (at most ~10 a second)."""


@dataclass
class RunOutcome:
    stdout: str
    stderr: str
    value: Any = None
    has_value: bool = False
    error: str | None = None
    """A short traceback when the code raised."""
    aborted: bool = False
    still_running: bool = False
    """Aborted, but the thread was still inside a C call after the grace period."""
    seconds: float = 0.0
    shown: Shown | None = None
    """What the code displayed: images, figures left open, rich displays."""


def compile_code(
    code: str, filename: str, tree: ast.Module | None = None
) -> tuple[Any, Any | None]:
    """``(body, last_expression)`` code objects; raises ``SyntaxError``.

    ``tree`` is ``code`` already parsed (``"exec"`` mode), to save parsing it again; it is
    consumed (its last expression is taken out of its body).
    """
    if tree is None:
        tree = ast.parse(code, filename, "exec")
    last: Any | None = None
    final = tree.body[-1] if tree.body else None
    if isinstance(final, ast.Expr):
        tree.body.pop()
        expression = ast.Expression(final.value)
        last = compile(expression, filename, "eval")
    body = compile(tree, filename, "exec")
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    return body, last


def short_traceback(exc: BaseException, filename: str, frames: int = 5) -> str:
    """The exception with only the frames of the agent's code and below (at most ``frames``)."""
    every = list(traceback.extract_tb(exc.__traceback__))
    start = next((i for i, e in enumerate(every) if e.filename == filename), 0)
    entries = every[start:][-frames:]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(entries)]
    lines.extend(traceback.format_exception_only(type(exc), exc))
    return "".join(lines).rstrip()


_counter = iter(range(1, sys.maxsize))


async def run_code(
    code: str,
    namespace: dict[str, Any],
    signal: AbortSignal | None,
    *,
    tree: ast.Module | None = None,
    output_chars: int = DEFAULT_OUTPUT_CHARS,
    grace: float = 1.0,
    on_output: Callable[[str, str], None] | None = None,
) -> RunOutcome:
    """Run ``code`` with ``namespace`` as globals on a worker thread; see the module doc.

    ``tree``: ``code`` already parsed, handed to :func:`compile_code` (which consumes it).
    ``on_output(stdout, stderr)`` gets the (bounded) output so far while the code runs, on the
    loop's thread, at most every :data:`PROGRESS_INTERVAL` seconds and only after output grew.
    """
    filename = f"<run_python-{next(_counter)}>"
    body, last = compile_code(code, filename, tree)
    progress: OutputProgress | None = None
    if on_output is not None:

        def report() -> None:
            on_output(stdout.getvalue(), stderr.getvalue())

        progress = OutputProgress(asyncio.get_running_loop(), report, PROGRESS_INTERVAL)
    stdout = BoundedBuffer(output_chars, progress)
    stderr = BoundedBuffer(output_chars, progress)
    shown = Shown(figures_before=open_figures())

    def call() -> tuple[Any, bool]:
        exec(body, namespace)
        if last is not None:
            return eval(last, namespace), True
        return None, False

    refused: list[str] = []

    def enter() -> None:
        capture.route(stdout, stderr)
        displays.route(shown)
        refused[:] = []
        kernel_guard.enter(refused)

    def leave() -> None:
        try:  # a figure left open is the call's too (and would show below the cell)
            take_new_figures(shown)
        except Exception as exc:
            shown.notes.append(f"the figures could not be drawn: {type(exc).__name__}: {exc}")
        kernel_guard.leave()
        displays.unroute()
        capture.unroute()

    def release() -> None:
        capture.release()
        displays.release()

    kernel_guard.install()
    capture.acquire()
    displays.acquire()
    # Normally the thread is done in time and the capture is released on the loop's thread; a
    # thread stuck in a C call releases it itself when it ends (the stand-ins are never freed,
    # so a swap from that thread cannot pull a stream from under a concurrent print()).
    try:
        outcome = await run_on_thread(
            call,
            signal,
            grace=grace,
            name="pi-run-python",
            enter=enter,
            leave=leave,
            release=release,
        )
    finally:
        if progress is not None:
            progress.close()  # the result follows: no progress after it
    out, err, seconds = stdout.getvalue(), stderr.getvalue(), outcome.seconds
    if refused:  # also when the code caught the refusal and went on
        return RunOutcome(out, err, error=refused[0], seconds=seconds, shown=shown)
    if outcome.aborted:
        return RunOutcome(
            out,
            err,
            aborted=True,
            still_running=outcome.still_running,
            seconds=seconds,
            shown=shown,
        )
    if outcome.error is not None:
        error = short_traceback(outcome.error, filename)
        return RunOutcome(out, err, error=error, seconds=seconds, shown=shown)
    value, has_value = outcome.value
    return RunOutcome(out, err, value, has_value, seconds=seconds, shown=shown)


__all__ = [
    "DEFAULT_OUTPUT_CHARS",
    "BoundedBuffer",
    "RunAborted",
    "RunOutcome",
    "compile_code",
    "run_code",
    "short_traceback",
]
