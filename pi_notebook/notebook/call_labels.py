"""Labels that tell same-named tool calls apart: ``read_station (north)``, ``read_station #2``.

Three calls of one tool in a message look identical by name in the step bar, the cards and the
tree. A call that shares its name with another call of its message is labelled by the first
argument whose short value differs between every call of that name (a string, number or bool of
at most :data:`MAX_VALUE` characters), else by its ordinal among them. A call whose name is
unique keeps its name. Pure: the reducer and the step narrator both use it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: Longest argument value used as a label (longer values are not a readable label).
MAX_VALUE = 24


def _short(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        text = str(value).strip()
        if text and len(text) <= MAX_VALUE and "\n" not in text:
            return text
    return None


def _distinguishing(arguments: list[Mapping[str, Any]]) -> list[str] | None:
    """The values of the first argument that is short and different in every call, or None."""
    keys: list[str] = []
    for args in arguments:
        keys.extend(k for k in args if k not in keys)
    for key in keys:
        values = [_short(args.get(key)) if key in args else None for args in arguments]
        if all(v is not None for v in values) and len(set(values)) == len(values):
            return [str(v) for v in values]
    return None


def call_labels(calls: Sequence[tuple[str, str, Any]]) -> dict[str, str]:
    """``(id, name, arguments)`` of one message's calls -> id -> label (see the module)."""
    by_name: dict[str, list[tuple[str, Any]]] = {}
    for call_id, name, arguments in calls:
        by_name.setdefault(name, []).append((call_id, arguments))
    labels: dict[str, str] = {}
    for name, group in by_name.items():
        if len(group) == 1:
            labels[group[0][0]] = name
            continue
        arguments = [args if isinstance(args, Mapping) else {} for _, args in group]
        values = _distinguishing(arguments)
        for n, (call_id, _) in enumerate(group, start=1):
            labels[call_id] = f"{name} ({values[n - 1]})" if values else f"{name} #{n}"
    return labels


__all__ = ["MAX_VALUE", "call_labels"]
