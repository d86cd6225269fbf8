"""LaTeX -> MathML for the panel's Markdown, offline, with latex2mathml.

:func:`to_mathml` converts one formula with latex2mathml's element tree and writes it out
itself, keeping only MathML presentation elements and plain attributes from a whitelist: the
converter passes ``\\href`` through as an ``href`` attribute and its string output un-escapes
``\\text{<b>}`` into raw markup, so neither its string form nor an unchecked tree is safe in a
page. A formula it cannot convert (or that needs anything outside the whitelist) gives None, and
the caller shows the source. It must stay pure and never raise on any input.
"""

from __future__ import annotations

import html
import re
from xml.etree.ElementTree import Element

from latex2mathml.converter import convert_to_element

#: MathML presentation elements (MathML Core plus mfenced/menclose, which latex2mathml writes).
ELEMENTS = frozenset(
    (
        "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "mfrac", "msqrt", "mroot",
        "mstyle", "merror", "mpadded", "mphantom", "menclose", "mfenced", "msub", "msup",
        "msubsup", "munder", "mover", "munderover", "mmultiscripts", "mprescripts", "none",
        "mtable", "mtr", "mtd", "mlabeledtr", "semantics", "annotation",
    )
)  # fmt: skip
#: Attributes that only change layout (no URLs, no styles, no handlers).
ATTRIBUTES = frozenset(
    (
        "display", "displaystyle", "scriptlevel", "mathvariant", "mathsize", "mathcolor",
        "mathbackground", "stretchy", "fence", "form", "separator", "separators", "lspace",
        "rspace", "minsize", "maxsize", "largeop", "movablelimits", "symmetric", "accent",
        "accentunder", "linethickness", "numalign", "denomalign", "bevelled", "notation",
        "columnalign", "rowalign", "columnspacing", "rowspacing", "columnlines", "rowlines",
        "frame", "framespacing", "equalrows", "equalcolumns", "width", "height", "depth",
        "voffset", "columnspan", "rowspan", "open", "close", "encoding",
    )
)  # fmt: skip
_VALUE = re.compile(r"^[A-Za-z0-9 .#%+,\-]*$")
#: Longest formula converted (a longer one is shown as source).
MAX_LATEX = 10_000


class _Unsafe(Exception):
    """The converted tree holds something outside the whitelist."""


def _text(value: str | None) -> str:
    # latex2mathml keeps character references ("&#x0002B;") in the tree's text.
    return html.escape(html.unescape(value), quote=False) if value else ""


def _write(element: Element, out: list[str]) -> None:
    tag = element.tag
    if tag not in ELEMENTS:
        raise _Unsafe(tag)
    attrs = []
    for name, value in element.attrib.items():
        if name == "xmlns":
            continue
        if name not in ATTRIBUTES or not _VALUE.match(value):
            raise _Unsafe(name)
        attrs.append(f' {name}="{value}"')
    out.append(f"<{tag}{''.join(attrs)}>")
    out.append(_text(element.text))
    for child in element:
        _write(child, out)
        out.append(_text(child.tail))
    out.append(f"</{tag}>")


def to_mathml(latex: str, display: bool) -> str | None:
    """``<math>`` for ``latex`` (block layout when ``display``), or None if it cannot be."""
    if not latex.strip() or len(latex) > MAX_LATEX:
        return None
    try:
        root = convert_to_element(latex, display="block" if display else "inline")
        out: list[str] = []
        _write(root, out)
    except Exception:  # the converter's errors are many and undocumented: show the source
        return None
    return "".join(out)


__all__ = ["ATTRIBUTES", "ELEMENTS", "to_mathml"]
