"""Reading the result of a user hook, which may be a dataclass, a model or a plain dict.

Hooks are called with :func:`pi_notebook.ai.maybe_await` (sync or async); this only reads
what they returned, and never raises for a missing field.
"""

from __future__ import annotations

from typing import Any


def field_of(result: Any, name: str, default: Any = None) -> Any:
    """``result.name`` for dataclasses/models, ``result[name]`` for dicts."""
    if result is None:
        return default
    if isinstance(result, dict):
        return result.get(name, default)
    return getattr(result, name, default)
