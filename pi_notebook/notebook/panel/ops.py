"""The panel's delta operations: the wire form shared by the kernel and ``js/deltas.js``.

An op is a JSON list: ``["s", path, value]`` sets ``path`` to ``value``, ``["a", path, text]``
appends ``text`` to the string at ``path``, ``["p", path, value]`` pushes ``value`` onto the
list at ``path``, ``["t", path, [keep, text]]`` keeps the first ``keep`` UTF-16 code units of
the string at ``path`` (JavaScript's string length unit) and appends ``text``, and
``["m", path, n]`` moves the first ``n`` code units of the text block at ``path``'s ``tail``
onto its ``html`` list (a streamed block that finished as it was last shown). A path is a
list of dict keys and list indexes. :func:`apply_ops` is the reference semantics (the front end
implements the same); this module must stay pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, TypeAlias

Path: TypeAlias = list[str | int]
Op: TypeAlias = list[Any]


class OpSink(Protocol):
    """Where the reducer writes its ops (an :class:`OpBuffer` the transport takes frames
    from, or an :class:`OpList` in tests). A sink never calls back into the reducer."""

    def set(self, path: Path, value: Any) -> None: ...

    def append(self, path: Path, text: str) -> None: ...

    def push(self, path: Path, value: Any) -> None: ...

    def splice(self, path: Path, keep: int, text: str) -> None: ...

    def move(self, path: Path, units: int) -> None: ...

    def take(self) -> list[Op]:
        """The ops written since the last ``take`` (the sink forgets them)."""
        ...


def copy_value(value: Any) -> Any:
    """A structural copy of a state value (dicts and lists), for an op: later changes to the
    state must not leak into an op still waiting to be sent."""
    if isinstance(value, dict):
        return {k: copy_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_value(v) for v in value]
    return value


def utf16_len(text: str) -> int:
    """The length of ``text`` in UTF-16 code units (what JavaScript's ``length`` counts)."""
    return len(text.encode("utf-16-le")) // 2


def utf16_prefix(text: str, units: int) -> str:
    """The first ``units`` UTF-16 code units of ``text``."""
    return text.encode("utf-16-le")[: 2 * units].decode("utf-16-le")


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

    def splice(self, path: Path, keep: int, text: str) -> None:
        self.ops.append(["t", list(path), [keep, text]])

    def move(self, path: Path, units: int) -> None:
        self.ops.append(["m", list(path), units])

    def take(self) -> list[Op]:
        ops, self.ops = self.ops, []
        return ops


class OpBuffer:
    """The :class:`OpSink` of a live panel: ops wait here until the transport takes the next
    frame's; consecutive appends to one path coalesce into one op (the per-token path: a
    streamed tool-call argument costs a string concatenation, not an op)."""

    __slots__ = ("pending",)

    def __init__(self) -> None:
        self.pending: list[Op] = []

    def set(self, path: Path, value: Any) -> None:
        self.pending.append(["s", path, value])

    def push(self, path: Path, value: Any) -> None:
        self.pending.append(["p", path, value])

    def splice(self, path: Path, keep: int, text: str) -> None:
        self.pending.append(["t", path, [keep, text]])

    def move(self, path: Path, units: int) -> None:
        self.pending.append(["m", path, units])

    def append(self, path: Path, text: str) -> None:
        pending = self.pending
        if pending:
            last = pending[-1]
            if last[0] == "a" and (last[1] is path or last[1] == path):
                last[2] += text
                return
        pending.append(["a", path, text])

    def take(self) -> list[Op]:
        ops, self.pending = self.pending, []
        return ops


def _parent(state: Any, path: Path) -> Any:
    target = state
    for key in path[:-1]:
        target = target[key]
    return target


def apply_op(state: dict[str, Any], op: Op) -> None:
    kind, path, value = op
    if not path:
        raise ValueError("an op needs a non-empty path")
    if kind == "m":
        block = _parent(state, [*path, "tail"])
        moved = utf16_prefix(block["tail"], value)
        block["html"].append(moved)
        block["tail"] = block["tail"][len(moved) :]
        return
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
    elif kind == "t":
        keep, text = value
        parent[key] = utf16_prefix(parent[key], keep) + text
    else:
        raise ValueError(f"unknown op kind {kind!r}")


def apply_ops(state: dict[str, Any], ops: Iterable[Op]) -> dict[str, Any]:
    for op in ops:
        apply_op(state, op)
    return state


__all__ = [
    "Op",
    "OpBuffer",
    "OpList",
    "OpSink",
    "Path",
    "apply_op",
    "apply_ops",
    "copy_value",
    "utf16_len",
    "utf16_prefix",
]
