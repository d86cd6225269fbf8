"""``EventStream``: the async-iterable container for assistant streams and agent runs.

Two ways to feed it:

* push: a producer calls :meth:`EventStream.push` / :meth:`EventStream.end` (from any coroutine
  or callback on the loop's thread); consumers iterate and/or ``await result()``.
* pull: :meth:`EventStream.from_runs` wraps an async iterator of *runs* (sync iterables of the
  events a producer can make without waiting) that runs only as the consumer asks for events,
  so a scripted producer costs no task switch and no async step per event.
  :meth:`AssistantMessageEventStream.from_events` takes an async iterator of single events.

Consumers either iterate events (``async for event in stream``) or, on a per-token path, take
the runs themselves (``async for run in stream.runs(): for event in run: ...``). Both see the
same events in the same order; a run's events are made one by one as they are taken.

Why pull mode exists (measured for issue 17, figures in ``bench/README.md``): with a push-only
stream a scripted producer (the faux provider, replay) must yield to the event loop after every
event to keep its partial in step with the consumer, as Pi's faux awaits a microtask per chunk.
That one loop turn per event made ``bench_loop``'s loop row 4.1x slower (7.9 vs 1.9 us/event,
CPU time). Real providers push from their request task; only scripted producers pull.

Pushing after completion is ignored. The completing event itself is still delivered. A stream
never raises out of iteration for a producer's failure: producers encode failure as events.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Generic, TypeVar

from .events import AssistantMessageEvent, DoneEvent, ErrorEvent
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
        self._waiters: list[asyncio.Future[None]] = []
        self._result: asyncio.Future[R] | None = None
        self._result_value: tuple[R] | None = None
        self._source: AsyncIterator[Iterable[E]] | None = None
        self._run: Iterator[E] | None = None  # the pulled run being taken, if any
        self._pulling = False
        self._pull_done: asyncio.Future[None] | None = None
        self._iterator: AsyncIterator[E] | None = None

    @classmethod
    def from_runs(
        cls,
        runs: AsyncIterator[Iterable[E]],
        is_complete: Callable[[E], bool],
        extract_result: Callable[[E], R],
    ) -> EventStream[E, R]:
        stream = cls(is_complete, extract_result)
        stream._source = runs
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

    async def __aiter__(self) -> AsyncIterator[E]:
        async for run in self.runs():
            for event in run:
                yield event

    async def __anext__(self) -> E:
        """``anext(stream)`` without ``__aiter__``: steps one iterator kept for such calls."""
        if self._iterator is None:
            self._iterator = self.__aiter__()
        return await self._iterator.__anext__()

    async def runs(self) -> AsyncIterator[Iterator[E]]:
        """The events in runs: each run is a sync iterator of events ready without waiting.

        Take each run to its end before asking for the next one. A pushed stream's run is what
        is queued; a pulled stream's run is the producer's own, stepped lazily.
        """
        queue = self._queue
        while True:
            if queue:
                yield _take_all(queue)
            elif self._run is not None:
                yield self._follow(self._run)
            elif self._done:
                return
            elif self._source is None:
                await self._wait_for_push()
            elif not await self._pull_run():
                return

    async def result(self) -> R:
        """The final value; drains a pull source if nobody iterated it."""
        if self._source is not None:
            # Whatever is pulled here waits in the queue for an iterator, in order.
            queue = self._queue
            while not self._done:
                if self._run is not None:
                    queue.extend(self._follow(self._run))
                elif not await self._pull_run():
                    break
        if self._result_value is not None:
            return self._result_value[0]
        if self._done:
            raise RuntimeError(_NO_RESULT)
        if self._result is None:
            self._result = asyncio.get_running_loop().create_future()
        return await self._result

    async def peek(self, enough: Callable[[E], bool]) -> list[E]:
        """Wait, taking nothing, until an event for which ``enough(event)`` is true has been
        produced or the stream has ended; returns the events produced so far (they stay for
        the consumer, in order). What a caller decides on before it hands the stream on."""
        queue = self._queue
        while not any(enough(event) for event in queue):
            if self._run is not None:
                event = next(self._follow(self._run), None)  # one event of the pulled run
                if event is not None:
                    queue.append(event)
            elif self._done:
                break
            elif self._source is None:
                await self._wait_for_push()
            elif not await self._pull_run():
                break
        return list(queue)

    # -- internals ---------------------------------------------------------------------------

    def _follow(self, run: Iterator[E]) -> Iterator[E]:
        """Take ``run`` event by event up to its end or the completing event."""
        is_complete = self._is_complete
        for event in run:
            if is_complete(event):
                self._done = True
                self._run = None
                self._set_result(self._extract_result(event))
                yield event
                return
            yield event
        if self._run is run:
            self._run = None

    async def _pull_run(self) -> bool:
        """Make the source's next run current; False once it is exhausted.

        An async generator must not be re-entered, so while another task is stepping the
        source this waits for that step instead (and the caller looks again).
        """
        source = self._source
        assert source is not None
        if self._pulling:
            if self._pull_done is None:
                self._pull_done = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._pull_done)
            return True
        self._pulling = True
        try:
            self._run = iter(await source.__anext__())
        except StopAsyncIteration:
            self.end()
            return False
        finally:
            self._pulling = False
            waiters, self._pull_done = self._pull_done, None
            if waiters is not None and not waiters.done():
                waiters.set_result(None)
        return True

    async def _wait_for_push(self) -> None:
        """Wait for the next push or the end. Each waiting consumer has its own future and
        every one wakes (one that then finds the queue empty waits again)."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter

    def _set_result(self, value: R) -> None:
        self._result_value = (value,)
        if self._result is not None and not self._result.done():
            self._result.set_result(value)

    def _wake(self) -> None:
        waiters = self._waiters
        if waiters:
            self._waiters = []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)


def _take_all(queue: deque[E]) -> Iterator[E]:
    while queue:
        yield queue.popleft()


async def _one_per_run(source: AsyncIterator[E]) -> AsyncIterator[Iterable[E]]:
    async for event in source:
        yield (event,)


def is_terminal(event: AssistantMessageEvent) -> bool:
    """``done`` or ``error``: the last event of an assistant stream."""
    return event.type == "done" or event.type == "error"


def final_message(event: AssistantMessageEvent) -> AssistantMessage:
    """The final message a terminal event carries."""
    if event.type == "done":
        return event.message
    if event.type == "error":
        return event.error
    raise TypeError(f"not a terminal event: {event.type}")


def terminal_event(message: AssistantMessage) -> DoneEvent | ErrorEvent:
    """The last event of a stream whose final message is ``message``: ``error`` for a stop
    reason ``error`` / ``aborted``, else ``done``."""
    reason = message.stop_reason
    if reason == "error" or reason == "aborted":
        return ErrorEvent(reason, message)
    return DoneEvent(reason, message)


class AssistantMessageEventStream(EventStream[AssistantMessageEvent, AssistantMessage]):
    """Completes on ``done`` (result: its message) or ``error`` (result: its error message)."""

    def __init__(self) -> None:
        super().__init__(is_terminal, final_message)

    @classmethod
    def from_events(
        cls, source: AsyncIterator[AssistantMessageEvent]
    ) -> AssistantMessageEventStream:
        return cls.from_event_runs(_one_per_run(source))

    @classmethod
    def from_event_runs(
        cls, runs: AsyncIterator[Iterable[AssistantMessageEvent]]
    ) -> AssistantMessageEventStream:
        stream = cls()
        stream._source = runs
        return stream
