"""What may go into the offered code cell's comments, and what redaction changed in its code.

The cell offered below a ``%%agent`` cell (:mod:`.code_cell`) is the code that ran plus
comments. A comment is safe only while it stays one line: Python ends a comment at ``\\n`` and
``\\r``, and editors (CodeMirror, Monaco) also break lines at ``\\x0b``, ``\\x0c``,
``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028`` and ``\\u2029``. A model or a provider chooses tool
call ids, expressions and namespace names; text from them that broke a comment's line would put
code into the cell that never ran. So:

- :func:`one_line` says whether a text can go into a comment: printable (``str.isprintable``
  is false for every line break above and every other control character), short, one line;
- :func:`tool_label` is a comment's name for a tool call: the tool's name when it is a plain
  name, and the call's number in the run, never the provider's tool-call id;
- :func:`names_text` lists names that are identifiers (others are counted, never echoed);
- :func:`redacted_names` says which variables a redaction changed the value of, so the comment
  can name them (running the cell gives them the marker text, not the agent's value).

This module never evaluates code; it parses it with :mod:`ast` only.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

COMMENT_CHARS = 100
"""Model text longer than this is not echoed in a comment."""
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def one_line(text: str, limit: int = COMMENT_CHARS) -> bool:
    """``text`` can be echoed in a ``#`` comment: one printable line of at most ``limit``."""
    return 0 < len(text) <= limit and text.isprintable() and len(text.splitlines()) == 1


def tool_label(tool: str, number: int | None) -> str:
    """``run_python (call 2)``: the tool's name when it is a plain name, and the call's
    number in its run (``None``: no number)."""
    name = tool if _TOOL_NAME.fullmatch(tool) else "a tool"
    return name if number is None else f"{name} (call {number})"


def names_text(names: Iterable[str]) -> str:
    """``a, b and 2 other names``: the identifiers among ``names`` (sorted), the rest counted."""
    shown = sorted(name for name in set(names) if name.isidentifier())
    others = len(set(names)) - len(shown)
    if others:
        shown.append(f"{others} other name{'' if others == 1 else 's'}")
    if len(shown) <= 1:
        return "".join(shown)
    return f"{', '.join(shown[:-1])} and {shown[-1]}"


def _bound(node: ast.AST) -> set[str]:
    """The names a statement binds (assignments, imports, definitions, loop targets)."""
    names: set[str] = set()
    for item in ast.walk(node):
        if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Store):
            names.add(item.id)
        elif isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(item.name)
        elif isinstance(item, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in item.names)
    return names


def parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def redacted_names(original: str, redacted: str, writes: Iterable[str]) -> list[str]:
    """The variables whose values differ when ``redacted`` runs instead of ``original``.

    The top-level statements that redaction changed, and the names they bind; when that
    cannot be told (no such binding, or the code does not parse statement by statement),
    every name the call wrote (``writes``)."""
    try:
        before = ast.parse(original).body
        after = ast.parse(redacted).body
    except (SyntaxError, ValueError):
        return sorted(set(writes))
    if len(before) != len(after):
        return sorted(set(writes))
    changed: set[str] = set()
    for old, new in zip(before, after, strict=True):
        if ast.dump(old) != ast.dump(new):
            bound = _bound(new)
            if not bound:  # a call or an attribute store: what it reaches is not said
                return sorted(set(writes))
            changed |= bound
    return sorted(changed)


__all__ = ["COMMENT_CHARS", "names_text", "one_line", "parses", "redacted_names", "tool_label"]
