"""The panel's transport: ops batched into numbered frames, snapshots for (re)joining views.

:class:`Transport` is the :class:`~.ops.OpSink` the reducer writes to. Ops wait in a buffer
(consecutive appends to one path coalesce into one op) and go out as
``{"type": "deltas", "seq": n, "ops": [...]}`` at most ``rate`` times a second: a flush happens
inline when the interval has passed, otherwise a timer on the event loop sends the rest. Just
before a frame goes out, ``before_flush`` (the reducer's ``render``) may add the ops of the text
streamed since the last frame (``touch()`` says there is some), so that work is done once per
frame, not per token. A
view joins with ``hello`` (or asks ``resync`` after a gap) and gets
``{"type": "snapshot", "seq": n, ...state}``; deltas numbered ``n + 1`` on follow it.
Nothing is sent before a view said hello (anywidget drops messages a view was not listening
for). It must never block, and it sends only from the thread of its event loop.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .ops import Op, Path

DEFAULT_RATE = 30.0


@dataclass
class TransportStats:
    frames: int = 0
    snapshots: int = 0
    ops: int = 0
    bytes: int = 0
    """JSON bytes of every message's content (deltas and snapshots)."""


class Transport:
    def __init__(
        self,
        send: Callable[[dict[str, Any]], None],
        *,
        rate: float = DEFAULT_RATE,
        loop: asyncio.AbstractEventLoop | None = None,
        clock: Callable[[], float] = time.monotonic,
        measure: bool = False,
    ) -> None:
        self._send = send
        self.interval = 1.0 / rate
        self.loop = loop
        self._clock = clock
        self.seq = 0
        self.ready = False
        """True once a view said hello: before that nothing is sent."""
        self.pending: list[Op] = []
        self.before_flush: Callable[[], None] | None = None
        """Called (once a view is there) before each frame is cut; may add ops."""
        self._flushing = False
        self._last_flush = float("-inf")
        self._timer: asyncio.TimerHandle | None = None
        self.measure = measure
        self.stats = TransportStats()

    # -- OpSink ----------------------------------------------------------------------------

    def set(self, path: Path, value: Any) -> None:
        self._add(["s", path, value])

    def push(self, path: Path, value: Any) -> None:
        self._add(["p", path, value])

    def splice(self, path: Path, keep: int, text: str) -> None:
        self._add(["t", path, [keep, text]])

    def move(self, path: Path, units: int) -> None:
        self._add(["m", path, units])

    def touch(self) -> None:
        if self.ready:
            self._tick()

    def append(self, path: Path, text: str) -> None:
        if not self.ready:
            return
        pending = self.pending
        if pending:
            last = pending[-1]
            if last[0] == "a" and (last[1] is path or last[1] == path):
                last[2] += text
                self._tick()
                return
        pending.append(["a", path, text])
        self._tick()

    def _add(self, op: Op) -> None:
        if not self.ready:
            return
        self.pending.append(op)
        self._tick()

    # -- flushing --------------------------------------------------------------------------

    def _tick(self) -> None:
        if self._flushing:  # ops added by before_flush go into the frame being cut
            return
        if self._clock() - self._last_flush >= self.interval:
            self.flush()
        elif self._timer is None and self.loop is not None and not self.loop.is_closed():
            delay = max(0.0, self._last_flush + self.interval - self._clock())
            self._timer = self.loop.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.flush()

    def flush(self) -> None:
        """Send the buffered ops now (if any) as the next numbered frame."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.before_flush is not None and self.ready and not self._flushing:
            self._flushing = True
            try:
                self.before_flush()
            finally:
                self._flushing = False
        if not self.pending:
            return
        ops, self.pending = self.pending, []
        self.seq += 1
        self._last_flush = self._clock()
        message = {"type": "deltas", "seq": self.seq, "ops": ops}
        self._emit(message)
        self.stats.frames += 1
        self.stats.ops += len(ops)

    def snapshot(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """Send the full ``state`` as a snapshot at the current seq; views re-base on it.

        Buffered ops are dropped: ``state`` already contains them.
        """
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.pending = []
        self.ready = True
        message = {**state, "type": "snapshot", "seq": self.seq}
        self._emit(message)
        self.stats.snapshots += 1
        return message

    def _emit(self, message: dict[str, Any]) -> None:
        if self.measure:
            self.stats.bytes += len(json.dumps(message, separators=(",", ":")).encode())
        self._send(message)

    def close(self) -> None:
        self.flush()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


__all__ = ["DEFAULT_RATE", "Transport", "TransportStats"]
