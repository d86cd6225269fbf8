"""Cooperative cancellation: ``AbortController`` / ``AbortSignal``, as in the web platform.

The agent runtime is never driven by task cancellation: a signal is passed to the stream
function, tools and hooks, and each checks ``signal.aborted`` or waits on it. Aborting runs
the listeners synchronously, in the order they were added, exactly once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

AbortListener = Callable[[], Any]


class AbortSignal:
    """Read-only side: a flag, listeners and an awaitable."""

    __slots__ = ("_aborted", "_event", "_listeners", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: object = None
        self._listeners: list[AbortListener] = []
        self._event: asyncio.Event | None = None

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> object:
        return self._reason

    def add_listener(self, listener: AbortListener) -> Callable[[], None]:
        """Call ``listener()`` on abort (at once if already aborted); returns a remover."""
        if self._aborted:
            listener()
            return _noop
        self._listeners.append(listener)

        def remove() -> None:
            try:
                self._listeners.remove(listener)
            except ValueError:
                pass

        return remove

    async def wait(self) -> None:
        """Return once the signal is aborted."""
        if self._aborted:
            return
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()

    async def sleep(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; return early (True) if the signal aborts meanwhile."""
        if self._aborted:
            return True
        if seconds <= 0:
            return False
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not waiter.done():
                waiter.set_result(None)

        handle = loop.call_later(seconds, wake)
        remove = self.add_listener(wake)
        try:
            await waiter
        finally:
            handle.cancel()
            remove()
        return self._aborted

    def throw_if_aborted(self) -> None:
        if self._aborted:
            raise AbortError(str(self._reason) if self._reason is not None else "Operation aborted")

    def _abort(self, reason: object) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        if self._event is not None:
            self._event.set()
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()

    def __repr__(self) -> str:
        return f"AbortSignal(aborted={self._aborted})"


class AbortController:
    """Owns a signal and aborts it."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: object = None) -> None:
        self.signal._abort(reason)


class AbortError(Exception):
    """Raised by :meth:`AbortSignal.throw_if_aborted`."""


def _noop() -> None:
    return None
