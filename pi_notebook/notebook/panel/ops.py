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
    """Where the reducer writes its ops (the transport, or a list in tests)."""

    def set(self, path: Path, value: Any) -> None: ...

    def append(self, path: Path, text: str) -> None: ...

    def push(self, path: Path, value: Any) -> None: ...

    def splice(self, path: Path, keep: int, text: str) -> None: ...

    def move(self, path: Path, units: int) -> None: ...

    def touch(self) -> None:
        """There is streamed text to render: the sink may call back (its ``before_flush``)."""


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

    def touch(self) -> None:
        pass


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
    "OpList",
    "OpSink",
    "Path",
    "apply_op",
    "apply_ops",
    "utf16_len",
    "utf16_prefix",
]
