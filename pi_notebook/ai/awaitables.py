"""``maybe_await``: the one way to call something that may be sync or async.

Hooks, listeners, stream functions and provider callbacks may return a value or an awaitable of
one (as in Pi, where any of them may return a promise). Every layer settles such a result with
``await maybe_await(fn(...))``; nothing here calls anything itself or swallows an exception.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def maybe_await(value: T | Awaitable[T]) -> T:
    """``value``, awaited first if it is awaitable."""
    if inspect.isawaitable(value):
        return await value
    return value
