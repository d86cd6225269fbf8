"""One Python call on its own daemon thread, stopped promptly when the run is aborted.

:func:`run_on_thread` runs a call off the event loop (in a copy of the caller's context, as
``asyncio.to_thread`` does) so the kernel keeps serving messages, and waits for it. When the abort
signal fires, or the waiting task is cancelled (the kernel's stop button), the thread gets an
asynchronous :class:`RunAborted` exception (``PyThreadState_SetAsyncExc``: raised at the next
bytecode boundary, so ``while True: pass`` stops at once) and ``time.sleep`` in a worker thread is
woken up (``time.sleep`` is wrapped, for worker threads only, by an interruptible wait). A call
blocked in another C function stops when that returns to Python; ``run_on_thread`` waits
``grace`` seconds for it and otherwise reports it still running. ``run_python`` code and sync
``@tool`` functions both run here.

This module must never block the event loop while the call runs, and never raise into a thread
it did not start.

An asynchronous exception lands at *any* bytecode boundary, so it is sent at most once, only
while the call itself runs, never while the thread waits in the interruptible ``time.sleep``
(which raises :class:`RunAborted` itself, outside ``threading``'s lock-juggling code), and a
pending one is withdrawn before the thread runs this module's bookkeeping. ``enter`` / ``leave``
run on the thread just outside that window, where no abort can land.
"""

from __future__ import annotations

import asyncio
import contextvars
import ctypes
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, SupportsIndex

from ..ai import AbortSignal


class RunAborted(BaseException):
    """Raised inside a worker's call when the run is aborted (not an ``Exception``)."""


# int PyThreadState_SetAsyncExc(unsigned long id, PyObject *exc), declared rather than guessed
# (and not through the shared ctypes.pythonapi attribute, whose signature others may set).
# PYFUNCTYPE: called with the GIL held, as the C API requires.
_set_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
)


def _send_async_exc(ident: int, exc: type[BaseException] | None) -> int:
    """Set (``None``: withdraw) the exception pending for thread ``ident``; threads affected."""
    affected = int(_set_async_exc(ident, ctypes.py_object() if exc is None else exc))
    if affected > 1:  # the C API's documented remedy for "more than one thread state matched"
        _set_async_exc(ident, ctypes.py_object())
    return affected


# -- interruptible sleep -----------------------------------------------------------------------

_workers: dict[int, Worker] = {}
_original_sleep = time.sleep


def _sleep(seconds: float | SupportsIndex) -> None:
    worker = _workers.get(threading.get_ident())
    if worker is None:
        _original_sleep(seconds)
        return
    seconds = float(seconds)
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    worker.sleep(seconds)


def _install_sleep() -> None:
    if time.sleep is not _sleep:
        time.sleep = _sleep


def in_worker() -> bool:
    """Whether the calling thread is a worker started here (while its call runs)."""
    return threading.get_ident() in _workers


# -- the thread ----------------------------------------------------------------------------------

Result = tuple[Any, BaseException | None]


class Worker:
    """One call on its own daemon thread; :meth:`abort` interrupts it.

    ``lock`` guards the flags. ``running``: the call may run, so an abort may raise into the
    thread. ``sleeping``: the thread waits in the interruptible sleep, so an abort only sets
    ``stop``. ``sent``: the one asynchronous exception was sent. ``finished``: the thread has
    delivered its result. ``owns_release``: it runs ``release`` when it ends (the waiter stopped
    waiting for it).
    """

    def __init__(
        self,
        call: Callable[[], Any],
        settle: Callable[[Result], None],
        *,
        name: str,
        enter: Callable[[], None] | None = None,
        leave: Callable[[], None] | None = None,
        release: Callable[[], None] | None = None,
    ) -> None:
        self.call = call
        self.settle = settle
        self.enter = enter
        self.leave = leave
        self.release = release
        self.context = contextvars.copy_context()
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.running = False
        self.sleeping = False
        self.aborted = False
        self.sent = False
        self.finished = False
        self.owns_release = False
        self.thread = threading.Thread(target=self._work, name=name, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def abort(self) -> None:
        """Wake the interruptible sleep, or raise :class:`RunAborted` in the thread (once)."""
        with self.lock:
            self.aborted = True
            self.stop.set()
            ident = self.thread.ident
            if self.running and not self.sleeping and not self.sent and ident is not None:
                self.sent = _send_async_exc(ident, RunAborted) > 0

    def sleep(self, seconds: float) -> None:
        """``time.sleep`` for this worker's thread: returns early, raising, when aborted."""
        with self.lock:
            if self.aborted:  # also covers an exception sent but not landed yet
                raise RunAborted("aborted")
            self.sleeping = True
        try:
            stopped = self.stop.wait(seconds)
        finally:
            with self.lock:
                self.sleeping = False
        if stopped:
            raise RunAborted("aborted")

    def _call(self) -> Result:
        try:
            return self.context.run(self.call), None
        except BaseException as exc:  # the call's failure (or the abort) is the result
            return None, exc

    def _work(self) -> None:
        ident = threading.get_ident()
        if self.enter is not None:
            self.enter()
        _workers[ident] = self
        result: Result = (None, RunAborted("aborted"))
        try:  # from here on an abort may land at any bytecode: everything is inside the try
            with self.lock:
                self.running = not self.aborted
            if self.running:
                result = self._call()
        except RunAborted as exc:  # landed outside the call's own try
            result = (None, exc)
        while True:  # stop accepting aborts; withdraw the one sent if it has not landed yet
            try:
                with self.lock:
                    self.running = False
                    if self.sent:  # it may have landed already: withdrawing is harmless
                        _send_async_exc(ident, None)
                        self.sent = False
                break
            except RunAborted as exc:
                result = (None, exc)
        # No asynchronous exception can reach this thread any more.
        _workers.pop(ident, None)
        if self.leave is not None:
            self.leave()
        with self.lock:  # before settling, so that the waiter normally runs ``release``
            self.finished = True
            release = self.owns_release
        if release and self.release is not None:
            self.release()
        self.settle(result)

    def hand_over_release(self) -> bool:
        """Called by the waiter when it stops waiting: False when the thread is already done
        (the waiter runs ``release``), True when the thread will run it when it ends."""
        with self.lock:
            self.owns_release = not self.finished
            return self.owns_release


@dataclass
class ThreadOutcome:
    value: Any = None
    error: BaseException | None = None
    """What the call raised (not :class:`RunAborted`: that is ``aborted``)."""
    aborted: bool = False
    still_running: bool = False
    """Aborted, but the thread was still inside a C call after the grace period."""
    seconds: float = 0.0


async def run_on_thread(
    call: Callable[[], Any],
    signal: AbortSignal | None,
    *,
    grace: float = 1.0,
    name: str = "pi-worker",
    enter: Callable[[], None] | None = None,
    leave: Callable[[], None] | None = None,
    release: Callable[[], None] | None = None,
) -> ThreadOutcome:
    """Run ``call()`` on a worker thread and wait for it; see the module doc.

    ``enter`` / ``leave`` run on the thread before and after the call; ``release`` runs once
    after ``leave``, on the loop when the thread is done in time, else on the thread when it
    ends. A cancelled wait aborts the thread and re-raises.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Result] = loop.create_future()

    def set_done(result: Result) -> None:
        if not done.done():
            done.set_result(result)

    def settle(result: Result) -> None:
        try:
            loop.call_soon_threadsafe(set_done, result)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    worker = Worker(call, settle, name=name, enter=enter, leave=leave, release=release)
    _install_sleep()
    begin = time.perf_counter()
    remove = signal.add_listener(worker.abort) if signal is not None else None
    try:
        worker.start()
        value, error = await _wait(done, signal, grace)
    except TimeoutError:
        return ThreadOutcome(aborted=True, still_running=True, seconds=time.perf_counter() - begin)
    except asyncio.CancelledError:
        worker.abort()  # the kernel's stop button: the thread must not go on alone
        raise
    finally:
        if remove is not None:
            remove()
        if not worker.hand_over_release() and release is not None:
            release()
    seconds = time.perf_counter() - begin
    if error is not None and (isinstance(error, RunAborted) or worker.aborted):
        return ThreadOutcome(aborted=True, seconds=seconds)
    return ThreadOutcome(value, error, seconds=seconds)


async def _wait(done: asyncio.Future[Result], signal: AbortSignal | None, grace: float) -> Result:
    """The thread's result; after an abort, at most ``grace`` more seconds (else TimeoutError)."""
    waiting: list[asyncio.Future[Any]] = [done]
    if signal is not None:
        waiting.append(asyncio.ensure_future(signal.wait()))
    try:
        # A kernel interrupt that the OS delivers to the worker thread still wakes this wait:
        # the extension gives the loop a signal wake-up socket (pi_notebook.notebook.interrupts).
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for future in waiting[1:]:
            future.cancel()
    if done.done():
        return done.result()
    return await asyncio.wait_for(asyncio.shield(done), grace)


__all__ = ["RunAborted", "ThreadOutcome", "Worker", "in_worker", "run_on_thread"]
