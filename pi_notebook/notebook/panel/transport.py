"""The panel's transport: ops pulled into numbered frames, snapshots for (re)joining views.

The reducer writes ops into its own buffer and never calls the transport; the transport pulls
them. :meth:`Transport.poke` (the widget calls it after each event it applied) says there may
be something to send: at most ``rate`` times a second a frame is cut inline, otherwise a timer
on the event loop cuts it. Cutting a frame takes the source's pending ops
(:meth:`OpSource.take_ops`: the reducer renders the text streamed since the last frame then, so
that work is done once per frame, not per token) and sends them as
``{"type": "deltas", "seq": n, "ops": [...]}``. A view joins with ``hello`` (or asks ``resync``
after a gap) and gets ``{"type": "snapshot", "seq": n, ...state}``; deltas numbered ``n + 1`` on
follow it. Nothing is sent before a view said hello (anywidget drops messages a view was not
listening for): until then the source's ops are dropped, since the snapshot carries them. It
must never block, and it sends only from the thread of its event loop.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .ops import Op

DEFAULT_RATE = 30.0


@dataclass
class TransportStats:
    frames: int = 0
    snapshots: int = 0
    ops: int = 0
    bytes: int = 0
    """JSON bytes of every message's content (deltas and snapshots)."""


class OpSource(Protocol):
    """Where the transport pulls its frames' ops from (the reducer, or an op buffer)."""

    def take_ops(self) -> list[Op]:
        """The ops written since the last take, the next frame's."""
        ...

    def drop_ops(self) -> None:
        """Forget the ops written so far (no view follows them)."""
        ...


class Transport:
    def __init__(
        self,
        send: Callable[[dict[str, Any]], None],
        source: OpSource,
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
        self.source = source
        self._last_flush = float("-inf")
        self._timer: asyncio.TimerHandle | None = None
        self.measure = measure
        self.stats = TransportStats()

    # -- flushing --------------------------------------------------------------------------

    def poke(self) -> None:
        """The source may have ops: cut a frame now if the interval has passed, else make sure
        the timer will (before a view said hello, the ops are dropped instead)."""
        if not self.ready:
            self.source.drop_ops()
        elif self._clock() - self._last_flush >= self.interval:
            self.flush()
        elif self._timer is None and self.loop is not None and not self.loop.is_closed():
            delay = max(0.0, self._last_flush + self.interval - self._clock())
            self._timer = self.loop.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.flush()

    def flush(self) -> None:
        """Send the source's pending ops now (if any) as the next numbered frame."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self.ready:
            self.source.drop_ops()
            return
        ops = self.source.take_ops()
        if not ops:
            return
        self.seq += 1
        self._last_flush = self._clock()
        message = {"type": "deltas", "seq": self.seq, "ops": ops}
        self._emit(message)
        self.stats.frames += 1
        self.stats.ops += len(ops)

    def snapshot(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """Send the full ``state`` as a snapshot at the current seq; views re-base on it.

        The source's pending ops are dropped: ``state`` already contains them.
        """
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.source.drop_ops()
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


__all__ = ["DEFAULT_RATE", "OpSource", "Transport", "TransportStats"]
