"""Issue 19, part 1: the agent's code lands in a cell below the ``%%agent`` cell.

In a real kernel (interactive mode: no ``PI_NOTEBOOK_UI``), the ``execute_reply`` of the
``%%agent`` cell carries one ``set_next_input`` payload (``replace=False``) with exactly the
code of the run's successful ``run_python`` calls and an assignment per ``set_variable``;
failed and undone calls are left out; ``--no-code-cell``, the setting, plain mode, background
runs and headless executors (nbclient, nbval: as they really send their requests) get none.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

from pi_notebook.notebook.code_cell import (
    CELL_HEADER,
    NOT_A_LITERAL,
    CodeBlock,
    RunCode,
    assignment,
    literal_repr,
)

from .conftest import ROOT, Kernel, kernel_env

SETUP = """\
import pi_notebook.notebook as pn
from pi_notebook.ai import faux_assistant_message as reply, faux_tool_call as call
from pi_notebook.ai import register_faux_provider

def calls(*items):
    return reply([call(name, args, id=i) for i, name, args in items], stop_reason='toolUse')
"""

#: One run: code, a failing call, literal and non-literal assignments, then the answer.
SCRIPT = """[
    calls(('call_1', 'run_python', {'code': 'import math\\nxs = [1, 2, 3]\\ntotal = sum(xs)\\n'})),
    calls(('call_2', 'run_python', {'code': '1 / 0'})),
    calls(('call_3', 'set_variable', {'name': 'threshold', 'expression': '0.5'}),
          ('call_4', 'set_variable', {'name': 'n', 'expression': 'len(xs)'}),
          ('call_5', 'set_variable', {'name': 'r', 'expression': 'range(n)'})),
    reply('Done.'),
]"""

EXPECTED = f"""{CELL_HEADER}

# run_python (call 1)
import math
xs = [1, 2, 3]
total = sum(xs)

# set_variable (call 3)
threshold = 0.5

# set_variable (call 4)
n = 3  # len(xs)

# set_variable (call 5); {NOT_A_LITERAL}
r = range(n)
"""

NAMES = ("math", "xs", "total", "threshold", "n", "r")


def _script(kernel: Kernel, name: str, script: str = SCRIPT) -> None:
    kernel.ok(
        SETUP + f"{name} = register_faux_provider(token_size=(1, 1))\n"
        f"{name}.set_responses({script})\npn.use_model({name})\n"
        f"for _name in {NAMES!r}:\n    globals().pop(_name, None)\n"
    )


def _execute(kernel: Kernel, code: str, **request: Any) -> dict[str, Any]:
    """Run ``code`` with the given execute_request fields; the reply's content."""
    reply = kernel.kc.execute_interactive(code, timeout=60, output_hook=lambda msg: None, **request)
    content: dict[str, Any] = reply["content"]
    assert content["status"] == "ok", content
    return content


def _offered(content: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in content.get("payload", []) if p.get("source") == "set_next_input"]


AGENT_CELL = "%%agent --tools notebook\nCompute things."


def test_the_reply_carries_the_code_of_the_run_as_a_new_cell(ui_kernel: Kernel) -> None:
    _script(ui_kernel, "cc1")
    content = _execute(ui_kernel, AGENT_CELL)
    assert _offered(content) == [{"source": "set_next_input", "text": EXPECTED, "replace": False}]
    printed = ui_kernel.ok("%agent code").stdout
    assert printed == EXPECTED


def test_the_offered_code_recreates_the_variables_in_a_fresh_namespace(ui_kernel: Kernel) -> None:
    _script(ui_kernel, "cc2")
    text = _offered(_execute(ui_kernel, AGENT_CELL))[0]["text"]
    agent_values = ui_kernel.ok("print(repr((xs, total, threshold, n, r)))").stdout
    fresh = ui_kernel.ok(
        f"_ns = {{}}\nexec({text!r}, _ns)\n"
        "print(repr(tuple(_ns[k] for k in ('xs', 'total', 'threshold', 'n', 'r'))))"
    )
    assert fresh.stdout == agent_values


def test_undone_calls_are_left_out(ui_kernel: Kernel) -> None:
    _script(ui_kernel, "cc3")
    _execute(ui_kernel, AGENT_CELL)
    ui_kernel.ok("total = 100  # the user's own work since the run")
    undo = ui_kernel.ok("%agent undo").stdout
    assert "kept total" in undo
    code = ui_kernel.ok("%agent code").stdout
    # call_1 also wrote `total`, which undo kept: its code stays; the assignments were undone.
    assert code == f"{CELL_HEADER}\n\n# run_python (call 1)\n" + (
        "import math\nxs = [1, 2, 3]\ntotal = sum(xs)\n"
    )
    assert ui_kernel.ok("%agent undo").stdout.startswith("nothing left to undo")
    assert ui_kernel.ok("%agent code").stdout == code


def test_a_fully_undone_run_has_no_code_left(ui_kernel: Kernel) -> None:
    _script(ui_kernel, "cc4")
    _execute(ui_kernel, AGENT_CELL)
    ui_kernel.ok("%agent undo")
    assert ui_kernel.ok("%agent code").stdout == (
        "no code: the last run's code was undone (%agent undo)\n"
    )


def test_code_cell_again_offers_the_last_code(ui_kernel: Kernel) -> None:
    _script(ui_kernel, "cc5")
    _execute(ui_kernel, "%%agent --tools notebook --no-code-cell\nCompute things.")
    content = _execute(ui_kernel, "%agent code --cell")
    assert _offered(content) == [{"source": "set_next_input", "text": EXPECTED, "replace": False}]


@pytest.mark.parametrize(
    ("setup", "options"),
    [
        ("", "--no-code-cell"),
        ("", "--plain"),
        ("pn.settings.code_cell = False", ""),
        ("%env PI_NOTEBOOK_CODE_CELL=off", ""),
    ],
    ids=["--no-code-cell", "--plain", "settings", "env"],
)
def test_switched_off_no_cell_is_offered(ui_kernel: Kernel, setup: str, options: str) -> None:
    _script(ui_kernel, "cc6")
    ui_kernel.ok(setup)
    try:
        content = _execute(ui_kernel, f"%%agent --tools notebook {options}\nCompute things.")
        assert _offered(content) == []
        assert ui_kernel.ok("%agent code").stdout == EXPECTED  # still there to print
    finally:
        ui_kernel.ok("pn.settings.code_cell = None\n%env PI_NOTEBOOK_CODE_CELL=")


def test_a_run_that_wrote_nothing_offers_no_cell(ui_kernel: Kernel) -> None:
    _script(ui_kernel, "cc7", "[calls(('c1', 'run_python', {'code': '1 / 0'})), reply('No.')]")
    content = _execute(ui_kernel, AGENT_CELL)
    assert _offered(content) == []


def test_headless_requests_get_no_cell(ui_kernel: Kernel) -> None:
    # What nbval sends (nbval/kernel.py: store_history=False, allow_stdin=False) and what
    # nbclient / papermill send (allow_stdin=False): see also the real runs below.
    for request in ({"store_history": False, "allow_stdin": False}, {"allow_stdin": False}):
        _script(ui_kernel, "cc8")
        content = _execute(ui_kernel, AGENT_CELL, **request)
        assert _offered(content) == [], request
        reason = ui_kernel.ok(
            "from pi_notebook.notebook import code_cell\n"
            "print(code_cell.last_code(pn.session().current).not_offered)"
        ).stdout
        assert "being executed" in reason


def test_a_background_run_offers_no_cell_in_any_reply(ui_kernel: Kernel) -> None:
    _script(ui_kernel, "cc9")
    first = _execute(ui_kernel, "%%agent --tools notebook --background\nCompute things.")
    joined = _execute(ui_kernel, "await pn.wait()")
    after = _execute(ui_kernel, "1 + 1")
    assert _offered(first) == _offered(joined) == _offered(after) == []
    assert _offered(_execute(ui_kernel, "%agent code --cell"))[0]["text"] == EXPECTED


# -- real headless executors -------------------------------------------------------------------


@pytest.fixture
def ui_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    env = kernel_env(tmp_path)
    env.pop("PI_NOTEBOOK_UI")
    yield env


def _notebook() -> nbformat.NotebookNode:
    cells = [
        "%load_ext pi_notebook\n" + SETUP + "f = register_faux_provider(token_size=(1, 1))\n"
        f"f.set_responses({SCRIPT})\n_ = pn.use_model(f)",
        AGENT_CELL,
        "from pi_notebook.notebook import code_cell\n"
        "print(code_cell.last_code(pn.session().current).not_offered)",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    notebook.cells[1].metadata["tags"] = ["nbval-ignore-output"]  # the panel's widget ids
    return notebook


HEADLESS = "the notebook is being executed (nbclient, papermill, nbval: no input allowed)\n"


@pytest.mark.kernel
def test_nbclient_gets_no_cell(ui_env: dict[str, str], tmp_path: Path) -> None:
    notebook = _notebook()
    replies: list[dict[str, Any]] = []
    km = KernelManager(kernel_name="python3")
    client = NotebookClient(
        notebook,
        km=km,
        on_cell_executed=lambda cell, cell_index, execute_reply: replies.append(execute_reply),
    )
    km.start_kernel(env=ui_env, cwd=str(tmp_path))
    try:
        client.execute(cleanup_kc=True)
    finally:
        km.shutdown_kernel(now=True)
    assert [_offered(r["content"]) for r in replies] == [[], [], []]
    assert notebook.cells[2].outputs[0]["text"] == HEADLESS


@pytest.mark.kernel
def test_nbval_gets_no_cell(ui_env: dict[str, str], tmp_path: Path) -> None:
    notebook = _notebook()
    notebook.cells[0].outputs = []
    notebook.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text=HEADLESS)]
    for count, cell in enumerate(notebook.cells, 1):
        cell.execution_count = count
    path = tmp_path / "headless.ipynb"
    nbformat.write(notebook, path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval",
            "-p",
            "no:cacheprovider",
            "-q",
            "-o",
            "addopts=",
            str(path),
        ],
        cwd=ROOT,
        env=ui_env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "3 passed" in done.stdout


# -- the pieces ----------------------------------------------------------------------------------


def test_a_literal_expression_is_kept_as_written() -> None:
    assert assignment("x", " [1, 2,  3] ", [1, 2, 3], True) == ("x = [1, 2,  3]", None)
    assert assignment("s", "{'a': (1, 2.5)}", {"a": (1, 2.5)}, True)[1] is None


def test_a_literal_value_is_written_with_its_expression_as_a_comment() -> None:
    assert assignment("n", "len(df)", 3, True) == ("n = 3  # len(df)", None)
    assert assignment("t", "'a' * 3", "aaa", True) == ("t = 'aaa'  # 'a' * 3", None)


def test_a_value_that_is_no_literal_reruns_the_expression_with_a_note() -> None:
    assert assignment("r", "range(3)", range(3), True) == ("r = range(3)", NOT_A_LITERAL)
    # A walrus (or anything that binds differently on one line) keeps the tool's parentheses.
    code, note = assignment("y", "(z := object())", object(), True)
    assert note == NOT_A_LITERAL and code == "y = (z := object())"
    # A multi-line expression (a comment in it, say) keeps the tool's parentheses too.
    code, note = assignment("w", "sorted(  # order\n  xs)", [1], False)
    assert (code, note) == ("w = (\nsorted(  # order\n  xs)\n)", NOT_A_LITERAL)


def test_literal_repr_needs_an_equal_value_of_the_same_type() -> None:
    class Tagged(str):
        pass

    assert literal_repr([1, "a", None, (2.5, b"x")]) == "[1, 'a', None, (2.5, b'x')]"
    assert literal_repr(Tagged("a")) is None
    assert literal_repr(float("nan")) is None
    assert literal_repr(list(range(10_000))) is None  # too long to be a readable literal


def test_a_secret_in_the_code_is_redacted_and_said() -> None:
    token = "ghp_" + "A1b2C3d4E5" * 4
    block = CodeBlock("c1", "run_python", f"token = {token!r}", None, frozenset({"token"}))
    text = RunCode([block]).text()
    assert token not in text
    assert "# run_python (call 1); a secret was redacted from this code" in text


def test_json_of_the_payload_round_trips() -> None:
    # The payload crosses the wire as JSON: the text is a plain str.
    run = RunCode([CodeBlock("c1", "run_python", "x = 1", None, frozenset({"x"}))])
    assert json.loads(json.dumps({"text": run.text()}))["text"].endswith("x = 1\n")


def test_another_tool_that_writes_leaves_a_comment_not_code() -> None:
    from pi_notebook.agent import (
        Agent,
        AgentTool,
        AgentToolResult,
        ToolExecutionEndEvent,
        ToolExecutionStartEvent,
    )
    from pi_notebook.notebook.code_cell import CodeRecorder

    commit = AgentTool(
        name="commit", description="", parameters={}, execute=lambda *a: None, writes_namespace=True
    )
    recorder = CodeRecorder(Agent(tools=[commit]), {})
    recorder(ToolExecutionStartEvent("m1", "commit", {}))
    recorder(ToolExecutionEndEvent("m1", "commit", AgentToolResult(), False))
    (block,) = recorder.run.blocks
    assert block.text(block.number) == (
        "# commit (call 1); its effects are not code and are not repeated here"
    )
    assert not recorder.run.has_code()  # comments alone are no cell
