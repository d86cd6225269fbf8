"""Running agent-written Python in the notebook namespace, on a worker thread, abortably.

:func:`run_code` compiles the code (the last expression's value is returned, as in a cell),
runs it on a daemon thread so the kernel's event loop keeps serving messages, and captures
``print`` output of *that thread only* (a thread-aware proxy on ``sys.stdout``/``sys.stderr``
routes every other thread's writes to the real streams). When the abort signal fires, the
thread gets an asynchronous :class:`RunAborted` exception (``PyThreadState_SetAsyncExc``: raised
at the next bytecode boundary, so ``while True: pass`` stops at once) and ``time.sleep`` in a
run thread is woken up (``time.sleep`` is wrapped, for run threads only, by an interruptible
wait). Code blocked in other C calls stops when the call returns to Python; ``run_code`` waits
``grace`` seconds for that and otherwise reports it still running.

This module must never block the event loop while user code runs and never redirect the
output of code it did not start.
"""

from __future__ import annotations

import ast
import asyncio
import ctypes
import linecache
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, SupportsIndex, TextIO

from ..ai import AbortSignal

DEFAULT_OUTPUT_CHARS = 4000
_WAKE_SECONDS = 0.05


class RunAborted(BaseException):
    """Raised inside run_python code when the run is aborted (not an ``Exception``)."""


# -- output capture ------------------------------------------------------------------------------


class BoundedBuffer:
    """Keeps the first and the last part of what is written, and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head: list[str] = []
        self.head_len = 0
        self.tail = ""
        self.total = 0

    def write(self, text: str) -> int:
        self.total += len(text)
        room = self.limit // 2 - self.head_len
        if room > 0:
            self.head.append(text[:room])
            self.head_len += len(text[:room])
            text = text[room:]
        if text:
            self.tail = (self.tail + text)[-(self.limit - self.limit // 2) :]
        return len(text)

    def getvalue(self) -> str:
        head = "".join(self.head)
        kept = len(head) + len(self.tail)
        if kept >= self.total:
            return head + self.tail
        return f"{head}\n... [{self.total - kept} characters omitted]\n{self.tail}"


class _ThreadRouter:
    """A stand-in for a standard stream: run threads write to their buffer, others through."""

    def __init__(self, original: TextIO, buffers: dict[int, BoundedBuffer]) -> None:
        self._original = original
        self._buffers = buffers

    def write(self, text: str) -> int:
        buffer = self._buffers.get(threading.get_ident())
        if buffer is not None:
            return buffer.write(text)
        return self._original.write(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if threading.get_ident() not in self._buffers:
            self._original.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


@dataclass
class _Capture:
    lock: threading.Lock = field(default_factory=threading.Lock)
    users: int = 0
    stdout: dict[int, BoundedBuffer] = field(default_factory=dict)
    stderr: dict[int, BoundedBuffer] = field(default_factory=dict)
    routers: tuple[_ThreadRouter, _ThreadRouter] | None = None
    originals: tuple[Any, Any] | None = None

    def acquire(self) -> None:
        with self.lock:
            self.users += 1
            if self.users == 1:
                self.originals = (sys.stdout, sys.stderr)
                self.routers = (
                    _ThreadRouter(sys.stdout, self.stdout),
                    _ThreadRouter(sys.stderr, self.stderr),
                )
                sys.stdout, sys.stderr = self.routers

    def release(self) -> None:
        with self.lock:
            self.users -= 1
            if self.users == 0 and self.routers is not None and self.originals is not None:
                if sys.stdout is self.routers[0]:
                    sys.stdout = self.originals[0]
                if sys.stderr is self.routers[1]:
                    sys.stderr = self.originals[1]
                self.routers = self.originals = None


_capture = _Capture()

# -- interruptible sleep -----------------------------------------------------------------------

_stop_events: dict[int, threading.Event] = {}
_original_sleep = time.sleep


def _sleep(seconds: float | SupportsIndex) -> None:
    stop = _stop_events.get(threading.get_ident())
    if stop is None:
        _original_sleep(seconds)
        return
    if stop.wait(float(seconds)):
        raise RunAborted("aborted")


def _install_sleep() -> None:
    if time.sleep is not _sleep:
        time.sleep = _sleep


# -- running -----------------------------------------------------------------------------------


@dataclass
class RunOutcome:
    stdout: str
    stderr: str
    value: Any = None
    has_value: bool = False
    error: str | None = None
    """A short traceback when the code raised."""
    aborted: bool = False
    still_running: bool = False
    """Aborted, but the thread was still inside a C call after the grace period."""
    seconds: float = 0.0


def compile_code(code: str, filename: str) -> tuple[Any, Any | None]:
    """``(body, last_expression)`` code objects; raises ``SyntaxError``."""
    tree = ast.parse(code, filename, "exec")
    last: Any | None = None
    final = tree.body[-1] if tree.body else None
    if isinstance(final, ast.Expr):
        tree.body.pop()
        expression = ast.Expression(final.value)
        last = compile(expression, filename, "eval")
    body = compile(tree, filename, "exec")
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    return body, last


def short_traceback(exc: BaseException, filename: str, frames: int = 5) -> str:
    """The exception with only the frames of the agent's code and below (at most ``frames``)."""
    every = list(traceback.extract_tb(exc.__traceback__))
    start = next((i for i, e in enumerate(every) if e.filename == filename), 0)
    entries = every[start:][-frames:]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(entries)]
    lines.extend(traceback.format_exception_only(type(exc), exc))
    return "".join(lines).rstrip()


_counter = iter(range(1, sys.maxsize))


class _Worker:
    """One code run on its own daemon thread; :meth:`abort` interrupts it."""

    def __init__(
        self,
        body: Any,
        last: Any | None,
        namespace: dict[str, Any],
        stdout: BoundedBuffer,
        stderr: BoundedBuffer,
        settle: Callable[[tuple[Any, bool, BaseException | None]], None],
    ) -> None:
        self.body = body
        self.last = last
        self.namespace = namespace
        self.stdout = stdout
        self.stderr = stderr
        self.settle = settle
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.running = False
        self.aborted = False
        self.thread = threading.Thread(target=self._work, name="pi-run-python", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def abort(self) -> None:
        """Wake ``time.sleep`` and raise :class:`RunAborted` in the thread (once)."""
        with self.lock:
            self.aborted = True
            self.stop.set()
            if self.running and self.thread.ident is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(self.thread.ident), ctypes.py_object(RunAborted)
                )

    def _user_code(self) -> tuple[Any, bool, BaseException | None]:
        try:
            exec(self.body, self.namespace)
            if self.last is not None:
                return eval(self.last, self.namespace), True, None
            return None, False, None
        except BaseException as exc:  # the code's failure (or the abort) is the result
            return None, False, exc

    def _work(self) -> None:
        ident = threading.get_ident()
        _capture.stdout[ident] = self.stdout
        _capture.stderr[ident] = self.stderr
        _stop_events[ident] = self.stop
        result: tuple[Any, bool, BaseException | None] = (None, False, None)
        with self.lock:
            self.running = not self.aborted
        try:
            aborted = (None, False, RunAborted("aborted"))
            result = self._user_code() if self.running else aborted
        except RunAborted as exc:  # landed between the user code and here
            result = (None, False, exc)
        while True:  # stop accepting aborts and drop one that is still pending
            try:
                with self.lock:
                    self.running = False
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), None)
                break
            except RunAborted as exc:
                result = (None, False, exc)
        _capture.stdout.pop(ident, None)
        _capture.stderr.pop(ident, None)
        _stop_events.pop(ident, None)
        self.settle(result)


async def run_code(
    code: str,
    namespace: dict[str, Any],
    signal: AbortSignal | None,
    *,
    output_chars: int = DEFAULT_OUTPUT_CHARS,
    grace: float = 1.0,
) -> RunOutcome:
    """Run ``code`` with ``namespace`` as globals on a worker thread; see the module doc."""
    filename = f"<run_python-{next(_counter)}>"
    body, last = compile_code(code, filename)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[tuple[Any, bool, BaseException | None]] = loop.create_future()
    stdout = BoundedBuffer(output_chars)
    stderr = BoundedBuffer(output_chars)

    def set_done(result: tuple[Any, bool, BaseException | None]) -> None:
        if not done.done():
            done.set_result(result)

    def settle(result: tuple[Any, bool, BaseException | None]) -> None:
        try:
            loop.call_soon_threadsafe(set_done, result)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    worker = _Worker(body, last, namespace, stdout, stderr, settle)
    _install_sleep()
    _capture.acquire()
    begin = time.perf_counter()
    remove = signal.add_listener(worker.abort) if signal is not None else None
    try:
        worker.start()
        value, has_value, error = await _wait(done, signal, grace)
    except TimeoutError:
        return RunOutcome(
            stdout.getvalue(),
            stderr.getvalue(),
            aborted=True,
            still_running=True,
            seconds=time.perf_counter() - begin,
        )
    finally:
        if remove is not None:
            remove()
        if not worker.thread.is_alive():
            _capture.release()
        else:  # release when the stuck thread finally ends
            threading.Thread(target=_release_after, args=(worker.thread,), daemon=True).start()
    seconds = time.perf_counter() - begin
    if error is not None:
        if isinstance(error, RunAborted) or worker.aborted:
            return RunOutcome(stdout.getvalue(), stderr.getvalue(), aborted=True, seconds=seconds)
        return RunOutcome(
            stdout.getvalue(),
            stderr.getvalue(),
            error=short_traceback(error, filename),
            seconds=seconds,
        )
    return RunOutcome(stdout.getvalue(), stderr.getvalue(), value, has_value, seconds=seconds)


def _release_after(thread: threading.Thread) -> None:
    thread.join()
    _capture.release()


async def _wait(
    done: asyncio.Future[tuple[Any, bool, BaseException | None]],
    signal: AbortSignal | None,
    grace: float,
) -> tuple[Any, bool, BaseException | None]:
    """The thread's result; after an abort, at most ``grace`` more seconds (else TimeoutError)."""
    waiting: list[asyncio.Future[Any]] = [done]
    if signal is not None:
        waiting.append(asyncio.ensure_future(signal.wait()))
    try:
        while not any(future.done() for future in waiting):
            # Wake the loop now and then: a SIGINT (the kernel's stop button) that the OS
            # delivered to the worker thread only trips Python's flag, and the main thread runs
            # the handler -- which cancels the cell and so aborts this run -- only once it wakes.
            await asyncio.wait(waiting, timeout=_WAKE_SECONDS, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for future in waiting[1:]:
            future.cancel()
    if done.done():
        return done.result()
    return await asyncio.wait_for(asyncio.shield(done), grace)


__all__ = ["DEFAULT_OUTPUT_CHARS", "BoundedBuffer", "RunAborted", "RunOutcome", "run_code"]
