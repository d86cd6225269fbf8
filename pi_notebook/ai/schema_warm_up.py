"""Importing the schema validator in a background thread while a request that offers tools is
waiting for the model.

Why: tool arguments are checked by :mod:`.json_schema`, which imports ``jsonschema``, whose
format checkers import ``rfc3987_syntax``, which builds its Lark grammars when imported: about
0.85 s of CPU on an idle machine, seconds under load. :mod:`.validation` imports it on the
first schema, so that ``%load_ext pi_notebook`` and runs without tools never pay it; left
there, the first tool call of a process paid it, its tool card sitting "prepared" meanwhile.

So the provider driver (:mod:`.providers._driver`) calls :func:`warm_schema_validator` once a
request whose body offers tools has been written and its reply is awaited (httpcore's
``trace`` extension says when): the process then waits on the network for the model, and the
import runs in that wait (``bench/bench_first_tool.py`` measures it). Starting any earlier
would slow the request going out: the provider's first imports and the request's building
would share the GIL with the import. The faux provider never waits on anything, so it starts
nothing, and neither does a request without tools.

Python's per-module import locks make a tool call that needs the module while it is still
being imported wait for that import instead of importing twice. ``jsonschema`` is imported the
ordinary way (nothing is blocked or patched), so a user's own ``import jsonschema`` gets the
same module. An error in the background is swallowed: the module is then not in
``sys.modules``, and the first tool call imports it again and raises as it always did. While
the import runs it shares the GIL with the event loop: a reply streaming then arrives a few ms
later per chunk, which costs far less than the import it hides.

At most one thread per process, and none once the module is imported.
"""

from __future__ import annotations

import importlib
import sys
import threading

__all__ = ["SCHEMA_MODULE", "enabled", "warm_schema_validator", "warm_up_thread"]

SCHEMA_MODULE = "pi_notebook.ai.json_schema"

enabled = True
"""Whether :func:`warm_schema_validator` starts the import (the benchmark sets ``False`` to
measure the process without it)."""

warm_up_thread: threading.Thread | None = None
"""The thread that imported (or is importing) the validator, once one was started."""

_lock = threading.Lock()


def warm_schema_validator() -> threading.Thread | None:
    """Start importing :data:`SCHEMA_MODULE` in a daemon thread, unless it is imported or being
    imported.

    Returns the thread it started, or ``None``. Cheap to call for every request: after the
    first call it reads one global."""
    global warm_up_thread
    if warm_up_thread is not None or not enabled or SCHEMA_MODULE in sys.modules:
        return None
    with _lock:
        if warm_up_thread is not None:
            return None
        thread = threading.Thread(
            target=_import_quietly, name="pi-notebook-schema-warm-up", daemon=True
        )
        warm_up_thread = thread
    thread.start()
    return thread


def _import_quietly() -> None:
    try:
        importlib.import_module(SCHEMA_MODULE)
    except BaseException:  # the first real use imports it again, and raises there as before
        pass
