"""Tests for EventStream / AssistantMessageEventStream (reference 1.5) and AbortSignal."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pi_notebook.ai import (
    AbortController,
    AbortError,
    AssistantMessage,
    AssistantMessageEventStream,
    DoneEvent,
    ErrorEvent,
    EventStream,
    StartEvent,
    TextDeltaEvent,
)

TIMEOUT = 2.0


def msg(text: str = "", stop_reason: Any = "stop") -> AssistantMessage:
    return AssistantMessage(api="test", provider="test", model="m", stop_reason=stop_reason)


def start(partial: AssistantMessage | None = None) -> StartEvent:
    return StartEvent(partial=partial or msg())


def delta(text: str) -> TextDeltaEvent:
    return TextDeltaEvent(content_index=0, delta=text, partial=msg())


def int_stream() -> EventStream[int, int]:
    """A generic stream that completes on a negative number, with its absolute value as result."""
    return EventStream(lambda e: e < 0, lambda e: -e)


async def collect(stream: Any) -> list[Any]:
    return [event async for event in stream]


# --------------------------------------------------------------------------------------------
# Push mode


async def test_events_pushed_before_iteration_are_delivered_in_order() -> None:
    stream = int_stream()
    for n in (1, 2, 3, -4):
        stream.push(n)
    assert await asyncio.wait_for(collect(stream), TIMEOUT) == [1, 2, 3, -4]


async def test_events_pushed_after_iteration_starts_wake_the_consumer() -> None:
    stream = int_stream()
    received: list[int] = []
    got_first = asyncio.Event()

    async def consume() -> None:
        async for event in stream:
            received.append(event)
            got_first.set()

    task = asyncio.create_task(consume())
    await asyncio.sleep(0)  # let the consumer start waiting on an empty queue
    stream.push(1)
    await asyncio.wait_for(got_first.wait(), TIMEOUT)
    stream.push(2)
    stream.push(-3)
    await asyncio.wait_for(task, TIMEOUT)
    assert received == [1, 2, -3]


async def test_push_after_completion_is_ignored() -> None:
    stream = int_stream()
    stream.push(1)
    stream.push(-2)
    stream.push(3)
    stream.push(-4)
    assert await asyncio.wait_for(collect(stream), TIMEOUT) == [1, -2]
    assert await stream.result() == 2


async def test_push_after_end_is_ignored() -> None:
    stream = int_stream()
    stream.push(1)
    stream.end(7)
    stream.push(2)
    assert await asyncio.wait_for(collect(stream), TIMEOUT) == [1]
    assert await stream.result() == 7


async def test_completing_event_is_still_delivered_to_the_iterator() -> None:
    stream = AssistantMessageEventStream()
    final = msg("done")
    stream.push(start())
    stream.push(DoneEvent(reason="stop", message=final))
    events = await asyncio.wait_for(collect(stream), TIMEOUT)
    assert [e.type for e in events] == ["start", "done"]
    assert events[-1].message is final


async def test_stream_is_done_after_completing_event() -> None:
    stream = int_stream()
    assert not stream.done
    stream.push(1)
    assert not stream.done
    stream.push(-1)
    assert stream.done


async def test_result_awaited_before_completion_resolves_on_completion() -> None:
    stream = AssistantMessageEventStream()
    final = msg()
    waiter = asyncio.create_task(stream.result())
    await asyncio.sleep(0)
    assert not waiter.done()
    stream.push(start())
    stream.push(DoneEvent(reason="stop", message=final))
    assert await asyncio.wait_for(waiter, TIMEOUT) is final


async def test_result_after_completion_returns_the_done_message() -> None:
    stream = AssistantMessageEventStream()
    final = msg()
    stream.push(DoneEvent(reason="stop", message=final))
    assert await asyncio.wait_for(stream.result(), TIMEOUT) is final


async def test_result_of_error_event_is_its_error_message() -> None:
    stream = AssistantMessageEventStream()
    failed = msg(stop_reason="error")
    stream.push(ErrorEvent(reason="error", error=failed))
    assert await asyncio.wait_for(stream.result(), TIMEOUT) is failed


async def test_result_is_available_without_iterating() -> None:
    stream = int_stream()
    stream.push(1)
    stream.push(-5)
    assert await asyncio.wait_for(stream.result(), TIMEOUT) == 5
    # the events are still there for a later consumer
    assert await asyncio.wait_for(collect(stream), TIMEOUT) == [1, -5]


async def test_end_with_result_resolves_result_and_finishes_iteration() -> None:
    stream = int_stream()
    stream.push(1)
    stream.end(9)
    assert await asyncio.wait_for(collect(stream), TIMEOUT) == [1]
    assert await asyncio.wait_for(stream.result(), TIMEOUT) == 9


async def test_end_does_not_override_the_result_of_the_completing_event() -> None:
    stream = int_stream()
    stream.push(-3)
    stream.end(99)
    assert await stream.result() == 3


async def test_end_wakes_a_waiting_consumer() -> None:
    stream = int_stream()
    task = asyncio.create_task(collect(stream))
    await asyncio.sleep(0)
    stream.end()
    assert await asyncio.wait_for(task, TIMEOUT) == []


async def test_two_waiting_consumers_both_wake_and_share_the_events_once() -> None:
    stream = int_stream()
    first = asyncio.create_task(collect(stream))
    second = asyncio.create_task(collect(stream))
    await asyncio.sleep(0)  # both tasks start and wait (asyncio runs them before us)
    stream.push(1)
    stream.push(2)
    stream.push(-3)
    got_first, got_second = await asyncio.wait_for(asyncio.gather(first, second), TIMEOUT)
    assert sorted(got_first + got_second) == [-3, 1, 2]
    assert got_first == sorted(got_first, key=[1, 2, -3].index)  # each in push order
    assert got_second == sorted(got_second, key=[1, 2, -3].index)


async def test_a_cancelled_waiting_consumer_does_not_stop_the_others() -> None:
    stream = int_stream()
    cancelled = asyncio.create_task(collect(stream))
    kept = asyncio.create_task(collect(stream))
    await asyncio.sleep(0)
    cancelled.cancel()
    stream.push(-1)
    assert await asyncio.wait_for(kept, TIMEOUT) == [-1]
    with pytest.raises(asyncio.CancelledError):
        await cancelled


async def test_end_without_result_then_result_raises_runtime_error() -> None:
    stream = int_stream()
    stream.push(1)
    stream.end()
    with pytest.raises(RuntimeError):
        await asyncio.wait_for(stream.result(), TIMEOUT)


async def test_result_awaited_before_end_without_result_raises_instead_of_hanging() -> None:
    stream = AssistantMessageEventStream()
    waiter = asyncio.create_task(stream.result())
    await asyncio.sleep(0)
    stream.push(start())
    stream.end()
    with pytest.raises(RuntimeError):
        await asyncio.wait_for(waiter, TIMEOUT)


async def test_iteration_finishes_after_end_without_terminal_event() -> None:
    stream = AssistantMessageEventStream()
    stream.push(start())
    stream.push(delta("a"))
    stream.end()
    events = await asyncio.wait_for(collect(stream), TIMEOUT)
    assert [e.type for e in events] == ["start", "text_delta"]


# --------------------------------------------------------------------------------------------
# Pull mode


async def test_pull_source_does_not_run_until_iterated() -> None:
    ran: list[str] = []

    async def source() -> AsyncIterator[Any]:
        ran.append("started")
        yield start()
        yield DoneEvent(reason="stop", message=msg())

    stream = AssistantMessageEventStream.from_events(source())
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert ran == []
    events = await asyncio.wait_for(collect(stream), TIMEOUT)
    assert ran == ["started"]
    assert [e.type for e in events] == ["start", "done"]


async def test_pull_source_runs_one_event_per_request() -> None:
    produced: list[int] = []

    async def source() -> AsyncIterator[Any]:
        produced.append(1)
        yield start()
        produced.append(2)
        yield delta("x")
        produced.append(3)
        yield DoneEvent(reason="stop", message=msg())

    stream = AssistantMessageEventStream.from_events(source())
    iterator = stream.__aiter__()
    first = await asyncio.wait_for(iterator.__anext__(), TIMEOUT)
    assert first.type == "start"
    assert produced == [1]


async def test_result_drains_an_uniterated_pull_source() -> None:
    final = msg()
    pulled: list[str] = []

    async def source() -> AsyncIterator[Any]:
        for event in (start(), delta("a"), delta("b"), DoneEvent(reason="stop", message=final)):
            pulled.append(event.type)
            yield event

    stream = AssistantMessageEventStream.from_events(source())
    assert await asyncio.wait_for(stream.result(), TIMEOUT) is final
    assert pulled == ["start", "text_delta", "text_delta", "done"]
    assert stream.done


async def test_events_drained_by_result_are_still_delivered_to_a_later_iterator() -> None:
    final = msg()

    async def source() -> AsyncIterator[Any]:
        yield start()
        yield DoneEvent(reason="stop", message=final)

    stream = AssistantMessageEventStream.from_events(source())
    await asyncio.wait_for(stream.result(), TIMEOUT)
    events = await asyncio.wait_for(collect(stream), TIMEOUT)
    assert [e.type for e in events] == ["start", "done"]


async def test_pull_source_is_not_advanced_past_the_terminal_event() -> None:
    after_terminal: list[bool] = []

    async def source() -> AsyncIterator[Any]:
        yield DoneEvent(reason="stop", message=msg())
        after_terminal.append(True)
        yield delta("late")

    stream = AssistantMessageEventStream.from_events(source())
    events = await asyncio.wait_for(collect(stream), TIMEOUT)
    assert [e.type for e in events] == ["done"]
    assert after_terminal == []


async def test_pull_source_ending_without_terminal_event_ends_iteration() -> None:
    async def source() -> AsyncIterator[Any]:
        yield start()
        yield delta("partial")

    stream = AssistantMessageEventStream.from_events(source())
    events = await asyncio.wait_for(collect(stream), TIMEOUT)
    assert [e.type for e in events] == ["start", "text_delta"]
    assert stream.done


async def test_pull_source_ending_without_terminal_event_makes_result_raise() -> None:
    async def source() -> AsyncIterator[Any]:
        yield start()

    stream = AssistantMessageEventStream.from_events(source())
    with pytest.raises(RuntimeError):
        await asyncio.wait_for(stream.result(), TIMEOUT)


async def test_pull_source_result_and_iteration_can_run_in_separate_tasks() -> None:
    """Pi's common pattern: one task iterates the events while another awaits result()."""
    final = msg()
    gate = asyncio.Event()

    async def source() -> AsyncIterator[Any]:
        yield start()
        await gate.wait()  # the producer suspends mid-stream (e.g. a paced faux chunk)
        yield DoneEvent(reason="stop", message=final)

    stream = AssistantMessageEventStream.from_events(source())
    iterating = asyncio.create_task(collect(stream))
    waiting = asyncio.create_task(stream.result())
    for _ in range(5):
        await asyncio.sleep(0)
    gate.set()
    events, result = await asyncio.wait_for(asyncio.gather(iterating, waiting), TIMEOUT)
    assert [e.type for e in events] == ["start", "done"]
    assert result is final


# --------------------------------------------------------------------------------------------
# Runs: a pull source of sync runs, stepped one event at a time


def counting_run(made: list[int], values: list[int]) -> Any:
    """A sync run that records each value as it is made."""
    for value in values:
        made.append(value)
        yield value


async def test_a_run_is_made_one_event_at_a_time_as_it_is_taken() -> None:
    made: list[int] = []

    async def runs() -> AsyncIterator[Any]:
        yield counting_run(made, [1, 2, 3, -9])

    stream = EventStream.from_runs(runs(), lambda e: e < 0, lambda e: -e)
    taken: list[int] = []
    async for run in stream.runs():
        for value in run:
            taken.append(value)
            assert made == taken  # nothing made ahead of the consumer
    assert taken == [1, 2, 3, -9]
    assert await stream.result() == 9


async def test_iterating_events_flattens_the_runs_in_order() -> None:
    async def runs() -> AsyncIterator[Any]:
        yield [1, 2]
        yield []
        yield (3,)
        yield [-4]

    stream = EventStream.from_runs(runs(), lambda e: e < 0, lambda e: -e)
    assert await asyncio.wait_for(collect(stream), TIMEOUT) == [1, 2, 3, -4]


async def test_a_run_stops_at_the_completing_event() -> None:
    made: list[int] = []
    asked_again: list[bool] = []

    async def runs() -> AsyncIterator[Any]:
        yield counting_run(made, [1, -2, 3])
        asked_again.append(True)
        yield [4]

    stream = EventStream.from_runs(runs(), lambda e: e < 0, lambda e: -e)
    assert await asyncio.wait_for(collect(stream), TIMEOUT) == [1, -2]
    assert made == [1, -2]
    assert asked_again == []
    assert stream.done and await stream.result() == 2


async def test_result_taken_mid_run_leaves_the_rest_for_the_iterator_in_order() -> None:
    async def runs() -> AsyncIterator[Any]:
        yield iter([1, 2, 3])
        yield iter([4, -5])

    stream = EventStream.from_runs(runs(), lambda e: e < 0, lambda e: -e)
    taken: list[int] = []
    async for run in stream.runs():
        for value in run:
            taken.append(value)
            if value == 1:  # a listener awaiting the result while the consumer is mid-run
                assert await asyncio.wait_for(stream.result(), TIMEOUT) == 5
    assert taken == [1, 2, 3, 4, -5]


async def test_runs_of_a_pushed_stream_are_what_is_queued() -> None:
    stream = int_stream()
    stream.push(1)
    stream.push(2)
    runs = stream.runs()
    first = await asyncio.wait_for(anext(runs), TIMEOUT)
    assert list(first) == [1, 2]
    waiting = asyncio.ensure_future(anext(runs))
    stream.push(-3)
    second = await asyncio.wait_for(waiting, TIMEOUT)
    assert list(second) == [-3]
    assert await stream.result() == 3


# --------------------------------------------------------------------------------------------
# AbortSignal / AbortController


def test_new_signal_is_not_aborted() -> None:
    controller = AbortController()
    assert controller.signal.aborted is False
    assert controller.signal.reason is None


def test_abort_sets_aborted_and_reason() -> None:
    controller = AbortController()
    controller.abort("user pressed stop")
    assert controller.signal.aborted is True
    assert controller.signal.reason == "user pressed stop"


def test_listeners_run_in_order_exactly_once() -> None:
    controller = AbortController()
    calls: list[str] = []
    controller.signal.add_listener(lambda: calls.append("a"))
    controller.signal.add_listener(lambda: calls.append("b"))
    controller.signal.add_listener(lambda: calls.append("c"))
    controller.abort()
    controller.abort()
    assert calls == ["a", "b", "c"]


def test_listeners_run_synchronously_inside_abort() -> None:
    controller = AbortController()
    seen: list[bool] = []
    controller.signal.add_listener(lambda: seen.append(controller.signal.aborted))
    controller.abort()
    assert seen == [True]


def test_second_abort_keeps_the_first_reason() -> None:
    controller = AbortController()
    controller.abort("first")
    controller.abort("second")
    assert controller.signal.reason == "first"


def test_add_listener_after_abort_calls_it_immediately() -> None:
    controller = AbortController()
    controller.abort()
    calls: list[str] = []
    remove = controller.signal.add_listener(lambda: calls.append("late"))
    assert calls == ["late"]
    remove()  # harmless no-op


def test_remover_prevents_the_listener_from_running() -> None:
    controller = AbortController()
    calls: list[str] = []
    remove_a = controller.signal.add_listener(lambda: calls.append("a"))
    controller.signal.add_listener(lambda: calls.append("b"))
    remove_a()
    remove_a()  # removing twice is harmless
    controller.abort()
    assert calls == ["b"]


def test_throw_if_aborted_raises_abort_error_only_after_abort() -> None:
    controller = AbortController()
    controller.signal.throw_if_aborted()
    controller.abort()
    with pytest.raises(AbortError):
        controller.signal.throw_if_aborted()


async def test_wait_returns_once_aborted_from_another_task() -> None:
    controller = AbortController()
    waiting = asyncio.Event()

    async def waiter() -> str:
        waiting.set()
        await controller.signal.wait()
        return "woke"

    task = asyncio.create_task(waiter())
    await asyncio.wait_for(waiting.wait(), TIMEOUT)
    assert not task.done()
    controller.abort()
    assert await asyncio.wait_for(task, TIMEOUT) == "woke"


async def test_wait_on_already_aborted_signal_returns_at_once() -> None:
    controller = AbortController()
    controller.abort()
    await asyncio.wait_for(controller.signal.wait(), TIMEOUT)


async def test_sleep_returns_true_early_when_aborted_from_another_task() -> None:
    controller = AbortController()
    sleeping = asyncio.Event()

    async def sleeper() -> bool:
        sleeping.set()
        return await controller.signal.sleep(3600)

    task = asyncio.create_task(sleeper())
    await asyncio.wait_for(sleeping.wait(), TIMEOUT)
    await asyncio.sleep(0)  # let the sleeper reach its await
    controller.abort()
    assert await asyncio.wait_for(task, TIMEOUT) is True


async def test_sleep_on_already_aborted_signal_returns_true_at_once() -> None:
    controller = AbortController()
    controller.abort()
    assert await asyncio.wait_for(controller.signal.sleep(3600), TIMEOUT) is True


async def test_sleep_without_abort_returns_false() -> None:
    controller = AbortController()
    assert await asyncio.wait_for(controller.signal.sleep(0), TIMEOUT) is False
    assert await asyncio.wait_for(controller.signal.sleep(0.001), TIMEOUT) is False


async def test_sleep_removes_its_listener_when_done() -> None:
    controller = AbortController()
    await controller.signal.sleep(0.001)
    assert controller.signal._listeners == []  # the sleep's own waker was removed


async def test_anext_steps_a_pull_source_without_aiter() -> None:
    async def source() -> AsyncIterator[Any]:
        yield start()
        yield delta("x")
        yield DoneEvent(reason="stop", message=msg())

    stream = AssistantMessageEventStream.from_events(source())
    first = await asyncio.wait_for(anext(stream), TIMEOUT)
    second = await asyncio.wait_for(anext(stream), TIMEOUT)
    assert [first.type, second.type] == ["start", "text_delta"]
    rest = await asyncio.wait_for(collect(stream), TIMEOUT)
    assert [e.type for e in rest] == ["done"]
    assert await stream.result() is rest[0].message
