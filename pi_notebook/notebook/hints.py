"""One-line hints for a notebook run out of order: a cell run after a kernel restart, or an
``%%agent`` cell run again on its own.

A lesson (``notebooks/02_loop_lifecycle.ipynb``) scripts a faux model in one cell and runs it
in the next; its later cells use names that cells above defined. Run out of order, those cells
failed with a traceback (a ``NameError`` at the cell's top level) or with Pi's bare
``No more faux responses queued``. This module words what went wrong and what to do instead,
in one line each:

* :func:`name_error_hint`, the extension's handler for a ``NameError`` raised by a cell's own
  top-level code (a name no cell defined in this kernel: after a restart, the set-up cells
  have not run). A ``NameError`` raised deeper, inside a function, keeps its full traceback.
* :func:`missing_replies_hint`, printed below a run whose faux model had no reply left. Pi's
  error text stays as it is in the transcript (the message is Pi's); the hint is the notebook's.
* :data:`SETUP_HINT`, added to the ``%%agent`` errors for a ``--tools`` or ``--model`` name the
  namespace does not have.

The handler is there once ``%load_ext pi_notebook`` ran (the lesson's set-up cell does it
first): in a kernel where no cell ran yet, nothing of this package is loaded, and IPython's own
errors show (for an ``%%agent`` cell one line too: ``Cell magic `%%agent` not found``).

This module must never change what a run does: it only words errors.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from ..ai import NO_MORE_RESPONSES, AssistantMessage

SETUP_HINT = "after a kernel restart, run the set-up cells at the top first"
NO_REPLIES_HINT = "the faux model has no replies queued: run the cell above that scripts them"


def missing_replies_hint(messages: Sequence[Any]) -> str | None:
    """:data:`NO_REPLIES_HINT` when the run's last reply is the faux model's "no more
    responses" error, else ``None``."""
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    if last is None or last.stop_reason != "error":
        return None
    return NO_REPLIES_HINT if last.error_message == NO_MORE_RESPONSES else None


def _innermost(tb: TracebackType | None) -> TracebackType | None:
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def top_level(tb: TracebackType | None) -> bool:
    """The exception was raised by a cell's own top-level code (not inside a function)."""
    last = _innermost(tb)
    return last is not None and last.tb_frame.f_code.co_name == "<module>"


def name_error_hint(
    shell: Any,
    etype: type[BaseException],
    value: BaseException,
    tb: TracebackType | None,
    tb_offset: int | None = None,
) -> None:
    """IPython's custom exception handler for ``NameError`` (``set_custom_exc``; IPython
    shows nothing itself): one line on stderr for a name the cell itself used, as IPython
    shows a ``UsageError``, with the cell's line it came from (the traceback's arrow, which a
    cell of many lines needs); the usual traceback otherwise."""
    if isinstance(value, NameError) and top_level(tb):
        # What showtraceback records, so %tb and %debug still find the error.
        sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
        if sys.version_info >= (3, 12):
            sys.last_exc = value
        last = _innermost(tb)
        where = f"line {last.tb_lineno}; " if last is not None else ""
        print(f"NameError: {value} ({where}{SETUP_HINT})", file=sys.stderr)
        return
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def install(shell: Any) -> None:
    """Hint at top-level ``NameError``s in ``shell``, unless it has its own handler."""
    if not shell.custom_exceptions:
        shell.set_custom_exc((NameError,), name_error_hint)


def uninstall(shell: Any) -> None:
    if shell.custom_exceptions == (NameError,):
        shell.set_custom_exc((), None)


__all__ = [
    "NO_REPLIES_HINT",
    "SETUP_HINT",
    "install",
    "missing_replies_hint",
    "name_error_hint",
    "top_level",
    "uninstall",
]
