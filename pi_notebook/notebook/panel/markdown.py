"""A small Markdown renderer that is safe by construction (the Python twin of js/markdown.js).

Every character of the input is HTML-escaped first; only then are a few formatting forms
turned into tags this module writes itself: paragraphs and line breaks, headings, lists,
block quotes, fenced and inline code, bold, italic and links. A link's URL must start with
``http://``, ``https://`` or ``mailto:`` or the link stays text. So no input can produce a
script, an event-handler attribute or a ``javascript:`` URL. It must stay pure.
"""

from __future__ import annotations

import re

_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}
_ESCAPE_RE = re.compile(r"[&<>\"']")
_SAFE_URL = re.compile(r"^(https?://|mailto:)", re.IGNORECASE)
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^()\s]+)\)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_ITALIC_UNDERSCORE = re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_ORDERED = re.compile(r"^\s*\d{1,9}[.)]\s+(.*)$")


def escape_html(text: str) -> str:
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group(0)], text)


def _link(match: re.Match[str]) -> str:
    label, url = match.group(1), match.group(2)
    if not _SAFE_URL.match(url):
        return match.group(0)
    return f'<a href="{url}" target="_blank" rel="noopener noreferrer">{label}</a>'


def _inline_text(text: str) -> str:
    """Formatting for already-escaped text without code spans."""
    text = _LINK.sub(_link, text)
    text = _BOLD.sub(r"<strong>\1</strong>", text)
    text = _ITALIC.sub(r"<em>\1</em>", text)
    return _ITALIC_UNDERSCORE.sub(r"<em>\1</em>", text)


def render_inline(raw: str) -> str:
    pieces = escape_html(raw).split("`")
    out: list[str] = []
    for i, piece in enumerate(pieces):
        if i % 2 == 1 and i < len(pieces) - 1:
            out.append(f"<code>{piece}</code>")
        elif i % 2 == 1:  # after an unmatched backtick
            out.append("`" + _inline_text(piece))
        else:
            out.append(_inline_text(piece))
    return "".join(out)


def render_markdown(text: str) -> str:
    """Sanitised HTML for the Markdown ``text``."""
    lines = text.replace("\r\n", "\n").split("\n")
    html: list[str] = []
    paragraph: list[str] = []
    list_kind: str | None = None
    i = 0

    def close_paragraph() -> None:
        if paragraph:
            html.append("<p>" + "<br>".join(render_inline(p) for p in paragraph) + "</p>")
            paragraph.clear()

    def close_list() -> None:
        nonlocal list_kind
        if list_kind is not None:
            html.append(f"</{list_kind}>")
            list_kind = None

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):
            close_paragraph()
            close_list()
            body: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i])
                i += 1
            html.append("<pre><code>" + escape_html("\n".join(body)) + "</code></pre>")
            i += 1
            continue
        heading = _HEADING.match(line)
        bullet = _BULLET.match(line)
        ordered = _ORDERED.match(line)
        if not stripped:
            close_paragraph()
            close_list()
        elif heading:
            close_paragraph()
            close_list()
            level = len(heading.group(1))
            html.append(f"<h{level}>{render_inline(heading.group(2))}</h{level}>")
        elif bullet or ordered:
            close_paragraph()
            kind = "ul" if bullet else "ol"
            if list_kind != kind:
                close_list()
                html.append(f"<{kind}>")
                list_kind = kind
            item = (bullet or ordered).group(1)  # type: ignore[union-attr]
            html.append(f"<li>{render_inline(item)}</li>")
        elif stripped.startswith(">"):
            close_paragraph()
            close_list()
            html.append(f"<blockquote>{render_inline(stripped[1:].strip())}</blockquote>")
        else:
            close_list()
            paragraph.append(line)
        i += 1
    close_paragraph()
    close_list()
    return "".join(html)


__all__ = ["escape_html", "render_inline", "render_markdown"]
