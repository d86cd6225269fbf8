"""Calling user hooks that may be sync or async, and reading their dict-or-object results."""

from __future__ import annotations

import inspect
from typing import Any


async def call_hook(fn: Any, *args: Any) -> Any:
    """Call ``fn(*args)`` and await the result when it is awaitable."""
    result = fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


def field_of(result: Any, name: str, default: Any = None) -> Any:
    """``result.name`` for dataclasses/models, ``result[name]`` for dicts."""
    if result is None:
        return default
    if isinstance(result, dict):
        return result.get(name, default)
    return getattr(result, name, default)
