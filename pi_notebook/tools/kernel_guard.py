"""One rule for the agent's code: it may not end (or fork) the kernel, nor signal its parent.

The guard stops accidents, not a hostile model: code that means harm still reaches the kernel
through ``ctypes`` or a program it starts with ``subprocess``, and this module does not try to
close those. While ``run_python`` code runs on its worker thread, and on the threads that code
starts (user cells, the kernel's own threads and sync tools are untouched), these raise
:class:`KernelExitRefused` instead of doing what they do:

- ``exit()`` / ``quit()`` / ``get_ipython().ask_exit()`` (IPython's exit: the kernel shuts down),
  ``get_ipython().kernel.do_shutdown(...)``, and the assignment ``get_ipython().exit_now = True``
  itself (once it is made, the kernel's loop is already told to stop);
- ``os._exit()`` / ``posix._exit()``, ``os.abort()`` / ``posix.abort()``, and ``faulthandler``'s
  crash helpers (``faulthandler._sigsegv()`` and its siblings);
- a signal (other than 0, the existence probe) to the kernel's own process, its process group,
  every process, or the kernel's parent process or its group (under JupyterLab the server, with
  every kernel in it): ``os.kill``, ``os.killpg``, ``signal.pthread_kill``,
  ``signal.raise_signal`` (also reached as ``_signal.raise_signal``);
- ``signal.alarm()`` / ``signal.setitimer()`` arming a timer whose signal still has its default
  handler (which ends the process when the timer fires);
- ``os.fork()`` / ``os.forkpty()`` (the copy of a kernel is left a zombie) and ``os.exec*()``
  (it replaces the kernel).

Calls that raise an audit event (kill, killpg, pthread_kill, fork, forkpty, exec) are caught by an
audit hook (``sys.addaudithook``), however the code reaches them; the others raise none, so those
entry points are wrapped where they live, and each wrapper passes straight through on every
other thread. A thread started from a guarded thread (``threading.Thread.start`` and
``_thread.start_new_thread`` are wrapped to note it) is guarded too, for as long as it runs, and
its refusals count against the call that started it. Each refusal is added to the list given to
:func:`enter`, so a refusal the code catches still fails the call.

This module must never refuse anything outside a guarded thread, and never signal, fork or end
anything itself.
"""

from __future__ import annotations

import functools
import importlib
import os
import signal
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

import traitlets

END_RULE = "refused: the agent may not end the kernel ({what})"
FORK_RULE = "refused: the agent may not fork the kernel ({what}); start programs with subprocess"
PARENT_RULE = (
    "refused: the agent may not signal the kernel's parent process ({what}); it may be the "
    "Jupyter server, with every kernel in it"
)


class KernelExitRefused(BaseException):
    """Raised in agent code that tried to end or fork the kernel (not an ``Exception``)."""


_guarded: dict[int, list[str]] = {}
"""Guarded thread idents -> what each was refused."""
_started: weakref.WeakKeyDictionary[threading.Thread, list[str]] = weakref.WeakKeyDictionary()
"""Threads started by guarded code (``threading``) -> the refusals of the call that started them."""
_started_raw: dict[int, list[str]] = {}
"""Running ``_thread`` threads started by guarded code -> the same."""
_EVENTS = frozenset(
    {"os.kill", "os.killpg", "signal.pthread_kill", "os.fork", "os.forkpty", "os.exec"}
)
_ENDS = (  # (module, attribute): entry points that end the process and raise no audit event
    ("os", "_exit"),
    ("posix", "_exit"),
    ("os", "abort"),
    ("posix", "abort"),
    ("signal", "raise_signal"),
    ("_signal", "raise_signal"),
    ("faulthandler", "_read_null"),
    ("faulthandler", "_sigsegv"),
    ("faulthandler", "_sigabrt"),
    ("faulthandler", "_sigfpe"),
    ("faulthandler", "_fatal_error_c_thread"),
    ("faulthandler", "_stack_overflow"),
)
_TIMERS = ("signal", "_signal")
_TIMER_SIGNALS = {
    signal.ITIMER_REAL: signal.SIGALRM,
    signal.ITIMER_VIRTUAL: signal.SIGVTALRM,
    signal.ITIMER_PROF: signal.SIGPROF,
}
_installed = False
_lock = threading.Lock()


def _refusals_here() -> list[str] | None:
    """The refusal list of the calling thread when it is guarded, else None."""
    ident = threading.get_ident()
    found = _guarded.get(ident)
    if found is None and _started_raw:
        found = _started_raw.get(ident)
    if found is None and len(_started):
        found = _started.get(threading.current_thread())
    return found


def _refuse(refused: list[str], what: str, rule: str = END_RULE) -> None:
    text = rule.format(what=what)
    refused.append(text)
    raise KernelExitRefused(text)


def _is_own(pid: int) -> bool:
    """``pid`` (as ``kill`` reads it) reaches this process."""
    return pid in (os.getpid(), 0, -1) or pid == -os.getpgrp()


def _parent_group() -> int | None:
    try:
        return os.getpgid(os.getppid())
    except OSError:
        return None


def _is_parent(pid: int) -> bool:
    """``pid`` (as ``kill`` reads it) reaches the kernel's parent process."""
    if pid == os.getppid():
        return True
    group = _parent_group()
    return pid < -1 and group is not None and -pid == group


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event not in _EVENTS:
        return
    refused = _refusals_here()
    if refused is None:
        return
    if event in ("os.fork", "os.forkpty"):
        _refuse(refused, f"{event}()", FORK_RULE)
    elif event == "os.exec":
        _refuse(refused, "os.exec*()")
    elif event == "os.kill" and args[1] != 0 and _is_own(args[0]):
        _refuse(refused, "os.kill() of the kernel's own process")
    elif event == "os.kill" and args[1] != 0 and _is_parent(args[0]):
        _refuse(refused, "os.kill() of the kernel's parent", PARENT_RULE)
    elif event == "os.killpg" and args[1] != 0 and args[0] in (0, os.getpgrp()):
        _refuse(refused, "os.killpg() of the kernel's process group")
    elif event == "os.killpg" and args[1] != 0 and args[0] == _parent_group():
        _refuse(refused, "os.killpg() of the parent's process group", PARENT_RULE)
    elif event == "signal.pthread_kill" and args[1] != 0:
        _refuse(refused, "signal.pthread_kill() of a kernel thread")


def _mark(function: Callable[..., Any]) -> Callable[..., Any]:
    function.__pi_kernel_guard__ = True  # type: ignore[attr-defined]
    return function


def _is_marked(function: object) -> bool:
    return getattr(function, "__pi_kernel_guard__", False) is True


def _guard(what: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        refused = _refusals_here()
        if refused is not None:
            _refuse(refused, what)
        return function(*args, **kwargs)

    return _mark(guarded)


def _is_default(signum: int) -> bool:
    return signal.getsignal(signum) == signal.SIG_DFL


def _guard_alarm(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def alarm(seconds: int) -> Any:
        refused = _refusals_here()
        if refused is not None and seconds > 0 and _is_default(signal.SIGALRM):
            _refuse(refused, "signal.alarm() with SIGALRM's default handler")
        return function(seconds)

    return _mark(alarm)


def _guard_setitimer(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def setitimer(which: int, seconds: float, *args: Any, **kwargs: Any) -> Any:
        refused = _refusals_here()
        signum = _TIMER_SIGNALS.get(which)
        if refused is not None and seconds > 0 and signum is not None and _is_default(signum):
            name = signal.Signals(signum).name
            _refuse(refused, f"signal.setitimer() with {name}'s default handler")
        return function(which, seconds, *args, **kwargs)

    return _mark(setitimer)


def _guard_thread_start(start: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(start)
    def guarded_start(self: threading.Thread) -> Any:
        refused = _refusals_here()
        if refused is not None:
            _started[self] = refused
        return start(self)

    return _mark(guarded_start)


def _guard_raw_start(start: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(start)
    def guarded_start(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        refused = _refusals_here()
        if refused is None:
            return start(function, *args, **kwargs)

        def run(*run_args: Any, **run_kwargs: Any) -> Any:
            ident = threading.get_ident()
            _started_raw[ident] = refused
            try:
                return function(*run_args, **run_kwargs)
            finally:
                _started_raw.pop(ident, None)

        return start(run, *args, **kwargs)

    return _mark(guarded_start)


def _wrap(module_name: str, name: str, wrapper: Callable[[Callable[..., Any]], Any]) -> None:
    module = importlib.import_module(module_name)
    function = getattr(module, name, None)
    if function is not None and not _is_marked(function):
        setattr(module, name, wrapper(function))


class _ExitNow(traitlets.Bool):  # type: ignore[type-arg]
    """The shell's ``exit_now`` trait, refusing ``True`` from a guarded thread."""

    def validate(self, obj: Any, value: Any) -> Any:
        checked = super().validate(obj, value)
        refused = _refusals_here() if checked else None
        if refused is not None:
            _refuse(refused, "get_ipython().exit_now = True")
        return checked


def _guard_shell() -> None:
    """Guard the running IPython shell: ``ask_exit``, ``exit_now`` and its kernel's shutdown."""
    if "IPython" not in sys.modules:
        return
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return
    ask_exit = getattr(shell, "ask_exit", None)  # a plain InteractiveShell has none
    if ask_exit is not None and not _is_marked(ask_exit):
        shell.ask_exit = _guard("exit() / quit() / ask_exit()", ask_exit)
    if not isinstance(shell.traits().get("exit_now"), _ExitNow):
        shell.add_traits(exit_now=_ExitNow(False))  # traitlets' public way to add a validator
    kernel = getattr(shell, "kernel", None)
    shutdown = getattr(kernel, "do_shutdown", None)
    if shutdown is not None and not _is_marked(shutdown):
        kernel.do_shutdown = _guard("get_ipython().kernel.do_shutdown()", shutdown)  # type: ignore[union-attr]


def install() -> None:
    """Install the audit hook and the wrappers (once; called on the event loop's thread)."""
    global _installed
    with _lock:
        if not _installed:
            sys.addaudithook(_audit)
            for module_name, name in _ENDS:
                what = f"{module_name}.{name}()"
                _wrap(module_name, name, functools.partial(_guard, what))
            for module_name in _TIMERS:
                _wrap(module_name, "alarm", _guard_alarm)
                _wrap(module_name, "setitimer", _guard_setitimer)
            _wrap("_thread", "start_new_thread", _guard_raw_start)
            _wrap("_thread", "start_new", _guard_raw_start)
            _wrap("_thread", "start_joinable_thread", _guard_raw_start)  # Python 3.13+
            threading.Thread.start = _guard_thread_start(threading.Thread.start)  # type: ignore[method-assign]
            _installed = True
    _guard_shell()  # every time: the shell may have been created since


def enter(refused: list[str]) -> None:
    """Guard the calling thread; what it is refused is added to ``refused``."""
    _guarded[threading.get_ident()] = refused


def leave() -> None:
    _guarded.pop(threading.get_ident(), None)


__all__ = ["END_RULE", "FORK_RULE", "PARENT_RULE", "KernelExitRefused", "enter", "install", "leave"]
