"""The run's notebook context in the panel (a collapsed entry at the turn's start), in the static
transcript (``<details>``, readable without JavaScript) and in plain mode (one line), and a
``run_python`` call's rich displays (a DataFrame's table) in its card, rebuilt safe."""

from __future__ import annotations

from typing import Any

import pandas as pd
from bs4 import BeautifulSoup

from pi_notebook.agent import AgentTool, AgentToolResult
from pi_notebook.ai import TextContent, UserMessage, faux_assistant_message
from pi_notebook.ai.faux import faux_tool_call
from pi_notebook.notebook.notebook_context import NotebookContextMessage
from pi_notebook.notebook.panel.ops import OpList
from pi_notebook.notebook.panel.reducer import PanelState
from pi_notebook.notebook.panel.rich_html import MOST_DISPLAYS, displays_html, sanitize_html
from pi_notebook.notebook.panel.static import render_static_html
from pi_notebook.notebook.render import render_transcript
from pi_notebook.tools.displays import Shown

from .corpus import HOSTILE
from .helpers import collect_events, faux, image_tool, run
from .test_markdown import audit

KEY = "sk-proj-" + "Z7y6X5w4" * 6

CONTEXT = (
    "Notebook context: the cells run since your last reply, oldest first.\n\n"
    "(In [1] to In [2] left out to keep this short; ask the user, or read them with a tool "
    "if you have one.)\n\n"
    "In [3]:\n```python\ndf = load()\ndf.head(1)\n```\nOut[3]:    age\n0   50\n\n"
    "In [4]:\n```python\ndf['BMI']\n```\nError in In [4]: KeyError: 'BMI'\n"
    "Traceback (the cell's frame and the last ones):\n  cell, line 1, in <module>: df['BMI']"
)

#: Tags and attributes the static frame and a rebuilt display may add to the Markdown's.
FRAME_TAGS = frozenset(("details", "summary", "img"))
DISPLAY_TAGS = frozenset(
    ("small", "u", "kbd", "samp", "var", "abbr", "caption", "colgroup", "col", "tfoot", "dl")
) | frozenset(("dt", "dd", "b", "i", "sub", "sup", "details", "summary"))
FRAME_ATTRIBUTES = frozenset(
    ("data-state", "data-role", "data-index", "data-block", "data-status", "data-tool-call-id",
     "data-kind", "data-cell", "open", "alt", "src", "colspan", "rowspan", "span", "border",
     "align", "valign", "scope")
)  # fmt: skip


def context_message(content: str = CONTEXT) -> NotebookContextMessage:
    return NotebookContextMessage(content=content, cells=[3, 4], errors=[4], left_out=(1, 2))


def reduce(prompt: Any, tools: list[Any], replies: list[Any] | None = None) -> dict[str, Any]:
    provider = faux(replies or [faux_assistant_message("It failed on a missing column.")])
    state = PanelState(OpList(), model="faux/faux-1")
    for event in run(collect_events(provider, prompt, tools)):
        state.apply(event)
    return state.materialize()  # type: ignore[return-value]


def prompt_with_context(content: str = CONTEXT) -> list[Any]:
    user = UserMessage(content=[TextContent(text="why did the cell above fail?")], timestamp=2)
    return [context_message(content), user]


def test_the_context_is_the_first_entry_titled_by_its_cells_and_errors() -> None:
    state = reduce(prompt_with_context(), [])
    entry, user = state["messages"][0], state["messages"][1]
    assert user["role"] == "user"
    assert entry == {
        "role": "notebookContext",
        "title": "notebook context: 2 cells, 1 error (KeyError)",
        "cells": [
            {"number": 3, "source": "df = load()\ndf.head(1)", "result": "   age\n0   50",
             "error": None},
            {"number": 4, "source": "df['BMI']", "result": None,
             "error": "KeyError: 'BMI'\nTraceback (the cell's frame and the last ones):\n"
                      "  cell, line 1, in <module>: df['BMI']"},
        ],
        "left_out": "In [1]–[2] left out to keep it short",
    }  # fmt: skip


def test_the_static_transcript_has_it_collapsed_and_readable_without_javascript() -> None:
    html = render_static_html(reduce(prompt_with_context(), []))
    page = BeautifulSoup(html, "html.parser")
    box = page.select_one(".pi-message[data-role=notebookContext] > details.pi-nbcontext")
    assert box is not None and not box.has_attr("open")
    assert box.summary.get_text() == "notebook context: 2 cells, 1 error (KeyError)"
    cells = box.select(".pi-nbcell")
    assert [c.select_one(".pi-nbcell-label").get_text() for c in cells] == ["In [3]:", "In [4]:"]
    assert cells[0].select_one(".pi-nbcell-out").get_text() == "Out[3]:    age\n0   50"
    assert cells[1].select_one(".pi-nbcell-error").get_text().startswith("KeyError: 'BMI'\n")
    assert box.select_one(".pi-nbcontext-note").get_text().startswith("In [1]–[2] left out")
    # The prompt is the user's own entry, after it.
    assert page.select(".pi-message")[1]["data-role"] == "user"


def test_hostile_cell_text_stays_text_and_a_secret_never_shows() -> None:
    source = "\n".join(HOSTILE[:5]) + f"\ntoken = '{KEY}'"
    content = f"Notebook context: x\n\nIn [3]:\n```python\n{source}\n```\nOut[3]: '{KEY}'"
    state = reduce(prompt_with_context(content), [])
    html = render_static_html(state)
    assert audit(html, FRAME_TAGS, FRAME_ATTRIBUTES) == []
    assert KEY not in html and KEY not in str(state)
    assert "<script>alert(1)</script>" in BeautifulSoup(html, "html.parser").get_text()


def test_plain_mode_names_what_was_sent_in_one_line() -> None:
    messages = [*prompt_with_context(), faux_assistant_message("A missing column.")]
    text = render_transcript(messages, context=True)
    assert text.splitlines()[0] == (
        "notebook context: In[3], In[4] (KeyError: 'BMI'); In [1]–[2] left out to keep it short"
    )
    assert "user: why did the cell above fail?" in text
    # %agent history reads the conversation, not the model's context; no context, no line.
    assert "notebook context" not in render_transcript(messages)
    assert "notebook context" not in render_transcript(messages[1:], context=True)


DATAFRAME = pd.DataFrame({"bmi": [21.5, 30.1], "age": [50, 61]})


def display_state(displays: list[dict[str, str]]) -> dict[str, Any]:
    replies = [
        faux_assistant_message([faux_tool_call("plot", {"n": 2}, id="c1")], stop_reason="toolUse"),
        faux_assistant_message("Shown."),
    ]
    return reduce("show it", [image_tool(displays=displays)], replies)


def test_a_dataframe_display_is_a_table_in_its_card_live_and_static() -> None:
    bundle = {"text/plain": repr(DATAFRAME), "text/html": DATAFRAME._repr_html_()}
    state = display_state([bundle, {"text/plain": "only text"}])
    card = state["tools"]["c1"]
    assert len(card["displays"]) == 1  # a display with only text: its text is the card's
    table = BeautifulSoup(card["displays"][0], "html.parser").table
    assert [th.get_text() for th in table.thead.find_all("th")] == ["", "bmi", "age"]
    assert [td.get_text() for td in table.tbody.find_all("td")] == ["21.5", "50", "30.1", "61"]
    page = BeautifulSoup(render_static_html(state), "html.parser")
    shown = page.select('.pi-tool-card[data-tool-call-id="c1"] .pi-tool-result .pi-tool-display')
    assert len(shown) == 1 and shown[0].table is not None
    assert shown[0].find_previous_sibling("img") is not None  # after the figure, in the card


def test_a_displayed_dataframe_is_in_its_card_once_as_its_table() -> None:
    """The model reads a DataFrame's text form; the card shows its table and not that text too
    (seen in a screenshot: the describe() table printed twice). A display with only text keeps
    its note, and the tool result the model gets is unchanged."""
    shown = Shown()
    shown.add_bundle({"text/plain": repr(DATAFRAME), "text/html": DATAFRAME._repr_html_()})
    shown.add_bundle({"text/plain": "only text"})
    text = f"printed: 42\n{shown.text()}"
    assert "displayed:\nbmi  age\n0  21.5" in text

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(content=[TextContent(text=text)], details={"displays": shown.rich})

    tool = AgentTool(name="plot", description="plot", parameters={"type": "object"},
                     execute=execute)  # fmt: skip
    replies = [
        faux_assistant_message([faux_tool_call("plot", {}, id="c1")], stop_reason="toolUse"),
        faux_assistant_message("Shown."),
    ]
    state = reduce("show it", [tool], replies)
    card = state["tools"]["c1"]
    assert card["result_text"] == "printed: 42\ndisplayed:\nonly text"
    assert len(card["displays"]) == 1
    page = BeautifulSoup(render_static_html(state), "html.parser")
    [preview] = page.select('.pi-tool-card[data-tool-call-id="c1"] .pi-tool-preview')
    assert preview.get_text() == "printed: 42\ndisplayed:\nonly text"
    assert "30.1" in page.select_one(".pi-tool-display").get_text()
    [result] = [m for m in state["messages"] if m["role"] == "toolResult"]
    assert result["text"] == text  # what the model got keeps the text form


def test_hostile_display_html_is_rebuilt_inert() -> None:
    payloads = [
        *HOSTILE,
        '<table><tr><td style="position:fixed;top:0" onclick="x()" class="pi-panel">a</td>',
        '<a href="javascript:alert(1)">x</a><iframe src="//evil"></iframe><form action=x>',
        "<svg><foreignObject><img src=x onerror=alert(1)></foreignObject></svg>after",
        "<style>@import url(//evil)</style><link rel=stylesheet href=//evil><meta http-equiv>",
        "<!-- <script>alert(1)</script> --><![CDATA[x]]><?php ?>",
        "<div><b>unclosed <i>tags",
        "</td></tr></table></div>orphan ends",
        f"<td>{KEY}</td>",
    ]
    state = display_state([{"text/html": p} for p in payloads])
    displays = state["tools"]["c1"]["displays"]
    assert len(displays) == MOST_DISPLAYS + 1 and "more displays not shown" in displays[-1]
    for payload in payloads:
        html = sanitize_html(payload)
        assert audit(html, DISPLAY_TAGS, FRAME_ATTRIBUTES) == [], (payload, html)
        page = BeautifulSoup(html, "html.parser")
        assert not page.find_all(attrs={"class": True}) and not page.find_all(style=True)
    assert KEY not in str(displays_html({"displays": [{"text/html": f"<td>{KEY}</td>"}]}))
    assert sanitize_html("<div><b>unclosed <i>tags") == "<div><b>unclosed <i>tags</i></b></div>"
    # SVG goes with its content (a <b> inside would break out of it, in a browser's parse too).
    assert sanitize_html("<svg><text>x</text><script>a</script></svg>after") == "after"
    assert audit(render_static_html(state), FRAME_TAGS | DISPLAY_TAGS, FRAME_ATTRIBUTES) == []


def test_a_markdown_display_renders_and_a_huge_one_is_cut() -> None:
    [html] = displays_html({"displays": [{"text/markdown": "**bold** [x](javascript:y)"}]})
    assert "<strong>bold</strong>" in html and "href" not in html  # no javascript: link
    huge = "<table>" + "<tr><td>1</td></tr>" * 30_000 + "</table>"
    cut = sanitize_html(huge)
    assert len(cut) < 300_000 and "more characters of HTML not shown" in cut
    assert cut.count("<table>") == 1 and cut.count("</table>") == 1
