"""Capturing what ``run_python`` code prints, per thread, and reporting it while it runs.

While any run may print, :class:`_Capture` puts a thread-aware stand-in on ``sys.stdout`` /
``sys.stderr``: a run thread's writes go to its :class:`BoundedBuffer`, every other thread's to
the real stream. :class:`OutputProgress` tells the event loop, at most every ``interval``
seconds and never once per write, that a run's output grew (``run_python`` streams it into the
tool card).

This module must never redirect the output of a thread it was not told about, and never free a
stand-in stream: ``print`` (and every C caller of ``PySys_GetObject``) holds only a *borrowed*
reference to ``sys.stdout`` while it writes, so a stream object put on ``sys.stdout`` must live
as long as the process (freeing one mid-``print`` crashed the interpreter).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO


class BoundedBuffer:
    """Keeps the first and the last part of what is written, and counts the rest."""

    def __init__(self, limit: int, progress: OutputProgress | None = None) -> None:
        self.limit = limit
        self.head: list[str] = []
        self.head_len = 0
        self.tail = ""
        self.total = 0
        self.progress = progress

    def write(self, text: str) -> int:
        """Take ``text`` (kept or only counted); returns its length, as a stream does."""
        written = len(text)
        room = self.limit // 2 - self.head_len
        if room > 0:
            self.head.append(text[:room])
            self.head_len += len(text[:room])
            text = text[room:]
        if text:
            self.tail = (self.tail + text)[-(self.limit - self.limit // 2) :]
        self.total += written  # after the text is kept: a reader on another thread reads
        if written and self.progress is not None:  # ``total`` first and never sees it ahead
            self.progress.written()
        return written

    def getvalue(self) -> str:
        """What was kept (also safe to call from another thread while this one writes)."""
        total = self.total
        head = "".join(self.head)
        tail = self.tail
        kept = len(head) + len(tail)
        if kept >= total:
            return head + tail
        return f"{head}\n... [{total - kept} characters omitted]\n{tail}"


class _ThreadRouter:
    """A stand-in for a standard stream: run threads write to their buffer, others through.

    Never freed (see the module doc): ``original`` is the stream it stood in for most recently.
    """

    def __init__(self, original: TextIO | None, buffers: dict[int, BoundedBuffer]) -> None:
        self.original = original
        self._buffers = buffers

    def write(self, text: str) -> int:
        buffer = self._buffers.get(threading.get_ident())
        if buffer is not None:
            return buffer.write(text)
        original = self.original
        if original is None:  # no stream at all (pythonw): print() would drop the text too
            return len(text)
        return original.write(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        original = self.original
        if threading.get_ident() not in self._buffers and original is not None:
            original.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


class _Capture:
    """Installs the routers on ``sys.stdout``/``sys.stderr`` while any run may print."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.stdout: dict[int, BoundedBuffer] = {}
        self.stderr: dict[int, BoundedBuffer] = {}
        # Created once, referenced here for good: a router is never deallocated, so a thread
        # inside print() with a borrowed reference to it stays safe whatever the swaps.
        self.out_router = _ThreadRouter(sys.stdout, self.stdout)
        self.err_router = _ThreadRouter(sys.stderr, self.stderr)

    def acquire(self) -> None:
        """One more run: (re)install the routers over whatever the streams are now."""
        with self.lock:
            self.users += 1
            # Plain attribute reads and stores, no calls, between the check and the swap (so no
            # thread switch there). Checked on every acquire: a stream replaced meanwhile (pytest's
            # capture, IPython's %%capture) is wrapped again instead of silently not captured.
            if sys.stdout is not self.out_router:
                self.out_router.original = sys.stdout
                sys.stdout = self.out_router
            if sys.stderr is not self.err_router:
                self.err_router.original = sys.stderr
                sys.stderr = self.err_router

    def release(self) -> None:
        """One run fewer: the last one puts the streams back (unless replaced meanwhile)."""
        with self.lock:
            self.users -= 1
            if self.users == 0:
                if sys.stdout is self.out_router:
                    sys.stdout = self.out_router.original
                if sys.stderr is self.err_router:
                    sys.stderr = self.err_router.original

    def route(self, stdout: BoundedBuffer, stderr: BoundedBuffer) -> None:
        """The calling thread prints into these buffers (until :meth:`unroute`)."""
        ident = threading.get_ident()
        self.stdout[ident] = stdout
        self.stderr[ident] = stderr

    def unroute(self) -> None:
        ident = threading.get_ident()
        self.stdout.pop(ident, None)
        self.stderr.pop(ident, None)


capture = _Capture()
"""The one capture of this process (its stand-ins are never freed)."""


class OutputProgress:
    """Calls ``report`` on the loop after output was written, at most every ``interval`` s.

    :meth:`written` (any thread, cheap) only asks the loop for a report when none is pending,
    so a burst of writes costs one wake-up; :meth:`close` stops further reports.
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, report: Callable[[], None], interval: float = 0.1
    ) -> None:
        self.loop = loop
        self.report = report
        self.interval = interval
        self.pending = False
        self.closed = False
        self.last = 0.0
        self.timer: asyncio.TimerHandle | None = None

    def written(self) -> None:
        if self.pending or self.closed:
            return
        self.pending = True
        try:
            self.loop.call_soon_threadsafe(self._schedule)
        except RuntimeError:  # the loop is closed: nobody listens any more
            pass

    def _schedule(self) -> None:
        if self.closed:
            return
        delay = max(0.0, self.last + self.interval - time.monotonic())
        self.timer = self.loop.call_later(delay, self._fire)

    def _fire(self) -> None:
        self.timer = None
        if self.closed:
            return
        self.pending = False  # before reading the output: a later write asks again
        self.last = time.monotonic()
        self.report()

    def close(self) -> None:
        """No more reports (on the loop's thread)."""
        self.closed = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


__all__ = ["BoundedBuffer", "OutputProgress", "capture"]
