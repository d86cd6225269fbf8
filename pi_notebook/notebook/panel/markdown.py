"""Markdown -> sanitised HTML, for the live panel and the static transcript (markdown-it-py).

CommonMark with GFM tables, strikethrough, task lists and autolinks (markdown-it-py and
mdit-py-plugins), math in ``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]`` and amsmath
environments as MathML (:mod:`.math`; a formula that does not convert stays readable source,
and ``$5 and $10`` stays text), fenced code highlighted by Pygments (:mod:`.highlight`).

Safety comes from the parser, not from filtering its output: raw HTML is off, so markdown-it
escapes every character of the input except the markup written by its rules and the ones here.
A link (or autolink) is made only for ``http``, ``https`` and ``mailto`` URLs (markdown-it
decodes entities before the check, so ``javascript&#58;`` is caught) and opens in a new tab
without an opener or referrer. Images are never loaded (a remote image is a tracking and
exfiltration channel): one becomes a link carrying its alt text.

:func:`render_blocks` returns the HTML of each top-level block, so a streamed answer can be
shown block by block (:mod:`.blocks`); their concatenation is :func:`render_markdown`.
This module must stay pure: no I/O, no widgets, no event loop.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
from markdown_it.renderer import RendererProtocol
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.amsmath import amsmath_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.gfm_autolink import gfm_autolink_plugin
from mdit_py_plugins.texmath import texmath_plugin
from mdit_py_plugins.texmath.index import make_inline_func

from .highlight import highlight
from .math import to_mathml

_SAFE_URL = re.compile(r"^(?:https?://|mailto:)", re.IGNORECASE)
_NEW_TAB = ' target="_blank" rel="noopener noreferrer"'
#: Opening and closing delimiters of a formula, by the markup its token carries.
_DELIMITERS = {"$": ("$", "$"), "$$": ("$$", "$$"), "\\(": ("\\(", "\\)"), "\\[": ("\\[", "\\]")}
_DISPLAY_TYPES = frozenset(
    ("math_block", "math_block_label", "math_block_eqno", "math_inline_double", "amsmath")
)


def escape_html(text: str) -> str:
    return html.escape(text, quote=True)


class _Markdown(MarkdownIt):
    """markdown-it whose links (and autolinks) accept only http, https and mailto URLs."""

    def validateLink(self, url: str) -> bool:
        return _SAFE_URL.match(url.strip()) is not None


def _render_link_open(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    href = tokens[idx].attrGet("href") or ""
    title = tokens[idx].attrGet("title")
    extra = f' title="{escape_html(str(title))}"' if title else ""
    return f'<a href="{escape_html(str(href))}"{extra}{_NEW_TAB}>'


def _render_image(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = "".join(child.content for child in token.children or [])
    label = escape_html(f"[image: {alt}]" if alt else "[image]")
    return (
        f'<a class="pi-remote-image" href="{escape_html(src)}" '
        f'title="remote image, not loaded"{_NEW_TAB}>{label}</a>'
    )


def _render_fence(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    info = unescapeAll(token.info).strip()
    language = info.split(maxsplit=1)[0] if info else ""
    body = highlight(token.content, language)
    lang = f' data-lang="{escape_html(language)}"' if language else ""
    return f'<pre class="pi-code"{lang}><code>{body}</code></pre>\n'


def _render_code_block(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return f'<pre class="pi-code"><code>{html.escape(tokens[idx].content, False)}</code></pre>\n'


def _render_math(
    self: RendererProtocol, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    display = token.type in _DISPLAY_TYPES
    tag = "div" if token.block else "span"
    cls = "pi-math pi-math-display" if display else "pi-math"
    mathml = to_mathml(token.content, display)
    opening, closing = _DELIMITERS.get(token.markup, ("", ""))
    source = html.escape(f"{opening}{token.content}{closing}", False)
    if mathml is None:  # readable source, never an error
        return f'<{tag} class="{cls} pi-math-source"><code>{source}</code></{tag}>'
    # Where the panel's stylesheet is dropped (a notebook someone else saved opens untrusted,
    # and Jupyter's sanitizer strips <style> and every MathML tag but keeps their text), the
    # formula would read as bare glyphs ("σ2"). So the MathML sits in a span hidden by an inline
    # style the sanitizer keeps, which the stylesheet overrides, next to its source, which the
    # stylesheet hides: styled, the MathML shows; sanitized, the source does.
    return (
        f'<{tag} class="{cls}"><span class="pi-mathml" style="display: none">{mathml}</span>'
        f'<code class="pi-math-alt">{source}</code></{tag}>' + ("\n" if token.block else "")
    )


def _parser(breaks: bool = False) -> MarkdownIt:
    options = {"html": False, "xhtmlOut": False, "tasklists": True, "breaks": breaks}
    md = _Markdown("commonmark", options)
    md.enable(["table", "strikethrough"])
    md.use(gfm_autolink_plugin)
    # $…$ only when it cannot be money: no space inside the dollars, no digit after the
    # closing one ("$5 and $10" stays text); $$…$$ also inside a paragraph.
    md.use(
        dollarmath_plugin,
        allow_labels=False,
        allow_space=False,
        allow_digits=False,
        allow_blank_lines=False,
        double_inline=True,
    )
    md.use(texmath_plugin, delimiters="brackets")  # \(…\) inline, \[…\] on its own lines
    # \[…\] inside a paragraph (models often write it on the line after the text).
    md.inline.ruler.before(
        "escape",
        "math_inline_brackets",
        make_inline_func(
            {
                "name": "math_inline_double",
                "rex": re.compile(r"^\\\[(.+?)\\\]", re.DOTALL),
                "tmpl": "{0}",
                "tag": "\\[",
            }
        ),
    )
    md.use(amsmath_plugin)
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("image", _render_image)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("code_block", _render_code_block)
    for kind in ("math_inline", *_DISPLAY_TYPES):
        md.add_render_rule(kind, _render_math)
    return md


MARKDOWN = _parser()
PROMPT_MARKDOWN = _parser(breaks=True)
"""For a prompt: its line breaks are kept (a prompt is typed, or expanded from ``{In[3]}``, line
by line; joined, expanded code would run into the sentence)."""


@dataclass(frozen=True, slots=True)
class Block:
    """One top-level block: its lines ``[line, end)`` (None where the parser did not say),
    the type of its first token and its HTML."""

    line: int | None
    end: int | None
    kind: str
    html: str


def render_blocks(text: str, env: dict[str, Any] | None = None) -> list[Block]:
    """The top-level blocks of ``text``, each as sanitised HTML (``env`` keeps references)."""
    env = {} if env is None else env
    tokens = MARKDOWN.parse(text, env)
    blocks: list[Block] = []
    i = 0
    while i < len(tokens):
        first = tokens[i]
        j = i + 1
        if first.nesting == 1:
            depth = 1
            while j < len(tokens) and depth:
                depth += tokens[j].nesting
                j += 1
        rendered = MARKDOWN.renderer.render(tokens[i:j], MARKDOWN.options, env)
        line, end = first.map if first.map else (None, None)
        blocks.append(Block(line, end, first.type, rendered))
        i = j
    return blocks


def render_markdown(text: str) -> str:
    """Sanitised HTML for the Markdown ``text``."""
    html_text: str = MARKDOWN.render(text)
    return html_text


def render_prompt(text: str) -> str:
    """Sanitised HTML for a user's prompt: Markdown whose line breaks are kept (``<br>``)."""
    html_text: str = PROMPT_MARKDOWN.render(text)
    return html_text


__all__ = [
    "MARKDOWN",
    "PROMPT_MARKDOWN",
    "Block",
    "escape_html",
    "render_blocks",
    "render_markdown",
    "render_prompt",
]
