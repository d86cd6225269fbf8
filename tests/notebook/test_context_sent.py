"""What a run's notebook context sent, read back from its text (``context_sent``): the cells of
a real context (an in-process IPython shell), a cell the budget cut, a conversation loaded from
a file, and text that is not a context at all."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from pi_notebook.ai import dump_transcript, parse_agent_message
from pi_notebook.notebook.context_sent import entry_title, plain_line, sent_cells
from pi_notebook.notebook.notebook_context import NotebookContext, NotebookContextMessage
from pi_notebook.tools import cell_log


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    InteractiveShell.clear_instance()
    ip = InteractiveShell.instance(config=config)
    ip.register_magic_function(lambda line, cell=None: None, "line_cell", "agent")
    log = cell_log()
    log.clear()
    log.install(ip)
    try:
        yield ip
    finally:
        log.uninstall(ip)
        log.clear()
        InteractiveShell.clear_instance()


def gathered(
    shell: InteractiveShell, *cells: str, budget: int | None = None
) -> NotebookContextMessage:
    for cell in cells:
        shell.run_cell(cell, store_history=True)
    message = NotebookContext().collect(shell, budget=budget, log=cell_log())
    assert message is not None
    return message


#: A source holding what looks like another cell's header.
TRICKY = 'data = {\'age\': [50, 61]}\nnote = """\n\nIn [9]:\n```python\nnot a cell\n"""'


def test_the_cells_of_a_real_context_read_back_as_sent(shell: InteractiveShell) -> None:
    message = gathered(
        shell,
        TRICKY,
        "data",
        "%%agent\nwhy?",
        "data['BMI']",
    )
    cells = sent_cells(message)
    assert [c.number for c in cells] == [1, 2, 4]
    assert cells[0].source == TRICKY
    assert cells[0].result is None and cells[0].error is None
    assert cells[1].source == "data" and cells[1].result == "{'age': [50, 61]}"
    assert cells[2].source == "data['BMI']" and cells[2].result is None
    assert cells[2].error is not None and cells[2].error.startswith("KeyError: 'BMI'\n")
    assert "cell, line 1, in <module>: data['BMI']" in cells[2].error
    assert cells[2].error_type == "KeyError" and cells[2].error_line == "KeyError: 'BMI'"
    assert entry_title(cells) == "notebook context: 3 cells, 1 error (KeyError)"
    assert plain_line(message) == "notebook context: In[1], In[2], In[4] (KeyError: 'BMI')"
    # Every part of each cell is in the text the model got, in order.
    for cell in cells:
        assert cell.source in message.content


def test_a_cell_the_budget_cut_keeps_what_is_left_as_its_source(shell: InteractiveShell) -> None:
    message = gathered(shell, "x = 1", "raise ValueError('v' * 50_000)", budget=600)
    [cell] = sent_cells(message)
    assert cell.number == 2 and "characters cut" in (cell.error or cell.source)
    assert plain_line(message).startswith("notebook context: In[2]")
    assert "In [1]–[1] left out" in plain_line(message)


def test_a_context_loaded_from_a_file_reads_the_same(shell: InteractiveShell) -> None:
    message = gathered(shell, "a = 1", "a + 1", "1/0")
    [saved] = dump_transcript([message])
    loaded = parse_agent_message(saved)
    assert type(loaded).__name__ == "CustomMessage"
    assert sent_cells(loaded) == sent_cells(message)
    assert (
        plain_line(loaded)
        == plain_line(message)
        == ("notebook context: In[1], In[2], In[3] (ZeroDivisionError: division by zero)")
    )


def test_many_cells_read_as_a_range() -> None:
    text = "Notebook context: x" + "".join(
        f"\n\nIn [{n}]:\n```python\nx{n}\n```" for n in range(3, 12)
    )
    message = NotebookContextMessage(content=text, cells=list(range(3, 12)))
    assert plain_line(message) == "notebook context: In[3]–In[11] (9 cells)"


@given(st.text(max_size=400), st.lists(st.integers(-3, 30), max_size=5))
def test_any_text_reads_without_raising(text: str, numbers: list[int]) -> None:
    message = NotebookContextMessage(content=text, cells=numbers)
    cells = sent_cells(message)
    assert all(c.number in numbers for c in cells)
    assert plain_line(message).startswith("notebook context: ")
    assert entry_title(cells).startswith("notebook context: ")
