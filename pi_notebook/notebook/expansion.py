"""``{name}`` / ``{expr}`` in a prompt, expanded from the notebook namespace, each exactly once.

The rule is IPython's for shell commands (``FullEvalFormatter``): ``{expr}`` is evaluated in
(a copy of) the namespace, ``{expr!r}`` takes its repr, ``{{`` and ``}}`` are literal braces, a
``:`` inside the braces is part of the expression (slicing), ``$name`` is left alone. Unlike a
formatter that gives up silently, a field that cannot be evaluated stops the expansion with an
:class:`ExpansionError` naming it: the prompt is never sent half-expanded or unexpanded, and
no expression is evaluated twice.

Besides the namespace (``{In[n]}``, ``{Out[n]}`` are IPython's own lists), the prompt may use
``{Err}``, the last error of the notebook as text (its whole traceback, redacted, cut to 20,000
characters), and ``{Err[n]}``, cell ``n``'s error (:class:`ErrorText`). A variable of the
notebook named ``Err`` wins.

This module must never print, and never write to the namespace it reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from string import Formatter
from typing import Any

from ..ai import redact
from ..tools import CellLog, cell_log

_FORMATTER = Formatter()


class ErrorText:
    """``{Err}``: the notebook's last error as text; ``{Err[n]}``: cell ``n``'s. Read when the
    prompt is expanded; an error when there is none (nothing is sent)."""

    def __init__(self, log: CellLog | None = None) -> None:
        self._log = log

    @property
    def log(self) -> CellLog:
        return self._log or cell_log()

    def text(self) -> str:
        error = self.log.last()
        if error is None:
            raise LookupError("no cell has raised an error in this kernel")
        return redact(error.full)

    def __getitem__(self, cell: int) -> str:
        error = self.log.error_of(cell)
        if error is None:
            raise LookupError(f"cell {cell} raised no error (or it is no longer kept)")
        return redact(error.full)

    def __format__(self, spec: str) -> str:
        return format(self.text(), spec)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        try:
            return repr(self.text())
        except LookupError:
            return "<no error yet>"


PROMPT_NAMES: dict[str, Any] = {"Err": ErrorText()}
"""Names a prompt may use besides the notebook's own."""


class ExpansionError(ValueError):
    """A ``{expr}`` that failed (its text and the exception, on one line)."""


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def expand(
    text: str, namespace: Mapping[str, Any], extra: Mapping[str, Any] = PROMPT_NAMES
) -> str:
    """``text`` with every ``{expr}`` replaced by its value; raises :class:`ExpansionError`.
    ``extra`` names (``Err``) are there unless the namespace has its own."""
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
            scope = {**extra, **namespace}
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


__all__ = ["PROMPT_NAMES", "ErrorText", "ExpansionError", "expand"]
