"""The HTML of a rich display (a DataFrame's table), made safe for the panel and the transcript.

A ``run_python`` call that displays a DataFrame is shown its HTML in the tool card, as the
notebook would show it. That HTML is whatever the object's ``_repr_html_`` wrote, so it is
rebuilt, never passed through: the stdlib parser reads it, and only an allow-list comes out —
tables and the text markup a repr uses, with a few attributes whose values are checked
(``colspan``/``rowspan`` as numbers, ``align`` as a word), every text and attribute value
escaped again, each element closed. Everything else is dropped: ``script``, ``style``, frames,
forms, SVG and MathML with their content; other tags keep only their text; comments, event
handlers, links, images, ``style`` and ``class`` attributes go (so a display cannot load
anything, run anything, or dress itself as the panel). The front end inserts the result as the
kernel's Markdown HTML is inserted; an untrusted notebook's sanitiser then sees only this.

It must stay pure and never raise.
"""

from __future__ import annotations

from html import escape
from html.parser import HTMLParser

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
VOID = frozenset(("br", "hr", "col"))
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


def _attribute(name: str, value: str | None) -> str:
    value = "" if value is None else value.strip()
    if name in _NUMBER_ATTRS and value.isdigit() and len(value) <= 4:
        return f' {name}="{value}"'
    if name in _WORD_ATTRS and value.lower() in _WORD_ATTRS[name]:
        return f' {name}="{value.lower()}"'
    if name in _TEXT_ATTRS and value:
        return f' {name}="{escape(value[:200], quote=True)}"'
    return ""


class _Rebuilder(HTMLParser):
    """Writes the allowed parts of what it reads, escaped and balanced."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.open: list[str] = []
        self.dropping: list[str] = []
        """The dropped elements we are inside (their content is skipped)."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.dropping:
            if tag in DROPPED and tag not in VOID:
                self.dropping.append(tag)
            return
        if tag in DROPPED:
            self.dropping.append(tag)
            return
        if tag not in TAGS:
            return
        self.out.append(f"<{tag}{''.join(_attribute(n, v) for n, v in attrs)}>")
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.dropping or tag in DROPPED or tag not in TAGS:
            return
        self.out.append(f"<{tag}{''.join(_attribute(n, v) for n, v in attrs)}>")
        if tag not in VOID:
            self.out.append(f"</{tag}>")

    def handle_endtag(self, tag: str) -> None:
        if self.dropping:
            if tag == self.dropping[-1]:
                self.dropping.pop()
            return
        if tag not in self.open:
            return
        while self.open:
            last = self.open.pop()
            self.out.append(f"</{last}>")
            if last == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self.dropping:
            self.out.append(escape(data, quote=False))

    def result(self) -> str:
        self.close()
        return "".join(self.out) + "".join(f"</{tag}>" for tag in reversed(self.open))


def sanitize_html(html: str) -> str:
    """``html`` rebuilt from its allowed parts (see the module docstring); never raises."""
    cut = len(html) > MAX_HTML_CHARS
    rebuilder = _Rebuilder()
    try:
        rebuilder.feed(html[:MAX_HTML_CHARS])
        text = rebuilder.result()
    except Exception:  # the parser is lenient; anything odd reads as escaped text
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
