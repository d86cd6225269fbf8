"""The last lines a stdio MCP server wrote to its stderr, kept for ``%agent status`` and errors.

A server's stderr goes to a pipe that a daemon thread reads into a bounded buffer (never
through the event loop, so a chatty server cannot slow the kernel). This module must never
write what it reads to the notebook's streams, hold more than ``max_lines`` lines of at most
``max_line_chars`` characters, or show a text it was told is a secret.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable
from typing import TextIO


class StderrTail:
    """A bounded tail of one server's stderr, across its restarts."""

    def __init__(
        self,
        redact: Callable[[str], str] = lambda text: text,
        max_lines: int = 200,
        max_line_chars: int = 500,
    ) -> None:
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._redact = redact
        self._max_line_chars = max_line_chars
        self._eof = threading.Event()
        self._eof.set()
        self._write_end: TextIO | None = None

    def open(self) -> TextIO:
        """A new pipe for a process about to start: its write end, to pass as its stderr.

        Call :meth:`spawned` once the process started (or failed to), so that only the child
        holds the write end and the reader sees the end of the stream when the child exits.
        """
        read_fd, write_fd = os.pipe()
        eof = threading.Event()
        self._eof = eof
        thread = threading.Thread(
            target=self._read, args=(read_fd, eof), name="mcp-stderr", daemon=True
        )
        thread.start()
        self._write_end = os.fdopen(write_fd, "w")
        return self._write_end

    def spawned(self) -> None:
        """Close this process's copy of the write end (the child keeps its own)."""
        if self._write_end is not None:
            self._write_end.close()
            self._write_end = None

    def wait_closed(self, timeout: float) -> bool:
        """Block up to ``timeout`` s until the current pipe's writers are gone (call off-loop)."""
        return self._eof.wait(timeout)

    def lines(self, last: int | None = None) -> list[str]:
        lines = list(self._lines)
        return lines if last is None else lines[-last:]

    def _read(self, fd: int, eof: threading.Event) -> None:
        pending = b""
        try:
            while chunk := os.read(fd, 65536):
                *complete, pending = (pending + chunk).split(b"\n")
                for line in complete:
                    self._keep(line)
                if len(pending) > self._max_line_chars * 4:  # a line without end: keep its start
                    self._keep(pending)
                    pending = b""
            if pending:
                self._keep(pending)
        except OSError:
            pass
        finally:
            os.close(fd)
            eof.set()

    def _keep(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        if not text.strip():
            return
        text = self._redact(text)
        if len(text) > self._max_line_chars:
            text = text[: self._max_line_chars - 3] + "..."
        self._lines.append(text)


__all__ = ["StderrTail"]
