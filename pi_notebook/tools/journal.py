"""The undo record of one conversation: what its last run's tools changed, and what they left.

Each conversation (the default one, every ``--agent NAME`` Agent) has its own
:class:`UndoJournal`. :meth:`UndoJournal.begin_run` starts a run, but the record of the run
before is only replaced by the first write of the new one, so a chat-only run leaves it intact
(or by a copy the new run needs and that does not fit next to the old record's).
Before a tool writes, the journal is handed what is known: for a name that is rebound, created
or deleted, the old object itself is the exact previous value (:meth:`keep`); for a name the code
may change *in place*, a deep copy taken before the code ran (:class:`Snapshot`; every copy, taken
or kept, counts against the one byte budget as it is taken). Only the first write of each name
per run is kept, so :meth:`undo` restores the namespace as it was before the run. After each call
the journal also notes what the agent *left* in each name it wrote (:meth:`left`): undo restores a
name only while it still holds that (the same object and, where cheap, equal to a copy or the same
shape); anything else is kept and reported, so the user's later work is never undone.

A name the run created by an ``import`` (it holds a module: ``left(..., imported=True)``) is
not removed by a plain :meth:`undo`, which says it kept it: a later cell of the user's that uses
``np`` must not break. The record keeps it, so ``undo(include_imports=True)`` (``%agent undo
--all``), then or later, removes it too. A name that held a value before the run is restored
either way (the user's value comes back even when the agent rebound it to a module).

This module never runs user code; it only copies, compares and restores values.
"""

from __future__ import annotations

import copy
import pickle
import sys
import types
from collections.abc import Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from .summary import approx_size, human_bytes, is_dataframe, is_ndarray, is_series

DEFAULT_LIMIT_BYTES = 100 * 1024 * 1024
LEFT_COPY_BYTES = 64 * 1024
"""Values up to this size are also copied as the agent left them (an equality check at undo)."""
KEPT_REASON = "changed since the agent's run"


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()
"""The previous "value" of a name that did not exist (undo deletes it)."""

IMMUTABLE: tuple[type, ...] = (int, float, complex, str, bytes, bool, type(None), range)
IMMUTABLE += (frozenset, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
"""Values that cannot change in place (or that a copy would not help with)."""

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
            if not is_ndarray(b) or a.shape != b.shape or a.dtype != b.dtype:
                return False
            return _arrays_equal(a, b)
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


_BLOCK_ITEMS = 1 << 20


def _arrays_equal(a: Any, b: Any) -> bool:
    """Equal arrays (NaN equal to NaN), compared a block of rows at a time.

    ``np.array_equal(equal_nan=True)`` copies both arrays through a mask (for 90 MB: 2 s and
    180 MB more); comparing views of about a million items keeps the temporaries small."""
    np = sys.modules["numpy"]
    if a.ndim == 0 or a.size == 0:
        return bool(np.array_equal(a, b))
    rows = a.shape[0]
    step = max(1, _BLOCK_ITEMS // max(1, a.size // rows))
    nan_aware = a.dtype.kind in "fc"
    for start in range(0, rows, step):
        x, y = a[start : start + step], b[start : start + step]
        try:
            same = x == y
            if not isinstance(same, np.ndarray):
                return bool(np.array_equal(x, y))
            if not same.all():
                if not nan_aware:
                    return False
                same |= np.isnan(x) & np.isnan(y)
                if not same.all():
                    return False
        except TypeError:  # object arrays of values that do not compare
            return bool(np.array_equal(x, y))
    return True


def shape_of(value: Any) -> Any:
    """A cheap structural fingerprint of a frame, series or array (``None`` for others)."""
    try:
        if is_dataframe(value):
            columns = tuple(map(str, value.columns))
            return ("frame", value.shape, columns, tuple(map(str, value.dtypes)))
        if is_series(value):
            return ("series", value.shape, str(value.dtype), str(value.name))
        if is_ndarray(value):
            return ("array", value.shape, value.dtype.str)
    except Exception:
        return None
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
    kept: dict[str, str] = field(default_factory=dict)
    """Names left as they are because they changed after the agent's run, with why."""
    not_restored: dict[str, str] = field(default_factory=dict)
    nothing_left: bool = False
    """The last run's changes were undone already."""
    kept_imports: list[str] = field(default_factory=list)
    """Modules the run's imports bound, left in place (``include_imports`` removes them)."""

    def text(self) -> str:
        imports = (
            [f"kept imports: {', '.join(self.kept_imports)} (undo --all removes them)"]
            if self.kept_imports
            else []
        )
        if self.nothing_left:
            return "\n".join(
                ["nothing left to undo: the last run's changes were already undone", *imports]
            )
        lines = []
        if self.restored:
            lines.append(f"restored: {', '.join(self.restored)}")
        if self.removed:
            lines.append(f"removed (created by the agent): {', '.join(self.removed)}")
        for name, reason in self.kept.items():
            lines.append(f"kept {name}: {reason}")
        for name, reason in self.not_restored.items():
            lines.append(f"could not restore {name}: {reason}")
        lines.extend(imports)
        return "\n".join(lines) if lines else "nothing to undo: the last run changed no variables"


@dataclass
class _Entry:
    value: Any
    reason: str | None = None


@dataclass
class _Left:
    """What the agent left in a name: the object, and a small copy or its shape if cheap."""

    value: Any
    copy: Any = ABSENT
    shape: Any = None
    size: int = 0
    """Bytes of ``copy`` (counted in the budget)."""
    imported: bool = False
    """A module an ``import`` of the agent's bound (a plain undo keeps it)."""

    def still(self, current: Any) -> bool:
        if current is not self.value:
            return False
        if self.copy is not ABSENT:
            return same_value(self.copy, current) is not False
        if self.shape is not None:
            return bool(shape_of(current) == self.shape)
        return True


class UndoJournal:
    """One conversation's record of its last run's writes, within a byte budget."""

    def __init__(self, limit_bytes: int = DEFAULT_LIMIT_BYTES) -> None:
        self.limit_bytes = limit_bytes
        self.own_cell: Any = None
        """The notebook cell its current run was started from (see :mod:`.cells`)."""
        self.own_cell_known = False
        self._entries: dict[str, _Entry] = {}
        self._left: dict[str, _Left] = {}
        self._unverified: dict[str, str] = {}
        self._pending_unverified: dict[str, str] = {}
        self._used = 0
        """Bytes of the copies the record keeps."""
        self._reserved = 0
        """Bytes of the copies taken for the call that runs now (kept or dropped after it)."""
        self._fresh = False
        """A run began and has not written yet: its first write replaces the record."""
        self._undone = False

    # -- the run -------------------------------------------------------------------------------

    def begin_run(self, own_cell: Any = None, *, own_cell_known: bool = False) -> None:
        """A new run: its first write replaces the record (a run that writes nothing keeps it)."""
        self._fresh = True
        self._pending_unverified = {}
        self.own_cell = own_cell
        self.own_cell_known = own_cell_known

    def _writing(self) -> None:
        if self._fresh:
            self._fresh = False
            self._entries = {}
            self._left = {}
            self._unverified = dict(self._pending_unverified)
            self._pending_unverified = {}
            self._used = 0
            self._undone = False

    @property
    def room(self) -> int:
        return self.limit_bytes - self._used - self._reserved

    # -- before a call ---------------------------------------------------------------------------

    def snapshot(self, name: str, value: Any, size: int | None) -> Snapshot:
        """Deep-copy ``value`` (of deep ``size``) if it fits the budget left; reserves it."""
        if size is None:
            return Snapshot(name, value, reason="too many objects to copy")
        if self._fresh and size > self.room and size <= self.limit_bytes - self._reserved:
            self._writing()  # the previous run's copies would crowd out this run's: drop them
        room = self.room
        if size > room:
            return Snapshot(
                name,
                value,
                reason=f"too large to keep: {human_bytes(size)}, with "
                f"{human_bytes(max(room, 0))} of the {human_bytes(self.limit_bytes)} undo "
                "budget left",
            )
        try:
            snap = Snapshot(name, value, copy=copy.deepcopy(value), size=size)
        except Exception as exc:
            return Snapshot(name, value, reason=f"cannot be copied ({type(exc).__name__})")
        self._reserved += size
        return snap

    # -- after a call ----------------------------------------------------------------------------

    def keep(self, name: str, previous: Any) -> None:
        """Record ``previous`` (an old object, or :data:`ABSENT`) unless already recorded."""
        self._writing()
        if name not in self._entries:
            self._entries[name] = _Entry(previous)

    def keep_snapshot(self, snapshot: Snapshot) -> None:
        """Record a snapshot's copy (or why it has none) unless the name is recorded."""
        self._writing()
        if snapshot.name in self._entries:
            return
        if snapshot.kept:
            self._used += snapshot.size
            self._reserved -= snapshot.size
            snapshot.size = 0  # moved from reserved to used
            self._entries[snapshot.name] = _Entry(snapshot.copy)
        else:
            self._entries[snapshot.name] = _Entry(ABSENT, snapshot.reason)

    def left(self, name: str, value: Any, *, imported: bool = False) -> None:
        """After a call wrote ``name``: the agent left ``value`` there (or :data:`ABSENT`);
        ``imported``: a module the call's ``import`` bound."""
        self._writing()
        previous = self._left.pop(name, None)
        if previous is not None:
            self._used -= previous.size
        if value is ABSENT or isinstance(value, IMMUTABLE):
            self._left[name] = _Left(value, imported=imported)
            return
        shape = shape_of(value)
        if shape is not None:
            self._left[name] = _Left(value, shape=shape)
            return
        size = deep_size(value, 10_000)
        if size is not None and size <= min(LEFT_COPY_BYTES, self.room):
            try:
                self._left[name] = _Left(value, copy=copy.deepcopy(value), size=size)
                self._used += size
                return
            except Exception:
                pass
        self._left[name] = _Left(value)

    def unverified(self, name: str, reason: str) -> None:
        """``name`` may have changed in place but had no copy (said at undo)."""
        target = self._pending_unverified if self._fresh else self._unverified
        if name not in self._entries or self._fresh:
            target.setdefault(name, reason)

    def end_call(self, snapshots: Iterable[Snapshot]) -> None:
        """The call is over: the copies it took and did not keep are dropped from the budget."""
        for snapshot in snapshots:
            self._reserved -= snapshot.size
            snapshot.size = 0

    # -- undo ------------------------------------------------------------------------------------

    def undo(
        self, namespace: MutableMapping[str, Any], *, include_imports: bool = False
    ) -> UndoReport:
        """Restore every recorded name the user has not changed since; the record is emptied,
        but for the modules the run's imports bound, which stay (in the namespace and the
        record) unless ``include_imports``."""
        if self._undone and not (include_imports and self._entries):
            kept = [
                name
                for name, left in self._left.items()
                if name in self._entries and left.still(namespace.get(name, ABSENT))
            ]
            return UndoReport(nothing_left=True, kept_imports=sorted(kept))
        if not self._entries and not self._unverified:
            return UndoReport()
        report = UndoReport()
        imports: dict[str, _Entry] = {}
        for name, entry in self._entries.items():
            left = self._left.get(name)
            if left is not None and not left.still(namespace.get(name, ABSENT)):
                report.kept[name] = KEPT_REASON
            elif entry.reason is not None:
                report.not_restored[name] = entry.reason
            elif entry.value is ABSENT:
                if left is not None and left.imported and not include_imports:
                    imports[name] = entry
                    report.kept_imports.append(name)
                elif name in namespace:
                    del namespace[name]
                    report.removed.append(name)
            else:
                namespace[name] = entry.value
                report.restored.append(name)
        for name, reason in self._unverified.items():
            if name not in self._entries:
                report.not_restored[name] = f"it may have been changed in place; {reason}"
        self._entries = imports
        self._left = {name: self._left[name] for name in imports}  # modules: no copies
        self._unverified = {}
        self._used = 0
        self._undone = True
        report.restored.sort()
        report.removed.sort()
        report.kept_imports.sort()
        return report


__all__ = [
    "ABSENT",
    "DEFAULT_LIMIT_BYTES",
    "IMMUTABLE",
    "KEPT_REASON",
    "LEFT_COPY_BYTES",
    "Snapshot",
    "UndoJournal",
    "UndoReport",
    "deep_size",
    "same_value",
    "shape_of",
]
