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

Two CPython details shape it. ``print`` (and every C caller of ``PySys_GetObject``) holds only a
*borrowed* reference to ``sys.stdout`` while it writes, so a stream object put on ``sys.stdout``
must never be freed while another thread may be inside ``print``: the routers are created once
and live as long as the process (freeing one mid-``print`` crashed the interpreter). And an
asynchronous exception lands at *any* bytecode boundary, so it is sent at most once, only while
the user code runs, never while the thread waits in the interruptible ``time.sleep`` (which
raises :class:`RunAborted` itself, outside ``threading``'s lock-juggling code), and a pending one
is withdrawn before the thread runs this module's bookkeeping.
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
from dataclasses import dataclass
from typing import Any, SupportsIndex, TextIO

from ..ai import AbortSignal

DEFAULT_OUTPUT_CHARS = 4000


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
        """Take ``text`` (kept or only counted); returns its length, as a stream does."""
        written = len(text)
        self.total += written
        room = self.limit // 2 - self.head_len
        if room > 0:
            self.head.append(text[:room])
            self.head_len += len(text[:room])
            text = text[room:]
        if text:
            self.tail = (self.tail + text)[-(self.limit - self.limit // 2) :]
        return written

    def getvalue(self) -> str:
        head = "".join(self.head)
        kept = len(head) + len(self.tail)
        if kept >= self.total:
            return head + self.tail
        return f"{head}\n... [{self.total - kept} characters omitted]\n{self.tail}"


class _ThreadRouter:
    """A stand-in for a standard stream: run threads write to their buffer, others through.

    Never freed (see the module doc): ``original`` is the stream it stood in for most recently.
    """

    def __init__(self, original: TextIO | None, buffers: dict[int, BoundedBuffer]) -> None:
        self.original = original
        self._buffers = buffers

    def write(self, text: str) -> int:
        buffer = self._buffers.get(threading.get_ident())
        if buffer is not None:
            return buffer.write(text)
        original = self.original
        if original is None:  # no stream at all (pythonw): print() would drop the text too
            return len(text)
        return original.write(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        original = self.original
        if threading.get_ident() not in self._buffers and original is not None:
            original.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


class _Capture:
    """Installs the routers on ``sys.stdout``/``sys.stderr`` while any run may print."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.stdout: dict[int, BoundedBuffer] = {}
        self.stderr: dict[int, BoundedBuffer] = {}
        # Created once, referenced here for good: a router is never deallocated, so a thread
        # inside print() with a borrowed reference to it stays safe whatever the swaps.
        self.out_router = _ThreadRouter(sys.stdout, self.stdout)
        self.err_router = _ThreadRouter(sys.stderr, self.stderr)

    def acquire(self) -> None:
        """One more run: (re)install the routers over whatever the streams are now."""
        with self.lock:
            self.users += 1
            # Plain attribute reads and stores, no calls, between the check and the swap (so no
            # thread switch there). Checked on every acquire: a stream replaced meanwhile (pytest's
            # capture, IPython's %%capture) is wrapped again instead of silently not captured.
            if sys.stdout is not self.out_router:
                self.out_router.original = sys.stdout
                sys.stdout = self.out_router
            if sys.stderr is not self.err_router:
                self.err_router.original = sys.stderr
                sys.stderr = self.err_router

    def release(self) -> None:
        """One run fewer: the last one puts the streams back (unless replaced meanwhile)."""
        with self.lock:
            self.users -= 1
            if self.users == 0:
                if sys.stdout is self.out_router:
                    sys.stdout = self.out_router.original
                if sys.stderr is self.err_router:
                    sys.stderr = self.err_router.original


_capture = _Capture()

# -- aborting ----------------------------------------------------------------------------------

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

_workers: dict[int, _Worker] = {}
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


def compile_code(
    code: str, filename: str, tree: ast.Module | None = None
) -> tuple[Any, Any | None]:
    """``(body, last_expression)`` code objects; raises ``SyntaxError``.

    ``tree`` is ``code`` already parsed (``"exec"`` mode), to save parsing it again; it is
    consumed (its last expression is taken out of its body).
    """
    if tree is None:
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
    """One code run on its own daemon thread; :meth:`abort` interrupts it.

    ``lock`` guards the flags. ``running``: the user code may run, so an abort may raise into
    the thread. ``sleeping``: the thread waits in the interruptible sleep, so an abort only sets
    ``stop``. ``sent``: the one asynchronous exception was sent. ``finished``: the thread has
    delivered its result. ``owns_capture``: it releases the output capture when it ends (run_code
    stopped waiting for it).
    """

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
        self.sleeping = False
        self.aborted = False
        self.sent = False
        self.finished = False
        self.owns_capture = False
        self.thread = threading.Thread(target=self._work, name="pi-run-python", daemon=True)

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
        """``time.sleep`` for this run's thread: returns early, raising, when aborted."""
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
        _workers[ident] = self
        result: tuple[Any, bool, BaseException | None] = (None, False, RunAborted("aborted"))
        try:  # from here on an abort may land at any bytecode: everything is inside the try
            with self.lock:
                self.running = not self.aborted
            if self.running:
                result = self._user_code()
        except RunAborted as exc:  # landed outside the user code's own try
            result = (None, False, exc)
        while True:  # stop accepting aborts; withdraw the one sent if it has not landed yet
            try:
                with self.lock:
                    self.running = False
                    if self.sent:  # it may have landed already: withdrawing is harmless
                        _send_async_exc(ident, None)
                        self.sent = False
                break
            except RunAborted as exc:
                result = (None, False, exc)
        # No asynchronous exception can reach this thread any more.
        _capture.stdout.pop(ident, None)
        _capture.stderr.pop(ident, None)
        _workers.pop(ident, None)
        with self.lock:  # before settling, so that run_code normally releases the capture
            self.finished = True
            release = self.owns_capture
        if release:
            _capture.release()
        self.settle(result)

    def hand_over_capture(self) -> bool:
        """Called by run_code when it stops waiting: False when the thread is already done
        with the capture (the caller releases it), True when the thread will release it."""
        with self.lock:
            self.owns_capture = not self.finished
            return self.owns_capture


async def run_code(
    code: str,
    namespace: dict[str, Any],
    signal: AbortSignal | None,
    *,
    tree: ast.Module | None = None,
    output_chars: int = DEFAULT_OUTPUT_CHARS,
    grace: float = 1.0,
) -> RunOutcome:
    """Run ``code`` with ``namespace`` as globals on a worker thread; see the module doc.

    ``tree``: ``code`` already parsed, handed to :func:`compile_code` (which consumes it).
    """
    filename = f"<run_python-{next(_counter)}>"
    body, last = compile_code(code, filename, tree)
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
        # Normally the thread is done: release here, on the event loop's thread. A thread stuck
        # in a C call releases the capture itself when it ends (the routers are never freed,
        # so a swap from that thread cannot pull a stream from under a concurrent print()).
        if not worker.hand_over_capture():
            _capture.release()
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
        # A kernel interrupt that the OS delivers to the worker thread still wakes this wait:
        # the extension gives the loop a signal wake-up socket (pi_notebook.notebook.interrupts).
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for future in waiting[1:]:
            future.cancel()
    if done.done():
        return done.result()
    return await asyncio.wait_for(asyncio.shield(done), grace)


__all__ = ["DEFAULT_OUTPUT_CHARS", "BoundedBuffer", "RunAborted", "RunOutcome", "run_code"]
