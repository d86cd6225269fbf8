"""The HTML of a rich display (a DataFrame's table), made safe for the panel and the transcript.

A ``run_python`` call that displays a DataFrame is shown its HTML in the tool card, as the
notebook would show it. That HTML is whatever the object's ``_repr_html_`` wrote, so it goes
through ``nh3`` (the ammonia sanitiser: it parses as a browser does and writes balanced,
escaped HTML) with an allow-list: tables and the text markup a repr uses, with a few attributes
whose values are checked (``colspan``/``rowspan`` as numbers, ``align`` as a word). Everything
else is dropped: ``script``, ``style``, frames, forms, SVG and MathML with their content; other
tags keep only their text; comments, event handlers, links, images, ``style`` and ``class``
attributes go (so a display cannot load anything, run anything, or dress itself as the panel).
The front end inserts the result as the kernel's Markdown HTML is inserted; an untrusted
notebook's sanitiser then sees only this.

It must stay pure and never raise.
"""

from __future__ import annotations

from html import escape

import nh3

from ...ai import redact
from ...tools import display_note
from .markdown import render_markdown

#: Elements kept (their attributes filtered).
TAGS = frozenset(
    (
        *("table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "colgroup", "col"),
        *("div", "span", "p", "br", "hr", "pre", "code", "blockquote"),
        *("b", "i", "em", "strong", "small", "sub", "sup", "s", "u", "kbd", "samp", "var"),
        *("ul", "ol", "li", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6"),
        *("abbr", "details", "summary"),
    )
)
#: Elements dropped with everything inside them.
DROPPED = frozenset(
    (
        *("script", "style", "template", "noscript", "iframe", "frame", "frameset"),
        *("object", "embed", "applet", "svg", "math", "textarea", "select", "title", "head"),
        *("button", "form", "audio", "video", "canvas", "xmp", "plaintext", "noembed"),
    )
)
_NUMBER_ATTRS = frozenset(("colspan", "rowspan", "span", "start", "border"))
_WORD_ATTRS = {
    "align": frozenset(("left", "right", "center", "justify", "char")),
    "valign": frozenset(("top", "middle", "bottom", "baseline")),
    "scope": frozenset(("row", "col", "rowgroup", "colgroup")),
}
_TEXT_ATTRS = frozenset(("title",))
MAX_HTML_CHARS = 200_000
"""At most this much of one display's HTML is read (the rest is cut with a note)."""
MOST_DISPLAYS = 8
"""A card shows at most this many rich displays."""


def _attribute(_element: str, name: str, value: str) -> str | None:
    """An allowed attribute's value as kept (``None``: dropped)."""
    value = value.strip()
    if name in _NUMBER_ATTRS:
        return value if value.isdigit() and len(value) <= 4 else None
    if name in _WORD_ATTRS:
        return value.lower() if value.lower() in _WORD_ATTRS[name] else None
    return value[:200] or None  # title


def sanitize_html(html: str) -> str:
    """``html`` rebuilt from its allowed parts (see the module docstring); never raises."""
    cut = len(html) > MAX_HTML_CHARS
    try:
        text = nh3.clean(
            html[:MAX_HTML_CHARS],
            tags=set(TAGS),
            clean_content_tags=set(DROPPED),
            attributes={"*": set(_NUMBER_ATTRS | _WORD_ATTRS.keys() | _TEXT_ATTRS)},
            attribute_filter=_attribute,
            strip_comments=True,
            link_rel=None,
            url_schemes=set(),
        )
    except Exception:  # anything odd reads as escaped text
        text = f"<pre>{escape(html[:MAX_HTML_CHARS], quote=False)}</pre>"
    if cut:
        text += f"<p>[… {len(html) - MAX_HTML_CHARS} more characters of HTML not shown]</p>"
    return text


def display_html(bundle: object) -> str | None:
    """One display's HTML for the card, redacted and sanitised: its ``text/html``, else its
    ``text/markdown`` rendered; ``None`` for a display with only text (the card's text has
    it)."""
    if not isinstance(bundle, dict):
        return None
    html = bundle.get("text/html")
    if isinstance(html, str) and html.strip():
        return sanitize_html(redact(html))
    markdown = bundle.get("text/markdown")
    if isinstance(markdown, str) and markdown.strip():
        return render_markdown(redact(markdown[:MAX_HTML_CHARS]))
    return None


def without_shown_notes(text: str, details: object) -> str:
    """A tool result's (redacted) text without the ``displayed:`` note of each display its card
    shows as HTML: the model reads a DataFrame's text form, the card shows its table once."""
    shown = details.get("displays") if isinstance(details, dict) else None
    if not isinstance(shown, list):
        return text
    for bundle in shown:
        if display_html(bundle) is None:
            continue  # a display with only text: the card's text is where it shows
        note = display_note(bundle)
        if note is None:
            continue
        note = redact(note)
        if text.startswith(note):
            text = text[len(note) :].lstrip("\n")
        else:
            text = text.replace("\n" + note, "", 1)
    return text


def displays_html(details: object) -> list[str]:
    """The rich displays of a tool result's details (``details["displays"]``), for its card."""
    shown = details.get("displays") if isinstance(details, dict) else None
    if not isinstance(shown, list):
        return []
    kept = [html for bundle in shown if (html := display_html(bundle)) is not None]
    if len(kept) > MOST_DISPLAYS:
        more = len(kept) - MOST_DISPLAYS
        kept = [*kept[:MOST_DISPLAYS], f"<p>[{more} more displays not shown]</p>"]
    return kept


__all__ = [
    "MAX_HTML_CHARS",
    "MOST_DISPLAYS",
    "display_html",
    "displays_html",
    "sanitize_html",
    "without_shown_notes",
]
