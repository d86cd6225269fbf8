"""Syntax highlighting of fenced code with Pygments, in classes that follow the notebook theme.

:func:`highlight` lexes with Pygments and writes each token as escaped text, wrapped in a
``<span>`` only for the token kinds JupyterLab's editor colours (keyword, string, number,
comment, ...), one short class each; runs of one kind share one span. The classes map to
JupyterLab's ``--jp-mirror-editor-*-color`` variables in ``js/panel.css``, so highlighted code
follows the light and dark themes, with JupyterLab's light colours as the fallback elsewhere.
(Pygments' ``HtmlFormatter`` writes a span for every token, whitespace and names included,
which roughly doubles the bytes of a code block.) It must stay pure and never raise.
"""

from __future__ import annotations

import functools
import html

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import (
    Comment,
    Error,
    Generic,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    _TokenType,
)
from pygments.util import ClassNotFound

#: Longest code highlighted (longer code is only escaped).
MAX_CODE = 200_000

#: Token kind -> CSS class (see ``.pi-code .<class>`` in js/panel.css). Unlisted kinds (names,
#: whitespace, plain text) get no span; a kind inherits its nearest listed parent's class.
CLASSES: dict[_TokenType, str] = {
    Keyword: "k",
    Operator.Word: "k",
    Operator: "o",
    Punctuation: "p",
    String: "s",
    String.Escape: "s2",
    String.Interpol: "s2",
    String.Regex: "s2",
    Number: "m",
    Comment: "c",
    Name.Builtin: "b",
    Name.Exception: "b",
    Name.Function: "d",
    Name.Class: "d",
    Name.Decorator: "t",
    Name.Tag: "g",
    Name.Attribute: "at",
    Generic.Heading: "h",
    Generic.Subheading: "h",
    Generic.Deleted: "e",
    Generic.Inserted: "m",
    Error: "e",
}


@functools.cache
def _class_of(kind: _TokenType) -> str | None:
    current: _TokenType | None = kind
    while current is not None:
        found = CLASSES.get(current)
        if found is not None:
            return found
        current = current.parent
    return None


@functools.lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer | None:
    try:
        lexer: Lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except (ClassNotFound, ValueError):
        return None
    return lexer


def language_known(language: str) -> bool:
    return bool(language) and _lexer(language.lower()) is not None


def highlight(code: str, language: str) -> str:
    """Escaped ``code`` with highlight spans (only escaped for an unknown ``language``)."""
    lexer = _lexer(language.lower()) if language else None
    if lexer is None or len(code) > MAX_CODE:
        return html.escape(code, quote=False)
    out: list[str] = []
    run: list[str] = []
    current: str | None = None

    def close() -> None:
        text = html.escape("".join(run), quote=False)
        out.append(f'<span class="{current}">{text}</span>' if current else text)
        run.clear()

    try:
        for kind, value in lexer.get_tokens(code):
            cls = _class_of(kind) if value.strip() else current  # spaces join any run
            if cls != current and run:
                close()
            current = cls
            run.append(value)
    except Exception:  # a lexer bug must not lose the code: show it plain
        return html.escape(code, quote=False)
    if run:
        close()
    return "".join(out)


__all__ = ["CLASSES", "MAX_CODE", "highlight", "language_known"]
