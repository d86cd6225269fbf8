"""Why the model request being made now is made: the loop's turn, a compaction summary, or the
turn's request again after a context overflow.

The agent's ``stream_fn`` hook sees every request of a run, and a run may make requests that are
not turns: :class:`~pi_notebook.agent.Agent` asks the model for a compaction summary (inside
``transform_context``), and ``overflow_retrying`` sends a turn's request once more after a
context-overflow refusal. Both mark what they send with :func:`requesting`; a ``stream_fn``
wrapper (the notebook's request tap) reads :func:`request_purpose` so it can number turns as the
loop does. A context variable carries it because the request is made down the same call chain
(same task) that marked it, without widening any public signature.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal, TypeAlias

RequestPurpose: TypeAlias = Literal["turn", "summary", "retry"]

_PURPOSE: ContextVar[RequestPurpose] = ContextVar("pi_notebook_request_purpose", default="turn")


def request_purpose() -> RequestPurpose:
    """``"turn"`` (the loop's request), ``"summary"`` (a compaction summary) or ``"retry"``
    (the turn's request again, compacted, after a context overflow)."""
    return _PURPOSE.get()


@contextmanager
def requesting(purpose: RequestPurpose) -> Iterator[None]:
    """Model requests made inside the block are made for ``purpose``."""
    token = _PURPOSE.set(purpose)
    try:
        yield
    finally:
        _PURPOSE.reset(token)


__all__ = ["RequestPurpose", "request_purpose", "requesting"]
