"""One rule for the agent's code: it may not end (or fork) the kernel.

While ``run_python`` code runs on its worker thread, and only on that thread (user cells, the
kernel's own threads and sync tools are untouched), these raise :class:`KernelExitRefused`
instead of doing what they do:

- ``exit()`` / ``quit()`` / ``get_ipython().ask_exit()`` (IPython's exit: the kernel shuts down);
- ``os._exit()``, ``os.abort()``;
- a signal (other than 0, the existence probe) to the kernel's own process, its process group or
  every process: ``os.kill``, ``os.killpg``, ``signal.pthread_kill``, ``signal.raise_signal``;
- ``os.fork()`` / ``os.forkpty()`` (the copy of a kernel is left a zombie) and ``os.exec*()``
  (it replaces the kernel).

Calls that raise an audit event (kill, killpg, pthread_kill, fork, forkpty, exec) are caught by an
audit hook (``sys.addaudithook``), however the code reaches them; ``os._exit``, ``os.abort``,
``signal.raise_signal`` and the shell's ``ask_exit`` raise none, so those names are wrapped, and
each wrapper passes straight through on every other thread. :func:`refusals_of` lists what was
refused, so a refusal the code catches still fails the call. Processes the code starts itself
(``subprocess``) are out of reach, and so is a ``kill`` command run through them.

This module must never refuse anything outside a guarded thread, and never signal, fork or end
anything itself.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

END_RULE = "refused: the agent may not end the kernel ({what})"
FORK_RULE = "refused: the agent may not fork the kernel ({what}); start programs with subprocess"


class KernelExitRefused(BaseException):
    """Raised in agent code that tried to end or fork the kernel (not an ``Exception``)."""


_guarded: dict[int, list[str]] = {}
"""Guarded thread idents -> what each was refused."""
_EVENTS = frozenset(
    {"os.kill", "os.killpg", "signal.pthread_kill", "os.fork", "os.forkpty", "os.exec"}
)
_installed = False
_lock = threading.Lock()


def _refuse(what: str, rule: str = END_RULE) -> None:
    text = rule.format(what=what)
    _guarded[threading.get_ident()].append(text)
    raise KernelExitRefused(text)


def _is_own(pid: int) -> bool:
    """``pid`` (as ``kill`` reads it) reaches this process."""
    return pid in (os.getpid(), 0, -1) or pid == -os.getpgrp()


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event not in _EVENTS or not _guarded or threading.get_ident() not in _guarded:
        return
    if event in ("os.fork", "os.forkpty"):
        _refuse(f"{event}()", FORK_RULE)
    elif event == "os.exec":
        _refuse("os.exec*()")
    elif event == "os.kill" and args[1] != 0 and _is_own(args[0]):
        _refuse("os.kill() of the kernel's own process")
    elif event == "os.killpg" and args[1] != 0 and args[0] in (0, os.getpgrp()):
        _refuse("os.killpg() of the kernel's process group")
    elif event == "signal.pthread_kill" and args[1] != 0:
        _refuse("signal.pthread_kill() of a kernel thread")


def _guard(what: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() in _guarded:
            _refuse(what)
        return function(*args, **kwargs)

    guarded.__pi_kernel_guard__ = True  # type: ignore[attr-defined]
    return guarded


def _guard_shell() -> None:
    """Wrap the running IPython shell's ``ask_exit`` (what ``exit()`` / ``quit()`` call)."""
    if "IPython" not in sys.modules:
        return
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or getattr(shell.ask_exit, "__pi_kernel_guard__", False):
        return
    shell.ask_exit = _guard("exit() / quit() / ask_exit()", shell.ask_exit)


def install() -> None:
    """Install the audit hook and the wrappers (once; called on the event loop's thread)."""
    global _installed
    with _lock:
        if not _installed:
            sys.addaudithook(_audit)
            os._exit = _guard("os._exit()", os._exit)
            os.abort = _guard("os.abort()", os.abort)
            signal.raise_signal = _guard("signal.raise_signal()", signal.raise_signal)
            _installed = True
    _guard_shell()  # every time: the shell may have been created since


def enter(refused: list[str]) -> None:
    """Guard the calling thread; what it is refused is added to ``refused``."""
    _guarded[threading.get_ident()] = refused


def leave() -> None:
    _guarded.pop(threading.get_ident(), None)


__all__ = ["END_RULE", "FORK_RULE", "KernelExitRefused", "enter", "install", "leave"]
