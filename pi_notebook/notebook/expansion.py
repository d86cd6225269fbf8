"""``{name}`` / ``{expr}`` in a prompt, expanded from the notebook namespace, each exactly once.

The rule is IPython's for shell commands (``FullEvalFormatter``): ``{expr}`` is evaluated in
(a copy of) the namespace, ``{expr!r}`` takes its repr, ``{{`` and ``}}`` are literal braces, a
``:`` inside the braces is part of the expression (slicing), ``$name`` is left alone. Unlike a
formatter that gives up silently, a field that cannot be evaluated stops the expansion with an
:class:`ExpansionError` naming it: the prompt is never sent half-expanded or unexpanded, and
no expression is evaluated twice.

This module must never print, and never write to the namespace it reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from string import Formatter
from typing import Any

_FORMATTER = Formatter()


class ExpansionError(ValueError):
    """A ``{expr}`` that failed (its text and the exception, on one line)."""


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def expand(text: str, namespace: Mapping[str, Any]) -> str:
    """``text`` with every ``{expr}`` replaced by its value; raises :class:`ExpansionError`."""
    if "{" not in text and "}" not in text:
        return text
    try:
        fields = list(_FORMATTER.parse(text))
    except ValueError as exc:
        raise ExpansionError(f"cannot expand the prompt: {exc} (write {{{{ or }}}})") from None
    scope: dict[str, Any] | None = None
    parts: list[str] = []
    for literal, field, spec, conversion in fields:
        parts.append(literal)
        if field is None:
            continue
        source = f"{field}:{spec}" if spec else field
        if scope is None:
            scope = dict(namespace)
        try:
            value = eval(source, scope)  # the user's own expression, as IPython evaluates it
            if conversion:
                value = _FORMATTER.convert_field(value, conversion)
            parts.append(format(value, ""))
        except Exception as exc:
            raise ExpansionError(
                f"cannot expand {{{source}}}: {_one_line(exc)} (write {{{{ for a literal brace)"
            ) from None
    return "".join(parts)


__all__ = ["ExpansionError", "expand"]
