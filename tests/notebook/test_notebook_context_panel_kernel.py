"""The notebook context and run_python's displays as the panel shows them, in a real kernel.

A failing cell, then an ``%%agent`` cell: the panel's state starts the turn with the notebook
context entry (collapsed; the KeyError in it), the static transcript the cell keeps has it as
``<details>``, and plain mode prints one line naming what was sent. A ``run_python`` call that
plots and displays a DataFrame shows the figure and the table in its card. The test kernels
run with the notebook context off; these turn it on for their conversation.
"""

from __future__ import annotations

from bs4 import BeautifulSoup

from .conftest import Kernel
from .test_panel_kernel import PanelClient, run_cell

#: Replies that wait for the test's view (conftest's ``after_view``).
SCRIPT = """
nc = register_faux_provider(token_size=(1, 1))
nc.set_responses([after_view(faux_assistant_message(t)) for t in ('ready', 'A missing column.')])
pn.use_model(nc)
%agent reset
"""


def test_a_failing_cell_then_an_agent_cell_puts_the_context_in_the_panel(
    ui_kernel: Kernel,
) -> None:
    ui_kernel.ok(SCRIPT)
    assert run_cell(ui_kernel, "%%agent --no-context\nstart", PanelClient(ui_kernel)) == "ok"
    ui_kernel.ok("%agent notebook-context on")  # the test kernels have PI_NOTEBOOK_CONTEXT=off
    number = ui_kernel.ok(
        "print(get_ipython().execution_count + 1)  # (already counted)"
    ).stdout.strip()
    ui_kernel.ok("df = {'age': [50, 61]}")
    failed = ui_kernel.run("df['BMI']")  # cell `number`
    assert failed.error is not None and failed.error["ename"] == "KeyError"
    client = PanelClient(ui_kernel)
    assert run_cell(ui_kernel, "%%agent\nwhy did the cell above fail?", client) == "ok"
    assert client.state is not None
    entry, prompt = client.state["messages"][:2]
    assert prompt["role"] == "user" and "why did the cell above fail?" in prompt["html"]
    assert entry["role"] == "notebookContext"
    assert (
        entry["title"].startswith("notebook context: ") and "1 error (KeyError)" in entry["title"]
    )
    failing = entry["cells"][-1]
    assert failing["number"] == int(number) and failing["source"] == "df['BMI']"
    assert failing["error"].startswith("KeyError: 'BMI'")
    assert any(c["source"] == "df = {'age': [50, 61]}" for c in entry["cells"])
    # The static transcript the cell keeps: collapsed, the error inside; its text, one line.
    static = client.updates[-1]
    box = BeautifulSoup(static["text/html"], "html.parser").select_one("details.pi-nbcontext")
    assert box is not None and not box.has_attr("open")
    assert "KeyError: 'BMI'" in box.select(".pi-nbcell-error")[-1].get_text()
    first = static["text/plain"].splitlines()[0]
    assert first.startswith("notebook context: ") and first.endswith(
        f"In[{number}] (KeyError: 'BMI')"
    )


def test_plain_mode_prints_one_line_naming_what_was_sent(ui_kernel: Kernel) -> None:
    ui_kernel.ok(
        SCRIPT.replace("after_view(faux_assistant_message(t))", "faux_assistant_message(t)")
    )
    ui_kernel.ok("%%agent --plain --no-context\nstart")
    ui_kernel.ok("%agent notebook-context on")
    number = ui_kernel.ok(
        "print(get_ipython().execution_count + 1)  # (already counted)"
    ).stdout.strip()
    ui_kernel.ok("rows = [1, 2]")
    assert ui_kernel.run("rows[5]").error is not None  # cell `number`
    out = ui_kernel.ok("%%agent --plain\nwhy?").stdout
    lines = out.splitlines()
    assert lines[0] == (
        f"notebook context: In[{int(number) - 2}], In[{int(number) - 1}], In[{number}] "
        "(IndexError: list index out of range)"
    ), out
    assert lines[1:3] == ["user: why?", "assistant: A missing column."]
    # --no-context: nothing was sent, no line.
    ui_kernel.ok("nc.set_responses([faux_assistant_message('ok')])")
    assert ui_kernel.ok("%%agent --plain --no-context\nagain").stdout.startswith("user: again")


PLOT = (
    "import matplotlib.pyplot as plt\\nimport pandas as pd\\n"
    "from IPython.display import display\\n"
    "plt.plot([0, 1], [1, 0])\\nplt.show()\\n"
    "display(pd.DataFrame({\"bmi\": [21.5, 30.1]}))"
)


def test_a_figure_and_a_dataframe_from_run_python_are_in_its_card(ui_kernel: Kernel) -> None:
    ui_kernel.ok(
        "from pi_notebook.ai import faux_tool_call\n"
        "nd = register_faux_provider(token_size=(1, 1))\n"
        "nd.set_responses([after_view(faux_assistant_message([faux_tool_call('run_python', "
        f"{{'code': '{PLOT}'}}, id='plot1')], stop_reason='toolUse')), "
        "faux_assistant_message('Plotted.')])\n"
        "pn.use_model(nd)\n%agent reset"
    )
    client = PanelClient(ui_kernel)
    code = "%%agent --tools notebook --no-code-cell --no-context\nplot it"
    assert run_cell(ui_kernel, code, client) == "ok"
    assert client.state is not None
    card = client.state["tools"]["plot1"]
    assert card["status"] == "done", card
    assert [i["mime"] for i in card["images"]] == ["image/png"]
    [table] = card["displays"]
    assert "<td>30.1</td>" in table and "<th>bmi</th>" in table
    assert "a figure was drawn: 1 axes, 1 lines" in card["result_text"]
    # Nothing of the call was displayed below the cell: the panel, then its transcript.
    assert all("image/png" not in d for d in client.displays)
    page = BeautifulSoup(client.updates[-1]["text/html"], "html.parser")
    result = page.select_one('.pi-tool-card[data-tool-call-id="plot1"] .pi-tool-result')
    assert result.select_one("img.pi-image")["src"].startswith("data:image/png;base64,")
    assert result.select_one(".pi-tool-display table") is not None
