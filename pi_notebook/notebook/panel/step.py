"""Step mode: the awaited event sink holds the run at a hold point until the user says "next".

The agent awaits its listeners in order, so a listener that awaits :meth:`StepGate.hold`
stops the loop exactly at that event; the request tap awaits it before a model request the
same way. Which points hold is the granularity's (``stepping.hold_points``). :meth:`next`
releases one hold, :meth:`run_to_end` releases it and every later one, and an abort releases
the gate too, so the run can close its events.

Holds never overlap: the tools of a parallel batch may reach a hold point at the same time,
and each waits its turn (one held point is shown, and one *Next* releases exactly one).
The gate never waits on a control nobody can see: it holds only once a view of the panel has
announced itself (:meth:`view_ready`); when none does within :attr:`view_timeout` seconds
(a front end without widgets), step mode turns itself off and says so.
The gate must be driven from its event loop's thread (the widget hands control messages over
with ``call_soon_threadsafe``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection

from ...ai import AbortSignal

#: Seconds the first hold waits for a view of the panel before step mode gives up.
VIEW_TIMEOUT = 30.0

OnHold = Callable[[str | None, tuple[str, str] | None], None]
"""Told ``(point, (what is held, what comes next))`` when a hold starts, ``(None, None)`` when
it ends."""


class StepGate:
    def __init__(
        self,
        *,
        enabled: bool = False,
        points: Collection[str] = (),
        on_hold: OnHold | None = None,
        on_no_view: Callable[[], None] | None = None,
        view_timeout: float = VIEW_TIMEOUT,
    ) -> None:
        self.enabled = enabled
        self.points = frozenset(points)
        self.running_to_end = False
        self.held: str | None = None
        self.view_timeout = view_timeout
        self._waiter: asyncio.Future[None] | None = None
        self._lock: asyncio.Lock | None = None
        self._view: asyncio.Event | None = None
        self._view_seen = False
        self._on_hold = on_hold
        self._on_no_view = on_no_view

    def should_hold(self, point: str) -> bool:
        return self.enabled and not self.running_to_end and point in self.points

    def view_ready(self) -> None:
        """A view of the panel is showing (its ``hello`` arrived): holds have a *Next*."""
        self._view_seen = True
        if self._view is not None:
            self._view.set()

    async def hold(
        self,
        point: str,
        signal: AbortSignal | None = None,
        words: Callable[[], tuple[str, str]] | None = None,
    ) -> None:
        """Wait until :meth:`next`, :meth:`run_to_end` or an abort releases ``point``;
        ``words`` says what is held and what comes next (asked when the hold starts)."""
        if not self.should_hold(point) or (signal is not None and signal.aborted):
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # one hold at a time, in arrival order
            if not await self._a_view_is_showing(signal):
                return
            if not self.should_hold(point) or (signal is not None and signal.aborted):
                return
            waiter = asyncio.get_running_loop().create_future()
            self._waiter = waiter
            self.held = point
            remove = signal.add_listener(lambda *_: self.release()) if signal is not None else None
            if self._on_hold is not None:
                self._on_hold(point, words() if words is not None else (f"held at {point}", ""))
            try:
                await waiter
            finally:
                if remove is not None:
                    remove()
                self._waiter = None
                self.held = None
                if self._on_hold is not None:
                    self._on_hold(None, None)

    async def _a_view_is_showing(self, signal: AbortSignal | None) -> bool:
        if self._view_seen:
            return True
        self._view = asyncio.Event()
        waiter = asyncio.ensure_future(self._view.wait())
        aborted = asyncio.ensure_future(signal.wait()) if signal is not None else None
        try:
            pending = {waiter} if aborted is None else {waiter, aborted}
            await asyncio.wait(pending, timeout=self.view_timeout, return_when="FIRST_COMPLETED")
        finally:
            waiter.cancel()
            if aborted is not None:
                aborted.cancel()
        if self._view_seen:
            return True
        if signal is None or not signal.aborted:
            self.enabled = False  # nobody sees a Next button: run without holds
            if self._on_no_view is not None:
                self._on_no_view()
        return False

    def release(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def next(self) -> None:
        self.release()

    def run_to_end(self) -> None:
        self.running_to_end = True
        self.release()


__all__ = ["VIEW_TIMEOUT", "StepGate"]
