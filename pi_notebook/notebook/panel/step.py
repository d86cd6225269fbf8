"""Step mode: the awaited event sink holds each event until the user says "next".

The agent awaits its listeners in order, so a listener that awaits :meth:`StepGate.hold`
stops the loop exactly at that event. :meth:`next` releases one event, :meth:`run_to_end`
releases it and every later one, and an abort releases the gate too so the run can close its
events. The gate must be driven from its event loop's thread (the widget hands control
messages over with ``call_soon_threadsafe``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection

from ...agent import AGENT_EVENT_TYPES
from ...ai import AbortSignal


class StepGate:
    def __init__(
        self,
        *,
        enabled: bool = False,
        events: Collection[str] = AGENT_EVENT_TYPES,
        on_hold: Callable[[str | None], None] | None = None,
    ) -> None:
        self.enabled = enabled
        self.events = frozenset(events)
        self.running_to_end = False
        self.held: str | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._on_hold = on_hold

    def should_hold(self, event_type: str) -> bool:
        return self.enabled and not self.running_to_end and event_type in self.events

    async def hold(self, event_type: str, signal: AbortSignal | None = None) -> None:
        """Wait until :meth:`next`, :meth:`run_to_end` or an abort releases ``event_type``."""
        if not self.should_hold(event_type) or (signal is not None and signal.aborted):
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiter = waiter
        self.held = event_type
        remove = signal.add_listener(lambda *_: self.release()) if signal is not None else None
        if self._on_hold is not None:
            self._on_hold(event_type)
        try:
            await waiter
        finally:
            if remove is not None:
                remove()
            self._waiter = None
            self.held = None
            if self._on_hold is not None:
                self._on_hold(None)

    def release(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def next(self) -> None:
        self.release()

    def run_to_end(self) -> None:
        self.running_to_end = True
        self.release()


__all__ = ["StepGate"]
