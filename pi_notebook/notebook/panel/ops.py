"""The panel's delta operations: the wire form shared by the kernel and ``js/deltas.js``.

An op is a JSON list: ``["s", path, value]`` sets ``path`` to ``value``, ``["a", path, text]``
appends ``text`` to the string at ``path``, ``["p", path, value]`` pushes ``value`` onto the
list at ``path``. A path is a list of dict keys and list indexes. :func:`apply_ops` is the
reference semantics (the front end implements the same); this module must stay pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, TypeAlias

Path: TypeAlias = list[str | int]
Op: TypeAlias = list[Any]


class OpSink(Protocol):
    """Where the reducer writes its ops (the transport, or a list in tests)."""

    def set(self, path: Path, value: Any) -> None: ...

    def append(self, path: Path, text: str) -> None: ...

    def push(self, path: Path, value: Any) -> None: ...


class OpList:
    """An :class:`OpSink` that keeps every op (tests and tools); coalesces nothing."""

    def __init__(self) -> None:
        self.ops: list[Op] = []

    def set(self, path: Path, value: Any) -> None:
        self.ops.append(["s", list(path), value])

    def append(self, path: Path, text: str) -> None:
        self.ops.append(["a", list(path), text])

    def push(self, path: Path, value: Any) -> None:
        self.ops.append(["p", list(path), value])


def _parent(state: Any, path: Path) -> Any:
    target = state
    for key in path[:-1]:
        target = target[key]
    return target


def apply_op(state: dict[str, Any], op: Op) -> None:
    kind, path, value = op
    if not path:
        raise ValueError("an op needs a non-empty path")
    parent = _parent(state, path)
    key = path[-1]
    if kind == "s":
        if isinstance(parent, list) and key == len(parent):
            parent.append(value)
        else:
            parent[key] = value
    elif kind == "a":
        parent[key] = parent[key] + value
    elif kind == "p":
        parent[key].append(value)
    else:
        raise ValueError(f"unknown op kind {kind!r}")


def apply_ops(state: dict[str, Any], ops: Iterable[Op]) -> dict[str, Any]:
    for op in ops:
        apply_op(state, op)
    return state


__all__ = ["Op", "OpList", "OpSink", "Path", "apply_op", "apply_ops"]
