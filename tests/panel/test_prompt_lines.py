"""A prompt's line breaks are kept in the panel (issue 27.4): a prompt typed on several lines,
or expanded from ``{In[3]}``, shows line by line, live (the state the view draws) and in the
static transcript; Markdown in it still renders."""

from __future__ import annotations

from pi_notebook.ai import faux_assistant_message
from pi_notebook.notebook.panel.ops import OpList
from pi_notebook.notebook.panel.reducer import PanelState
from pi_notebook.notebook.panel.static import render_static_html

from .helpers import collect_events, faux, run

PROMPT = "Why did the cell above fail?\ndf['BMI']\nmeans = df.mean()\n\nFix *it*."


def test_a_prompts_lines_stay_lines_live_and_static() -> None:
    provider = faux([faux_assistant_message("A KeyError:\nno column BMI.")])
    state = PanelState(OpList())
    for event in run(collect_events(provider, PROMPT)):
        state.apply(event)
    data = state.materialize()
    user = data["messages"][0]
    assert user["html"] == (
        "<p>Why did the cell above fail?<br>\ndf['BMI']<br>\nmeans = df.mean()</p>\n"
        "<p>Fix <em>it</em>.</p>\n"
    )
    static = render_static_html(data)
    assert "Why did the cell above fail?<br>\ndf['BMI']<br>\nmeans = df.mean()" in static
    # An answer's soft line breaks are Markdown's, as before: joined into its paragraph.
    assert "<br>" not in "".join(data["messages"][1]["blocks"][0]["html"])
