"""Issues 27 and 29's panel parts in one notebook, in JupyterLab light and dark and Notebook 7
light: what each looks like, live and static, with the readability checks that hold anyway.

The notebook is a data-science user's: a DataFrame, a failing cell (``df['BMI']``), then

- an ``%%agent`` cell with the notebook context on, whose ``run_python`` call draws a figure and
  shows a DataFrame, asked in the four-button approval box (Approve, then "Always allow note");
- a cell whose reply llama.cpp's server could not parse (a real HTTP server on 127.0.0.1,
  ``tests/providers/llamacpp_errors.py``): the "reply-failed" card, nothing ran;
- a step-mode cell, stepped to the end: the context view's "what changed since turn 1", the
  live timeline, "insert as cell" on the answer's code block, then the static transcript with
  its timeline image and the line naming ``%agent code --answer``.

Every part is checked for contrast (4.5:1, as ``test_themes.py``) and for not overflowing its
card. With ``PI_SCREENSHOTS=DIR`` each step also writes a PNG to DIR, named
``<frontend>-<theme>-<part>.png``, for a person to look at; without it none is written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .driver import Notebook, write_notebook
from .server import JupyterServer
from .test_panel import CONTRAST, THEMES_PLUGIN, expect

if TYPE_CHECKING:
    from playwright.sync_api import Locator

ROOT = Path(__file__).resolve().parents[2]
SHOTS = os.environ.get("PI_SCREENSHOTS", "")
TALL = {"width": 1400, "height": 2600}

PLOT = (
    "import matplotlib.pyplot as plt\\nfrom IPython.display import display\\n"
    "fig, ax = plt.subplots(figsize=(3, 2))\\nax.plot(df['age'], df['bmi'])\\n"
    "ax.set_title('bmi by age')\\nplt.show()\\ndisplay(df.describe())"
)
ANSWER = (
    "The frame has no `BMI` column: it is spelled `bmi`.\n\n"
    "```python\nmeans = df['bmi'].mean()\nprint(means)\n```\n"
)
SETUP = f"""\
%env PI_NOTEBOOK_CONTEXT=on
%load_ext pi_notebook
import sys
sys.path.insert(0, {str(ROOT)!r})
from pi_notebook.agent import AgentTool, AgentToolResult
from pi_notebook.ai import (
    Model, TextContent, faux_assistant_message, faux_tool_call, register_faux_provider,
)
from tests.providers.server import ScriptServer
from tests.providers.llamacpp_errors import unparsed_tool_call

async def _noted(tool_call_id, params, signal, on_update):
    return AgentToolResult(content=[TextContent(text="noted")])

note = AgentTool(name="note", description="Note it.", parameters={{"type": "object"}},
                 execute=_noted)
faux = register_faux_provider(token_size=(4, 4))
faux.set_responses([
    faux_assistant_message(
        faux_tool_call("run_python", {{"code": "{PLOT}"}}, id="call_plot"),
        stop_reason="toolUse",
    ),
    faux_assistant_message(faux_tool_call("note", {{}}, id="call_note"), stop_reason="toolUse"),
    faux_assistant_message({ANSWER!r}),
    faux_assistant_message(faux_tool_call("note", {{}}, id="call_step"), stop_reason="toolUse"),
    faux_assistant_message({ANSWER!r}),
])
llama = ScriptServer()
await llama.start()
llama.queue(unparsed_tool_call())
local = Model(id="qwen2.5-coder-1.5b", api="openai-completions", provider="llamacpp",
              base_url=llama.url + "/v1")
"""
CELLS = [
    SETUP,
    "import pandas as pd\ndf = pd.DataFrame({'age': [50, 61, 47], 'bmi': [21.5, 30.1, 26.4]})",
    "df['BMI']",
    "%%agent --model faux --tools notebook,note --approve all --no-code-cell\n"
    "why did the cell above fail?",
    "%%agent --model local --new --tools notebook --approve none\nPrint 40 + 2.",
    "%%agent --model faux --new --tools note --approve none --step\nShow me the fix.",
]
NOTHING_RAN = "the server could not parse the model's tool call: nothing ran"

#: Where ``el`` (or a descendant) sticks out of the nearest .pi-tool-card / .pi-message /
#: .pi-panel box, or is cut by its own overflow without a scrollbar to reach the rest.
OVERFLOW = """(el) => {
    const box = el.closest('.pi-tool-card, .pi-approval, .pi-message, .pi-panel') || el;
    const outer = box.getBoundingClientRect();
    const out = [];
    for (const node of [el, ...el.querySelectorAll('*')]) {
        const r = node.getBoundingClientRect();
        if (!r.width || !r.height) continue;
        const style = getComputedStyle(node);
        if (r.right > outer.right + 1 || r.left < outer.left - 1) {
            out.push(`${node.tagName}.${node.className} sticks out: ${r.left}..${r.right}`
                     + ` of ${outer.left}..${outer.right}`);
        }
        if (node.scrollWidth > node.clientWidth + 1 && style.overflowX === 'hidden') {
            out.push(`${node.tagName}.${node.className} clipped: ${node.scrollWidth}`
                     + ` > ${node.clientWidth}`);
        }
    }
    return out;
}"""


#: (the left bar's colour of ``el``, the theme's warning colour), as computed.
BAR_AND_WARN = """(el) => {
    const probe = document.createElement('span');
    probe.style.color = 'var(--pi-warn)';
    el.append(probe);
    const warn = getComputedStyle(probe).color;
    probe.remove();
    return [getComputedStyle(el).borderLeftColor, warn];
}"""


def _not_a_warning(*parts: Locator) -> None:
    """A record (an approval that went through, where the answer's code can go) has no
    warning-coloured bar: orange beside "approved by the user" read as a warning."""
    for part in parts:
        bar, warn = part.evaluate(BAR_AND_WARN)
        assert bar != warn, (part, bar)


class Shots:
    """Screenshots of one frontend and theme, written only when ``PI_SCREENSHOTS`` is set."""

    def __init__(self, nb: Notebook, shade: str) -> None:
        self.nb = nb
        self.prefix = f"{'lab' if nb.frontend == 'lab' else 'nb7'}-{shade}"

    def take(self, part: str, target: Locator) -> None:
        if not SHOTS:
            return
        if self.nb.page.viewport_size != TALL:  # a panel taller than the window shoots whole
            self.nb.page.set_viewport_size(TALL)
        folder = Path(SHOTS)
        folder.mkdir(parents=True, exist_ok=True)
        target.scroll_into_view_if_needed()
        target.screenshot(path=str(folder / f"{self.prefix}-{part}.png"))


def _readable(theme: str, *parts: Locator) -> None:
    for part in parts:
        seen = part.evaluate(CONTRAST)
        assert seen["ratio"] >= 4.5, (theme, part, seen)


def _inside(*parts: Locator) -> None:
    for part in parts:
        assert part.evaluate(OVERFLOW) == [], part


def _notebook(workdir: Path, name: str) -> str:
    path = workdir / name
    write_notebook(path, CELLS)
    notebook = json.loads(path.read_text(encoding="utf-8"))
    notebook["cells"][2]["metadata"]["tags"] = ["raises-exception"]
    path.write_text(json.dumps(notebook, indent=1) + "\n", encoding="utf-8")
    return path.name


def _context_and_card(theme: str, root: Locator, shots: Shots, when: str) -> None:
    entry = root.locator("details.pi-nbcontext").first
    expect(entry.locator("summary")).to_have_text("notebook context: 3 cells, 1 error (KeyError)")
    shots.take(f"context-collapsed-{when}", root.locator(".pi-message").first)
    if entry.get_attribute("open") is None:
        entry.locator("summary").click()
    expect(entry.locator(".pi-nbcell-error")).to_contain_text("KeyError: 'BMI'")
    _readable(theme, entry.locator("summary"), entry.locator(".pi-nbcell-error"),
              entry.locator(".pi-nbcell-source").first,
              entry.locator(".pi-nbcell-label").first)  # fmt: skip
    _inside(entry)
    shots.take(f"context-open-{when}", entry)
    card = root.locator('.pi-tool-card[data-tool-call-id="call_plot"]')
    expect(card.locator("img.pi-image")).to_have_count(1)
    table = card.locator(".pi-tool-display table")
    expect(table.locator("tbody th").first).to_have_text("count")
    # The table once: its text form is what the model reads, not a second copy in the card.
    expect(card.locator(".pi-tool-preview")).to_have_text(
        "a figure was drawn: 1 axes, 1 lines, titled 'bmi by age'"
    )
    _readable(theme, table.locator("tbody td").first, table.locator("thead th").last,
              card.locator(".pi-tool-approval"))  # fmt: skip
    _not_a_warning(card.locator(".pi-tool-approval"))
    _inside(card)
    shots.take(f"figure-card-{when}", card)


@pytest.mark.parametrize(
    "theme",
    [pytest.param("JupyterLab Light", marks=pytest.mark.notebook7), "JupyterLab Dark"],
)
def test_issue_27_and_29_parts_read_well_live_and_static(
    nb: Notebook, workdir: Path, server: JupyterServer, theme: str
) -> None:
    shade = theme.split()[-1].lower()
    shots = Shots(nb, shade)
    server.user_settings(THEMES_PLUGIN, {"theme": theme})
    try:
        nb.open(_notebook(workdir, f"shots-{shade}.ipynb"))
        nb.start_run_all()

        # The approval box: four answers, readable, on one line or wrapped inside the box.
        live = nb.output(3).locator(".pi-panel:not(.pi-static)")
        ask = live.locator('.pi-approval[data-tool-call-id="call_plot"]')
        expect(ask.locator("button")).to_have_text(
            ["Approve", "Always allow run_python", "Deny", "Deny and stop"]
        )
        expect(ask.locator(".pi-approval-summary")).to_have_text(
            "Run this call? run_python: 7 lines of code (import matplotlib.pyplot as plt)"
        )
        _readable(theme, ask.locator("button").first, ask.locator("button").last)
        _inside(ask)
        shots.take("approval-box", ask)
        shots.take("panel-awaiting-approval", live)
        ask.locator("button.pi-approve").click()
        ask = live.locator('.pi-approval[data-tool-call-id="call_note"]')
        expect(ask).to_be_visible()
        _context_and_card(theme, live, shots, "live")
        shots.take("panel-second-approval", live)
        ask.locator("button.pi-always").click()

        static = nb.output(3).locator(".pi-panel.pi-static")
        expect(static).to_have_attribute("data-state", "done", timeout=60_000)
        _context_and_card(theme, static, shots, "static")
        note = static.locator('.pi-tool-card[data-tool-call-id="call_note"]')
        expect(note.locator(".pi-tool-approval")).to_have_text(
            "Approval: approved by the user: always allow note (this conversation)"
        )
        hint = static.locator(".pi-answer-code")
        expect(hint).to_have_count(1)
        _readable(theme, hint, hint.locator("code"))
        _not_a_warning(hint)
        shots.take("static-answer", static.locator(".pi-message[data-role=assistant]").last)
        shots.take("static-answer-hint", hint)
        shots.take("static-panel", static)

        # The reply llama.cpp could not parse: a card that says nothing ran.
        failed = nb.output(4).locator(".pi-panel.pi-static")
        expect(failed).to_have_attribute("data-state", "error", timeout=60_000)
        card = failed.locator('.pi-tool-card[data-status="reply-failed"]')
        expect(card.locator(".pi-tool-not-run")).to_have_text(f"{NOTHING_RAN}.")
        _readable(theme, card.locator(".pi-tool-not-run"), card.locator(".pi-tool-name"))
        _inside(card)
        shots.take("reply-failed-static", failed)

        # Step mode to the end: what changed since turn 1, the live timeline, insert as cell.
        panel = nb.output(5).locator(".pi-panel:not(.pi-static)")
        bar = panel.locator(".pi-step")
        insert = panel.locator(".pi-message[data-role=assistant] button.pi-insert-cell")
        context = panel.locator("details.pi-context")
        count, changes_seen = 1, False
        expect(bar).to_have_attribute("data-count", "1")
        while bar.locator(".pi-step-event").inner_text() != "agent_end":
            summary = context.locator(":scope > summary")
            if not changes_seen and context.count() and "turn 2" in summary.inner_text():
                summary.click()
                changes = context.locator(".pi-context-changes")
                expect(changes.locator(".pi-context-changes-head")).to_contain_text(
                    "What changed since turn 1's request"
                )
                _readable(theme, changes.locator(".pi-context-why").first, summary)
                _inside(context)
                shots.take("context-changes-live", context)
                summary.click()
                changes_seen = True
            bar.locator("button.pi-next").click()
            count += 1
            expect(bar).to_have_attribute("data-count", str(count))
        assert changes_seen
        expect(insert).to_have_count(1)
        _readable(theme, insert)
        shots.take("step-end-panel", panel)
        timeline = panel.locator(".pi-timeline-box")
        if timeline.get_attribute("open") is None:
            timeline.locator(":scope > summary").click()
        shots.take("timeline-live", timeline)
        insert.click()
        expect(insert).to_have_text("inserted below the %%agent cell")
        _readable(theme, insert)
        shots.take("insert-as-cell-done", panel.locator(".pi-message[data-role=assistant]").last)
        shots.take("inserted-cell", nb.cell(6))
        bar.locator("button.pi-run-to-end").click()
        nb.wait_run_done()
        static = nb.output(5).locator(".pi-panel.pi-static")
        expect(static.locator("img.pi-timeline")).to_be_visible()
        shots.take("step-static-panel", static)
        shots.take("timeline-static", static.locator("img.pi-timeline"))
        assert [e["ename"] for e in nb.errors()] == ["KeyError"]
        # anywidget logs this when a panel is replaced by its static transcript before the
        # front end finished setting its model up (the reply-failed cell ends in a few ms
        # under load); nothing is shown to the user, and the static transcript is there.
        assert [e for e in nb.serious_page_errors() if "Failed to initialize model" not in e] == []
    finally:
        server.user_settings(THEMES_PLUGIN, None)
