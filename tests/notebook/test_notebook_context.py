"""Notebook context on an in-process IPython shell (no kernel): which cells, how bounded, redacted,
never twice; and its place in the request (a custom message turned into a user message)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from pi_notebook.agent import Agent
from pi_notebook.ai import (
    ToolResultMessage,
    faux_assistant_message,
    faux_tool_call,
    parse_agent_message,
    register_faux_provider,
)
from pi_notebook.notebook.notebook_context import (
    FIRST_RUN_CELLS,
    NotebookContext,
    NotebookContextMessage,
    describe,
    is_notebook_context,
    with_notebook_context,
)
from pi_notebook.tools import CellLog, cell_log, notebook_tools, recent_cells

KEY = "sk-proj-" + "A1b2C3d4" * 6


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    InteractiveShell.clear_instance()
    ip = InteractiveShell.instance(config=config)
    ip.register_magic_function(lambda line, cell=None: None, "line_cell", "agent")
    try:
        yield ip
    finally:
        InteractiveShell.clear_instance()


@pytest.fixture
def log(shell: InteractiveShell) -> Iterator[CellLog]:
    """The kernel's cell log (the tools read it), empty, on this shell."""
    kernel_log = cell_log()
    kernel_log.clear()
    kernel_log.install(shell)
    yield kernel_log
    kernel_log.uninstall(shell)
    kernel_log.clear()


def run(shell: InteractiveShell, *cells: str) -> None:
    for cell in cells:
        shell.run_cell(cell, store_history=True)


def collect(context: NotebookContext, shell: InteractiveShell, log: CellLog, **kw: Any) -> Any:
    return context.collect(shell, log=log, **kw)


def test_a_failing_cell_reaches_the_context_with_its_error_and_line(
    shell: InteractiveShell, log: CellLog
) -> None:
    run(shell, "import json\ndata = {'a': 1}", "data", "data['BMI']")
    message = collect(NotebookContext(), shell, log)
    assert message is not None
    assert message.cells == [1, 2, 3] and message.errors == [3]
    text = message.content
    assert "In [3]:\n```python\ndata['BMI']\n```" in text
    assert "Out[2]: {'a': 1}" in text
    assert "Error in In [3]: KeyError: 'BMI'" in text
    assert "cell, line 1, in <module>: data['BMI']" in text
    assert describe(message) == "notebook context: 3 cells (In [1]–[3]), an error in In [3]"


def test_a_cell_is_never_sent_twice_and_agent_cells_are_left_out(
    shell: InteractiveShell, log: CellLog
) -> None:
    context = NotebookContext()
    run(shell, "x = 1")
    assert collect(context, shell, log).cells == [1]
    run(shell, "%%agent\nwhy?", "%agent status\ny = 2", "z = 3")
    second = collect(context, shell, log)
    assert second.cells == [3, 4]
    assert "%agent" not in second.content and "why?" not in second.content
    assert "In [3]:\n```python\ny = 2\n```" in second.content
    assert collect(context, shell, log) is None  # nothing new since


def test_the_first_run_gets_the_last_few_cells(shell: InteractiveShell, log: CellLog) -> None:
    run(shell, *[f"v{i} = {i}" for i in range(12)])
    message = collect(NotebookContext(), shell, log)
    assert message.cells == list(range(13 - FIRST_RUN_CELLS, 13))


def test_after_forget_the_next_run_gets_the_last_cells_again(
    shell: InteractiveShell, log: CellLog
) -> None:
    context = NotebookContext()
    run(shell, "a = 1")
    collect(context, shell, log)
    context.forget()
    assert collect(context, shell, log).cells == [1]


def test_off_sends_nothing_and_still_moves_past_the_cells(
    shell: InteractiveShell, log: CellLog
) -> None:
    context = NotebookContext(enabled=False)
    run(shell, "a = 1")
    assert collect(context, shell, log) is None
    context.enabled = True
    run(shell, "b = 2")
    assert collect(context, shell, log).cells == [2]


def test_a_megabyte_error_costs_a_few_hundred_characters(
    shell: InteractiveShell, log: CellLog
) -> None:
    run(
        shell,
        "raise ValueError('x' * 1_000_000)",
        "s = 'y' * 1_000_000\ns",
        "t = '''" + "z" * 50_000 + "'''",
    )
    message = collect(NotebookContext(), shell, log)
    assert message.cells == [1, 2, 3]
    assert len(message.content) < 8_000
    assert "characters cut" in message.content
    assert "ValueError: xxx" in message.content


def test_the_budget_keeps_the_newest_cells_and_says_what_was_left_out(
    shell: InteractiveShell, log: CellLog
) -> None:
    context = NotebookContext()
    run(shell, "first = 0")
    collect(context, shell, log)
    run(shell, *[f"c{i} = '{'w' * 300}'" for i in range(30)])
    message = collect(context, shell, log, budget=2_000)
    assert len(message.content) <= 2_000
    assert message.cells[-1] == 31 and message.cells[0] > 2
    assert message.left_out == (2, message.cells[0] - 1)
    assert f"In [2] to In [{message.cells[0] - 1}] left out" in message.content


def test_a_secret_in_a_source_or_a_result_never_reaches_the_text(
    shell: InteractiveShell, log: CellLog
) -> None:
    run(shell, f"token = '{KEY}'", "token", "{'key': token}")
    message = collect(NotebookContext(), shell, log)
    assert KEY not in message.content and "[redacted" in message.content


def test_recent_cells_skip_agent_cells(shell: InteractiveShell, log: CellLog) -> None:
    run(shell, "a = 1", "%%agent\nhi", "b = 2")
    assert [c.number for c in recent_cells(shell, 5)] == [1, 3]


def test_an_error_from_before_the_log_is_its_last_error(shell: InteractiveShell) -> None:
    run(shell, "1 / 0")
    last = CellLog().last()
    assert last is not None and last.cell == 0 and "ZeroDivisionError" in last.full


def test_the_model_gets_the_context_as_a_user_message_before_the_prompt(
    shell: InteractiveShell, log: CellLog
) -> None:
    run(shell, "df = {'age': [1]}", "df['BMI']")
    message = collect(NotebookContext(), shell, log)
    faux = register_faux_provider(token_size=(1, 1))
    faux.set_responses([faux_assistant_message("the column is missing")])
    agent = Agent(model=faux.get_model())
    agent.convert_to_llm = with_notebook_context(agent.convert_to_llm)
    asyncio.run(agent.prompt([message, parse_agent_message({"role": "user", "content": "why?"})]))
    sent = faux.requests[0].context.messages
    assert [m.role for m in sent] == ["user", "user"]
    assert "KeyError: 'BMI'" in sent[0].content[0].text
    assert is_notebook_context(agent.state.messages[0])


def test_it_is_saved_and_read_back_as_a_notebook_context_message(
    shell: InteractiveShell, log: CellLog
) -> None:
    run(shell, "a = 1")
    message = collect(NotebookContext(), shell, log)
    back = parse_agent_message(json.loads(json.dumps(message.to_json_dict())))
    assert is_notebook_context(back)
    assert with_notebook_context(lambda ms: ms)([back])[0].content[0].text == message.content
    assert describe(back) == describe(message)
    assert isinstance(message, NotebookContextMessage)


def test_err_expands_to_the_last_error_and_err_n_to_a_cells(
    shell: InteractiveShell, log: CellLog
) -> None:
    from pi_notebook.notebook.expansion import ErrorText, ExpansionError, expand

    names = {"Err": ErrorText(log)}
    with pytest.raises(ExpansionError, match="no cell has raised an error"):
        expand("why {Err}", {}, names)
    run(shell, "x = 1", f"raise KeyError('{KEY}')", "y = 2", "[][3]")
    text = expand("why?\n{Err}", shell.user_ns, names)
    assert text.startswith("why?\nTraceback (most recent call last):")
    assert text.endswith("IndexError: list index out of range")
    assert "[][3]" in text and "interactiveshell" not in text
    second = expand("{Err[2]}", shell.user_ns, names)
    assert "KeyError" in second and KEY not in second
    with pytest.raises(ExpansionError, match="cell 3 raised no error"):
        expand("{Err[3]}", shell.user_ns, names)
    assert expand("{Err}", {"Err": "mine"}, names) == "mine"  # the notebook's own name wins
    assert expand("{In[1]}", shell.user_ns, names) == "x = 1"


def test_the_notebook_cells_and_last_error_tools_read_the_kernel(
    shell: InteractiveShell, log: CellLog
) -> None:
    run(shell, "a = 41", "a + 1", "%%agent\nhi", f"secret = '{KEY}'", "{}['BMI']")
    tools = {t.name: t for t in notebook_tools(shell.user_ns)}
    assert not tools["notebook_cells"].writes_namespace
    assert not tools["last_error"].writes_namespace
    faux = register_faux_provider(token_size=(1, 1))
    calls = [faux_tool_call("notebook_cells", {"last": 3}), faux_tool_call("last_error", {})]
    faux.set_responses(
        [faux_assistant_message(calls, stop_reason="toolUse"), faux_assistant_message("done")]
    )
    agent = Agent(model=faux.get_model(), tools=list(tools.values()))
    asyncio.run(agent.prompt("look"))
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    cells, error = (r.content[0].text for r in results)  # type: ignore[union-attr]
    assert [r.is_error for r in results] == [False, False]
    assert cells.startswith("In [2]:\n```python\na + 1\n```\nOut[2]: 42")
    assert "hi" not in cells and KEY not in cells and "Error in In [5]: KeyError" in cells
    assert error.startswith("The last error, from In [5]:\nTraceback (most recent call last):")
    assert error.endswith("KeyError: 'BMI'")


def test_cells_run_without_storing_history_are_seen_as_nbval_runs_them(
    shell: InteractiveShell, log: CellLog
) -> None:
    for cell in ("import json", "frame = {'age': [1]}", "frame", "frame['BMI']"):
        shell.run_cell(cell, store_history=False)  # nbval's way: IPython keeps no history
    assert shell.execution_count == 1 and len(shell.history_manager.input_hist_raw) == 1
    message = collect(NotebookContext(), shell, log)
    assert message.cells == [1, 2, 3, 4] and message.errors == [4]
    assert "Out[3]: {'age': [1]}" in message.content
    assert "Error in In [4]: KeyError: 'BMI'" in message.content
    shell.run_cell("%%agent\nwhy?", store_history=False)
    shell.run_cell("after = 1", store_history=False)
    context = NotebookContext(seen=4)
    assert collect(context, shell, log).cells == [6]


def test_the_log_holds_only_the_last_results(shell: InteractiveShell, log: CellLog) -> None:
    from pi_notebook.tools.cells import KEPT_VALUES

    run(shell, *[f"[{i}] * 3" for i in range(KEPT_VALUES + 4)])
    held = [number for number, cell in log.cells.items() if cell.value is not None]
    assert held == list(range(5, KEPT_VALUES + 5))
    assert log.cells[1].source == "[0] * 3" and log.cells[1].has_value
