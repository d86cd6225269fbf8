"""The kernel's Markdown renderer on a corpus of real answers, checked by structure.

Each answer of ``corpus.ANSWERS`` is rendered and parsed back (BeautifulSoup) to check what a
reader sees: table cells, nested lists with their start numbers, highlighted code, math as
MathML (not raw LaTeX), dollar amounts as text, links that open in a new tab, a remote image
never loaded. ``corpus.HOSTILE`` must come out inert: only whitelisted tags and attributes,
no handler, no URL but http(s)/mailto, no ``src`` at all.
"""

from __future__ import annotations

import base64
import random
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, Tag

from pi_notebook.notebook.panel.blocks import BlockStream
from pi_notebook.notebook.panel.markdown import render_blocks, render_markdown
from pi_notebook.notebook.panel.math import ATTRIBUTES, ELEMENTS, to_mathml

from .corpus import ANSWERS, HOSTILE

HTML_TAGS = {
    "p", "br", "strong", "em", "s", "code", "pre", "span", "div", "a", "ul", "ol", "li",
    "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "table", "thead", "tbody", "tr",
    "th", "td", "input",
}  # fmt: skip
HTML_ATTRIBUTES = {
    "href", "title", "target", "rel", "class", "style", "start", "data-lang", "type",
    "disabled", "checked",
}  # fmt: skip


def soup(markdown: str) -> BeautifulSoup:
    return BeautifulSoup(render_markdown(markdown), "html.parser")


def text_of(node: Tag) -> str:
    return " ".join(node.get_text(" ").split())


NONE: frozenset[str] = frozenset()


#: What the timeline's SVG (shown as an image: it runs nothing) may be built of.
SVG_TAGS = frozenset(("svg", "style", "title", "g", "rect", "line", "text"))
SVG_ATTRIBUTES = frozenset(
    ("xmlns", "role", "width", "height", "viewbox", "font-family", "font-size", "class", "x",
     "y", "x1", "y1", "x2", "y2", "rx", "text-anchor", "fill-opacity", "stroke-opacity",
     "stroke-dasharray", "stroke-width", "data-lane", "data-kind", "data-start", "data-end")
)  # fmt: skip


def audit_svg(svg: str) -> list[str]:
    """What in the timeline's SVG is not a plain drawing (a script, a link, a foreign object,
    an event handler, a load from elsewhere)."""
    problems = []
    for node in BeautifulSoup(svg, "html.parser").find_all(True):
        if node.name not in SVG_TAGS:
            problems.append(f"svg tag {node.name}")
        for name, value in node.attrs.items():
            if name not in SVG_ATTRIBUTES:
                problems.append(f"svg attribute {name}={value!r} on {node.name}")
        if node.name == "style" and ("url(" in node.get_text() or "@import" in node.get_text()):
            problems.append("svg style loads from elsewhere")
    return problems


def audit(html: str, tags: frozenset[str] = NONE, attrs: frozenset[str] = NONE) -> list[str]:
    """Everything in ``html`` that could run, load or restyle the page (``tags`` and ``attrs``
    are allowed besides the Markdown renderer's; a ``src`` must be a raster data URL)."""
    problems = []
    for node in BeautifulSoup(html, "html.parser").find_all(True):
        mathml = node.name == "math" or (
            node.name in ELEMENTS and node.find_parent("math") is not None
        )
        allowed_tags = ELEMENTS if mathml else HTML_TAGS | tags
        allowed_attrs = ATTRIBUTES if mathml else HTML_ATTRIBUTES | attrs
        if node.name not in allowed_tags:
            problems.append(f"tag {node.name}")
        for name, value in node.attrs.items():
            value = " ".join(value) if isinstance(value, list) else str(value)
            if name not in allowed_attrs or name.startswith("on"):
                problems.append(f"attribute {name}={value!r} on {node.name}")
            if name == "href" and not re.match(r"(https?://|mailto:)", value):
                problems.append(f"href {value!r}")
            timeline = node.name == "img" and node.get("class") == ["pi-timeline"]
            if timeline and name == "src" and value.startswith("data:image/svg+xml;base64,"):
                problems.extend(audit_svg(base64.b64decode(value.split(",", 1)[1]).decode()))
            elif name == "src" and not re.match(
                r"data:image/(png|jpeg|gif|webp);base64,", value
            ):
                problems.append(f"src {value!r}")
            hidden_mathml = node.get("class") == ["pi-mathml"] and value == "display: none"
            if name == "style" and not hidden_mathml and value not in (
                "text-align:left", "text-align:right", "text-align:center"
            ):  # fmt: skip
                problems.append(f"style {value!r}")
        if node.name == "input" and (
            node.get("type") != "checkbox" or "disabled" not in node.attrs
        ):
            problems.append("an enabled input")
    return problems


def test_a_pandas_style_table_keeps_its_cells_and_alignment() -> None:
    page = soup(ANSWERS["summary"])
    table = page.find("table")
    assert table is not None
    assert [text_of(th) for th in table.find_all("th")] == [
        "region", "orders", "revenue", "mean_ticket"
    ]  # fmt: skip
    rows = [[text_of(td) for td in tr.find_all("td")] for tr in table.tbody.find_all("tr")]
    assert rows[0] == ["North", "312", "48,210.50", "154.52"] and len(rows) == 4
    assert table.tbody.find("td", string="312")["style"] == "text-align:right"
    assert page.find("h2").get_text() == "Summary of sales.csv"
    assert page.find("s").get_text() == "three"


def test_nested_and_numbered_lists_keep_their_structure_and_start() -> None:
    page = soup(ANSWERS["summary"])
    steps = page.find("ol")
    assert steps["start"] == "3"
    items = steps.find_all("li", recursive=False)
    assert len(items) == 3 and text_of(items[2]) == "Grouped by region."
    inner = items[1].find("ul")
    assert inner is not None and len(inner.find_all("li", recursive=False)) == 2
    deepest = inner.find("ol")
    assert deepest is not None and "start" not in deepest.attrs
    assert [text_of(li) for li in deepest.find_all("li")][1].startswith("then the rest")


def test_code_fences_are_highlighted_with_their_language() -> None:
    page = soup(ANSWERS["summary"])
    python, sql = page.find_all("pre", class_="pi-code")
    assert python["data-lang"] == "python" and sql["data-lang"] == "sql"
    keywords = [s.get_text().strip() for s in python.find_all("span", class_="k")]
    assert "import" in keywords and "as" in keywords
    assert python.find("span", class_="s").get_text() == '"sales.csv"'
    assert python.find("span", class_="c").get_text().startswith("# the table above")
    assert {"SELECT", "FROM", "WHERE", "GROUP BY"} <= {
        s.get_text().strip() for s in sql.find_all("span", class_="k")
    }
    assert sql.find("span", class_="c").get_text().startswith("-- refunds")
    # The code reads exactly as written.
    assert python.get_text().startswith('import pandas as pd\n\ndf = pd.read_csv("sales.csv"')


def test_math_in_both_spellings_is_mathml_and_dollar_amounts_stay_text() -> None:
    page = soup(ANSWERS["math"])
    inline = page.select("span.pi-math:not(.pi-math-source) > .pi-mathml > math[display=inline]")
    display = page.select(".pi-math-display > .pi-mathml > math[display=block]")
    assert len(inline) == 2 and len(display) == 2
    assert inline[0].find("mfrac") is not None and inline[1].find("msqrt") is not None
    assert display[1].find("mo", string="∏") is not None
    text = page.get_text()
    assert "costs $5 and a bundle $10, so three tickets cost $15." in " ".join(text.split())
    # Each formula carries its source, for hosts that drop the stylesheet (which hides it).
    alts = page.select(".pi-math > code.pi-math-alt")
    assert len(alts) == 4
    assert alts[0].get_text().startswith("$s^2 = \\frac{1}{n-1}") and alts[0].get_text()[-1] == "$"
    assert alts[1].get_text() == "\\(\\sigma / \\sqrt{n}\\)"
    assert alts[2].get_text().startswith("$$") and alts[3].get_text().startswith("\\[")
    # Outside the one broken formula (and the sources the stylesheet hides), no LaTeX is left raw.
    source = page.select(".pi-math-source")
    assert [s.get_text() for s in source] == ["$\\frac{1}{$"]
    for node in source + alts:
        node.decompose()
    assert "\\" not in page.get_text()


def test_a_formula_reads_as_its_source_where_the_stylesheet_is_dropped() -> None:
    """Jupyter's sanitizer (an untrusted notebook) drops <style> and the MathML tags but keeps
    their text and plain inline styles: the MathML's span stays hidden, its source shows."""
    html = render_markdown("so $\\sigma^2$ and\n\n$$x_1$$")
    page = soup(html)
    for span in page.select(".pi-mathml"):
        assert span["style"] == "display: none"
        assert span.find("math") is not None
    assert [c.get_text() for c in page.select("code.pi-math-alt")] == ["$\\sigma^2$", "$$x_1$$"]
    css = (Path(__file__).parents[2] / "js" / "panel.css").read_text()
    assert ".pi-math > .pi-mathml { display: inline !important; }" in css
    assert ".pi-math-display > .pi-mathml { display: block !important; }" in css
    assert ".pi-math > .pi-math-alt { display: none; }" in css


def test_formulas_that_do_not_convert_stay_readable_source() -> None:
    for latex in ("\\frac{", "\\href{javascript:alert(1)}{x}", "x" * 20_000):
        assert to_mathml(latex, display=False) is None
    html = render_markdown("see $\\frac{$ here")
    assert "<code>$\\frac{$</code>" in html and "<math" not in html


def test_links_open_in_a_new_tab_and_images_are_never_loaded() -> None:
    page = soup(ANSWERS["links"])
    links = {a.get_text(): a for a in page.find_all("a")}
    assert links["pandas docs"]["href"] == "https://pandas.pydata.org/docs/"
    assert links["Wikipedia"]["href"] == "https://en.wikipedia.org/wiki/Variance_(statistics)"
    assert links["mailto:team@example.com"]["href"] == "mailto:team@example.com"
    assert links["https://example.org/path?q=1&r=2"]["href"] == "https://example.org/path?q=1&r=2"
    for a in page.find_all("a"):
        assert a["target"] == "_blank" and a["rel"] == ["noopener", "noreferrer"]
    # Issue 14: emphasis is never applied inside a link's URL.
    underscored = links["a"]
    assert underscored["href"] == "http://x.example/_z_/file_name_.txt"
    assert page.find("em") is None
    image = links["[image: Revenue by region]"]
    assert image["href"] == "https://tracker.example/pixel.png?user=42"
    assert "pi-remote-image" in image["class"]
    assert page.find("img") is None and not page.find_all(src=True)


def test_blockquotes_escapes_entities_task_lists_and_rules() -> None:
    page = soup(ANSWERS["links"])
    quote = page.find("blockquote")
    assert text_of(quote) == "Note: the numbers are preliminary ."
    assert quote.find("strong").get_text() == "preliminary"
    text = " ".join(page.get_text().split())
    assert "*not italic*, 2 < 3, © 2024, &, <tag>, a_b_c." in text
    boxes = page.select("li.task-list-item input[type=checkbox]")
    assert [b.has_attr("checked") for b in boxes] == [True, False]
    assert all(b.has_attr("disabled") for b in boxes)
    assert page.find("hr") is not None


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_real_answers_render_only_whitelisted_markup(name: str) -> None:
    assert audit(render_markdown(ANSWERS[name])) == []


@pytest.mark.parametrize("payload", HOSTILE)
def test_hostile_input_renders_inert(payload: str) -> None:
    html = render_markdown(payload)
    assert audit(html) == [], html
    page = BeautifulSoup(html, "html.parser")
    assert not page.find_all(["script", "iframe", "svg", "style", "img", "object", "embed"])


def test_hostile_input_shows_as_text_not_dropped() -> None:
    page = soup("\n\n".join(HOSTILE))
    text = page.get_text()
    assert text.count("<script>alert(1)</script>") >= 3
    assert "javascript:alert(1)" in text and "vbscript:msgbox(1)" in text


def test_blocks_concatenate_to_the_whole_render() -> None:
    for text in [*ANSWERS.values(), "\n\n".join(HOSTILE)]:
        blocks = render_blocks(text)
        assert len(blocks) > 3
        assert "".join(b.html for b in blocks) == render_markdown(text)


TRICKY = [
    "para\n***x\nmore\n\n# h\n#x\n\n```\ncode\n\n\nmore\n```\n\n- a\n\n  b\n\n- c\n\nend",
    "text\n| a | b |\n|---|---|\n| 1 | 2 |\n\nafter",
    "[r]: https://r.example\n\nuse [r] here\n\n> q\nlazy\n\n    indented\n\n    code\n\nx",
    "1. one\n\n   continued\n2. two\n\n3) other list\n\npara\n===\n\n$$\nx\n\n$$\n\n\\[\ny\n\\]\nz",
]


@pytest.mark.parametrize("text", [*ANSWERS.values(), *TRICKY], ids=lambda t: repr(t[:12]))
def test_a_block_is_only_finished_when_it_cannot_change(text: str) -> None:
    """Streamed in random chunks, the finished blocks are always a prefix of the final ones."""
    final = [b.html for b in render_blocks(text)]
    for seed in range(25):
        chunks = random.Random(seed)
        stream = BlockStream()
        i = 0
        while i < len(text):
            n = chunks.randint(1, 12)
            stream.feed(text[i : i + n])
            i += n
            stream.advance()
            assert stream.finished == final[: len(stream.finished)], (seed, i)
        assert len(stream.finished) >= len(final) // 2, "blocks finish while streaming"
