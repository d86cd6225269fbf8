"""What ``run_python`` code displays lands in its tool result (on an in-process IPython shell,
so ``display()`` goes through the shell's publisher as in a kernel): figures and images as image
blocks with a one-line note, other displays as bounded text, nothing left for the cell."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import matplotlib
import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from pi_notebook.agent import Agent
from pi_notebook.ai import (
    ToolResultMessage,
    faux_assistant_message,
    faux_tool_call,
    register_faux_provider,
)
from pi_notebook.tools import notebook_tools, workspace

matplotlib.use("agg")


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    InteractiveShell.clear_instance()
    ip = InteractiveShell.instance(config=config)
    try:
        yield ip
    finally:
        InteractiveShell.clear_instance()


def run_python(shell: InteractiveShell, code: str) -> tuple[ToolResultMessage, Any]:
    """One ``run_python`` call made by a faux model; (its result, the request after it)."""
    faux = register_faux_provider(token_size=(1, 1))
    call = faux_tool_call("run_python", {"code": code})
    faux.set_responses(
        [faux_assistant_message([call], stop_reason="toolUse"), faux_assistant_message("seen")]
    )
    workspace(shell.user_ns).begin_run()
    agent = Agent(model=faux.get_model(), tools=notebook_tools(shell.user_ns))
    asyncio.run(agent.prompt("plot"))
    result = next(m for m in agent.state.messages if isinstance(m, ToolResultMessage))
    faux.unregister()
    return result, faux.requests[-1]


PLOT = """
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
for k in range(3):
    ax.plot([0, 1], [k, k + 1])
ax.set_title('lines')
plt.show()
"""


def test_a_figure_left_open_becomes_an_image_and_a_note(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    result, request = run_python(shell, PLOT)
    assert not result.is_error
    kinds = [block.type for block in result.content]
    assert kinds == ["text", "image"]
    text = result.content[0].text  # type: ignore[union-attr]
    assert "a figure was drawn: 1 axes, 3 lines, titled 'lines'" in text
    image = result.content[1]
    assert image.mime_type == "image/png" and len(image.data) > 1000  # type: ignore[union-attr]
    import matplotlib.pyplot as plt

    assert plt.get_fignums() == []  # closed: nothing is left for the cell to show
    sent = request.context.messages[-1]  # the image-capable faux model gets the image
    assert [b.type for b in sent.content] == ["text", "image"]


def test_a_displayed_pil_image_and_a_dataframe_come_back(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    code = (
        "from PIL import Image\nimport pandas as pd\nfrom IPython.display import display\n"
        "display(Image.new('RGB', (4, 3)))\n"
        "display(pd.DataFrame({'bmi': range(500)}))\n"
        "print('done')"
    )
    result, _ = run_python(shell, code)
    text = result.content[0].text  # type: ignore[union-attr]
    assert "an image was displayed: <PIL.Image.Image image mode=RGB size=4x3>" in text
    assert "displayed:\n" in text and "[500 rows x 1 columns]" in text
    assert len(text) < 4_000
    assert [b.type for b in result.content][1:] == ["image"]
    assert "text/html" in result.details["displays"][0]
    assert "bmi" not in capsys.readouterr().out  # nothing went to the shell's own output


def test_a_cell_of_the_user_still_displays_while_no_call_runs(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    run_python(shell, "x = 1")
    shell.run_cell("from IPython.display import display\ndisplay('visible')")
    assert "visible" in capsys.readouterr().out
    assert type(shell.display_pub).__name__ != "DisplayRouter"


def test_many_figures_keep_four_images(shell: InteractiveShell) -> None:
    code = "import matplotlib.pyplot as plt\nfor k in range(6):\n    plt.figure()\n"
    result, _ = run_python(shell, code)
    assert [b.type for b in result.content].count("image") == 4
    assert "(2 more images not kept)" in result.content[0].text  # type: ignore[union-attr]


def test_without_a_shell_a_figure_still_comes_back() -> None:
    InteractiveShell.clear_instance()
    namespace: dict[str, Any] = {"__name__": "__main__"}
    faux = register_faux_provider(token_size=(1, 1))
    call = faux_tool_call("run_python", {"code": PLOT})
    faux.set_responses(
        [faux_assistant_message([call], stop_reason="toolUse"), faux_assistant_message("ok")]
    )
    workspace(namespace).begin_run()
    agent = Agent(model=faux.get_model(), tools=notebook_tools(namespace))
    asyncio.run(agent.prompt("plot"))
    result = next(m for m in agent.state.messages if isinstance(m, ToolResultMessage))
    assert [b.type for b in result.content] == ["text", "image"]
    faux.unregister()


def test_a_model_without_image_input_reads_the_one_line_note(shell: InteractiveShell) -> None:
    from pi_notebook.ai.transform import TOOL_IMAGE_OMITTED, transform_messages

    result, request = run_python(shell, PLOT)
    text_only = request.model.model_copy(update={"input": ["text"]})
    sent = transform_messages([result], text_only)[0]
    assert [b.type for b in sent.content] == ["text", "text"]
    assert "a figure was drawn: 1 axes, 3 lines" in sent.content[0].text
    assert sent.content[1].text == TOOL_IMAGE_OMITTED


def test_a_dataframe_reaches_the_card_as_a_table_and_the_model_as_bounded_text(
    shell: InteractiveShell,
) -> None:
    from pi_notebook.ai import message_text
    from pi_notebook.notebook.panel.rich_html import displays_html
    from pi_notebook.tools.displays import DISPLAY_TEXT_CHARS

    code = (
        "import pandas as pd\nfrom IPython.display import Markdown, display\n"
        "display(pd.DataFrame({f'col{i}': range(2_000) for i in range(40)}))\n"
        "display(Markdown('**fitted** 3 models'))"
    )
    result, request = run_python(shell, code)
    sent = message_text(request.context.messages[-1])  # what the model got: text forms
    assert "<table" not in sent and "<strong>" not in sent
    assert "[2000 rows x 40 columns]" in sent and "displayed:\n**fitted** 3 models" in sent
    assert len(sent) < 3 * DISPLAY_TEXT_CHARS
    table, markdown = displays_html(result.details)  # what the card shows
    assert table.startswith("<div>") and "<table" in table and "<th>col39</th>" in table
    assert "<td>1999</td>" in table and "style" not in table
    assert markdown == "<p><strong>fitted</strong> 3 models</p>\n"
