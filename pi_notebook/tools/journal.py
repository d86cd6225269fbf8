"""The undo journal: the previous value of every variable the agent wrote during its last run.

A run starts with :meth:`UndoJournal.begin_run`. Before a tool writes, it hands the journal what
it knows: for a name that is rebound, created or deleted, the old object itself is the exact
previous value (:meth:`keep`); for a name the code may change *in place*, a deep copy taken
before the code ran (:class:`Snapshot`, bounded by the journal's byte budget). Only the first
write of each name per run is kept, so :meth:`undo` restores the namespace as it was before the
run, and says which names it could not restore and why.

This module never runs user code; it only copies, compares and restores values.
"""

from __future__ import annotations

import copy
import pickle
import sys
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

from .summary import approx_size, human_bytes, is_dataframe, is_ndarray, is_series

DEFAULT_LIMIT_BYTES = 100 * 1024 * 1024


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()
"""The previous "value" of a name that did not exist (undo deletes it)."""

_NODE_BUDGET = 200_000


def deep_size(value: Any, budget: int = _NODE_BUDGET) -> int | None:
    """Approximate deep size in bytes; ``None`` when too many objects to count."""
    seen: set[int] = set()
    stack = [value]
    total = 0
    nodes = 0
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        nodes += 1
        if nodes > budget:
            return None
        if is_dataframe(item) or is_series(item) or is_ndarray(item):
            total += approx_size(item) or 0
            continue
        total += sys.getsizeof(item)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
        elif hasattr(item, "__dict__") and not isinstance(item, type):
            stack.append(vars(item))
    return total


def same_value(a: Any, b: Any) -> bool | None:
    """Whether a copy ``a`` still equals ``b``; ``None`` when it cannot be told."""
    try:
        if is_dataframe(a) or is_series(a):
            return type(a) is type(b) and bool(a.equals(b))
        if is_ndarray(a):
            np = sys.modules["numpy"]
            if not is_ndarray(b) or a.shape != b.shape or a.dtype != b.dtype:
                return False
            try:
                return bool(np.array_equal(a, b, equal_nan=True))
            except TypeError:
                return bool(np.array_equal(a, b))
        eq: Any = type(a).__eq__
        if eq is not object.__eq__:
            try:
                result = a == b
            except Exception:  # e.g. a dict of DataFrames: fall back to the pickles
                result = None
            if isinstance(result, bool):
                return result
        return pickle.dumps(a, protocol=5) == pickle.dumps(b, protocol=5)
    except Exception:
        return None


@dataclass
class Snapshot:
    """A value's copy taken before code ran, or why none could be taken."""

    name: str
    original: Any
    copy: Any = ABSENT
    reason: str | None = None
    """Why there is no copy (too large, not copyable); ``None`` when there is one."""
    size: int = 0
    """The value's approximate deep size in bytes, measured before copying (0 without a copy)."""

    @property
    def kept(self) -> bool:
        return self.reason is None

    def changed_in_place(self, current: Any) -> bool | None:
        """Whether the value (still the same object) differs from the copy; None if unknown."""
        if not self.kept:
            return None
        same = same_value(self.copy, current)
        return None if same is None else not same


@dataclass
class UndoReport:
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    not_restored: dict[str, str] = field(default_factory=dict)

    def text(self) -> str:
        lines = []
        if self.restored:
            lines.append(f"restored: {', '.join(self.restored)}")
        if self.removed:
            lines.append(f"removed (created by the agent): {', '.join(self.removed)}")
        for name, reason in self.not_restored.items():
            lines.append(f"could not restore {name}: {reason}")
        return "\n".join(lines) if lines else "nothing to undo: the last run changed no variables"


@dataclass
class _Entry:
    value: Any
    reason: str | None = None


class UndoJournal:
    """Previous values of the names written since :meth:`begin_run`, within a byte budget."""

    def __init__(self, limit_bytes: int = DEFAULT_LIMIT_BYTES) -> None:
        self.limit_bytes = limit_bytes
        self._entries: dict[str, _Entry] = {}
        self._used = 0

    def begin_run(self) -> None:
        """Forget the previous run: undo now goes back to the state before this run."""
        self._entries = {}
        self._used = 0

    def has(self, name: str) -> bool:
        return name in self._entries

    def snapshot(self, name: str, value: Any) -> Snapshot:
        """Deep-copy ``value`` if it fits the remaining budget (counted only if committed)."""
        if name in self._entries:  # already kept for this run: only change detection needs it
            return self._copy(name, value, self.limit_bytes)
        return self._copy(name, value, self.limit_bytes - self._used)

    def _copy(self, name: str, value: Any, room: int) -> Snapshot:
        size = deep_size(value)
        if size is None:
            return Snapshot(name, value, reason="too many objects to copy")
        if size > room:
            return Snapshot(
                name,
                value,
                reason=f"too large to keep: {human_bytes(size)}, with "
                f"{human_bytes(max(room, 0))} of the {human_bytes(self.limit_bytes)} undo "
                "budget left",
            )
        try:
            return Snapshot(name, value, copy=copy.deepcopy(value), size=size)
        except Exception as exc:
            return Snapshot(name, value, reason=f"cannot be copied ({type(exc).__name__})")

    def keep(self, name: str, previous: Any) -> None:
        """Record ``previous`` (an old object, or :data:`ABSENT`) unless already recorded."""
        if name not in self._entries:
            self._entries[name] = _Entry(previous)

    def keep_snapshot(self, snapshot: Snapshot) -> None:
        """Record a snapshot's copy (or why it has none) unless the name is recorded."""
        if snapshot.name in self._entries:
            return
        if snapshot.kept:
            self._used += snapshot.size
            self._entries[snapshot.name] = _Entry(snapshot.copy)
        else:
            self._entries[snapshot.name] = _Entry(ABSENT, snapshot.reason)

    def undo(self, namespace: MutableMapping[str, Any]) -> UndoReport:
        """Restore every recorded name; the journal is emptied."""
        report = UndoReport()
        for name, entry in self._entries.items():
            if entry.reason is not None:
                report.not_restored[name] = entry.reason
            elif entry.value is ABSENT:
                if name in namespace:
                    del namespace[name]
                    report.removed.append(name)
            else:
                namespace[name] = entry.value
                report.restored.append(name)
        self._entries = {}
        self._used = 0
        report.restored.sort()
        report.removed.sort()
        return report


__all__ = [
    "ABSENT",
    "DEFAULT_LIMIT_BYTES",
    "Snapshot",
    "UndoJournal",
    "UndoReport",
    "deep_size",
    "same_value",
]
