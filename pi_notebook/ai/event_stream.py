"""``EventStream``: the async-iterable container for assistant streams and agent runs.

Two ways to feed it:

* push: a producer calls :meth:`EventStream.push` / :meth:`EventStream.end` (from any coroutine
  or callback on the loop's thread); consumers iterate and/or ``await result()``.
* pull: :meth:`EventStream.from_source` wraps an async iterator that runs only as the consumer
  asks for events, so a scripted producer costs no task switch per event.

Pushing after completion is ignored. The completing event itself is still delivered. A stream
never raises out of iteration for a producer's failure: producers encode failure as events.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Generic, TypeVar

from .events import AssistantMessageEvent
from .types import AssistantMessage

_NO_RESULT = "Event stream ended without a result"

E = TypeVar("E")
R = TypeVar("R")


class EventStream(Generic[E, R]):
    def __init__(
        self,
        is_complete: Callable[[E], bool],
        extract_result: Callable[[E], R],
    ) -> None:
        self._is_complete = is_complete
        self._extract_result = extract_result
        self._queue: deque[E] = deque()
        self._done = False
        self._waiter: asyncio.Future[None] | None = None
        self._result: asyncio.Future[R] | None = None
        self._result_value: tuple[R] | None = None
        self._source: AsyncIterator[E] | None = None
        self._pulling = False
        self._pull_done: asyncio.Future[None] | None = None
        self._iterator: AsyncIterator[E] | None = None

    @classmethod
    def from_source(
        cls,
        source: AsyncIterator[E],
        is_complete: Callable[[E], bool],
        extract_result: Callable[[E], R],
    ) -> EventStream[E, R]:
        stream = cls(is_complete, extract_result)
        stream._source = source
        return stream

    # -- producer side ---------------------------------------------------------------------

    def push(self, event: E) -> None:
        if self._done:
            return
        if self._is_complete(event):
            self._done = True
            self._set_result(self._extract_result(event))
        self._queue.append(event)
        self._wake()

    def end(self, result: R | None = None) -> None:
        if result is not None and self._result_value is None:
            self._set_result(result)
        self._done = True
        if self._result_value is None and self._result is not None and not self._result.done():
            self._result.set_exception(RuntimeError(_NO_RESULT))
        self._wake()

    @property
    def done(self) -> bool:
        return self._done

    # -- consumer side ---------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[E]:
        if self._source is not None:
            return self._pull()
        return self._drain()

    async def __anext__(self) -> E:
        """``anext(stream)`` without ``__aiter__``: steps one iterator kept for such calls."""
        if self._iterator is None:
            self._iterator = self.__aiter__()
        return await self._iterator.__anext__()

    async def result(self) -> R:
        """The final value; drains a pull source if nobody iterated it."""
        if self._source is not None and not self._done:
            async for event in self._pull(take_queued=False):
                self._queue.append(event)  # kept for an iterator, in order
        if self._result_value is not None:
            return self._result_value[0]
        if self._done:
            raise RuntimeError(_NO_RESULT)
        if self._result is None:
            self._result = asyncio.get_running_loop().create_future()
        return await self._result

    # -- internals ---------------------------------------------------------------------------

    async def _drain(self) -> AsyncIterator[E]:
        """Iterate a pushed stream: whatever is queued at once, then wait for the producer."""
        queue = self._queue
        while True:
            if queue:
                yield queue.popleft()
            elif self._done:
                return
            else:
                self._waiter = asyncio.get_running_loop().create_future()
                await self._waiter

    async def _pull(self, *, take_queued: bool = True) -> AsyncIterator[E]:
        """Step the pull source, one generator step per event (the per-token path).

        Events that ``result()`` pulled while an iterator was paused wait in the queue and
        come first (``take_queued``). An async generator must not be re-entered, so while
        another task is stepping the source this waits for that step and looks again.
        """
        source = self._source
        assert source is not None
        step = source.__anext__
        queue = self._queue
        while True:
            if take_queued and queue:
                yield queue.popleft()
            elif self._done:
                return
            elif self._pulling:
                await self._wait_for_puller()
            else:
                self._pulling = True
                try:
                    event = await step()
                except StopAsyncIteration:
                    self.end()
                    return
                finally:
                    self._pulling = False
                    if self._pull_done is not None:
                        self._wake_pullers()
                if self._is_complete(event):
                    self._done = True
                    self._set_result(self._extract_result(event))
                yield event

    async def _wait_for_puller(self) -> None:
        if self._pull_done is None:
            self._pull_done = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._pull_done)

    def _wake_pullers(self) -> None:
        waiters, self._pull_done = self._pull_done, None
        if waiters is not None and not waiters.done():
            waiters.set_result(None)

    def _set_result(self, value: R) -> None:
        self._result_value = (value,)
        if self._result is not None and not self._result.done():
            self._result.set_result(value)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)


def _is_terminal(event: AssistantMessageEvent) -> bool:
    return event.type == "done" or event.type == "error"


def _final_message(event: AssistantMessageEvent) -> AssistantMessage:
    if event.type == "done":
        return event.message
    if event.type == "error":
        return event.error
    raise TypeError(f"not a terminal event: {event.type}")


class AssistantMessageEventStream(EventStream[AssistantMessageEvent, AssistantMessage]):
    """Completes on ``done`` (result: its message) or ``error`` (result: its error message)."""

    def __init__(self) -> None:
        super().__init__(_is_terminal, _final_message)

    @classmethod
    def from_events(
        cls, source: AsyncIterator[AssistantMessageEvent]
    ) -> AssistantMessageEventStream:
        stream = cls()
        stream._source = source
        return stream
