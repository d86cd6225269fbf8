"""The notebook tools in a real kernel (jupyter_client), with a faux model scripting the calls.

Synchronisation is on kernel replies and threading events set by the agent's own code, never
on sleeps.
"""

from __future__ import annotations

import json
import time
from typing import Any

from .conftest import Kernel

SETUP = """
import asyncio, json, threading, time
import numpy as np
import pandas as pd
import pi_notebook.notebook as pn
import pi_notebook.tools as pt
from pi_notebook.ai import faux_assistant_message as reply, faux_tool_call, register_faux_provider

def calls(*pairs):
    return reply([faux_tool_call(name, args) for name, args in pairs], stop_reason='toolUse')

def tool_results():
    out = []
    for m in pn.session().current.state.messages:
        if m.role == 'toolResult':
            text = '\\n'.join(b.text for b in m.content if b.type == 'text')
            diff = (m.details or {}).get('namespace_diff') if isinstance(m.details, dict) else None
            out.append({'name': m.tool_name, 'error': m.is_error, 'text': text, 'diff': diff})
    print(json.dumps(out))
"""


def script(kernel: Kernel, name: str, turns: str) -> None:
    """A faux model ``name`` answering with ``turns`` (a Python list expression in the kernel)."""
    kernel.ok(SETUP)
    kernel.ok(
        f"{name} = register_faux_provider(token_size=(1, 1))\n"
        f"{name}.set_responses({turns})\n"
        f"pn.use_model({name})\n"
        "%agent reset"
    )


def results(kernel: Kernel) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(kernel.ok("tool_results()").stdout)
    return found


def test_agent_lists_inspects_and_changes_variables_then_undo(kernel: Kernel) -> None:
    kernel.ok(
        "import pandas as pd\n"
        "df = pd.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [3.5, 19.0]})\n"
        "counts = [1, 2]\nlabel = 'before'"
    )
    script(
        kernel,
        "k1",
        "[calls(('list_variables', {})), calls(('inspect_variable', {'name': 'df'})),"
        " calls(('run_python', {'code': \"df['temp_f'] = df.temp * 9 / 5 + 32\\n"
        "counts.append(3)\\nmean = float(df.temp.mean())\\nprint('mean', mean)\"}),"
        " ('set_variable', {'name': 'label', 'expression': \"'after'\"})), reply('Done.')]",
    )
    run = kernel.ok("%%agent --tools notebook\nTidy the data")
    assert run.stdout.endswith("assistant: Done.\n")
    listed, inspected, ran, labelled = results(kernel)
    lines = listed["text"].splitlines()
    assert lines == sorted(lines)
    starts = ("counts: list len 2 [", "df: pandas.DataFrame (2, 2) [", "label: str len 6 [")
    assert all(any(line.startswith(start) for line in lines) for start in starts)
    names = {line.split(":")[0] for line in lines}
    assert not names & {"k1", "pn", "pd", "json", "In", "Out", "get_ipython", "_"}
    assert inspected["text"].startswith("df: pandas.DataFrame: 2 rows x 2 columns")
    assert "Oslo" in inspected["text"] and "describe:" in inspected["text"]
    assert ran["diff"] == {"created": ["mean"], "changed": ["counts", "df"], "deleted": []}
    assert ran["text"].startswith("stdout:\nmean 11.25\n")
    assert labelled["diff"] == {"created": [], "changed": ["label"], "deleted": []}
    # The next cell sees the agent's changes.
    seen = kernel.ok("print(list(df.columns), counts, mean, label)").stdout
    assert seen == "['city', 'temp', 'temp_f'] [1, 2, 3] 11.25 after\n"
    undone = kernel.ok("%agent undo").stdout
    assert undone == "restored: counts, df, label\nremoved (created by the agent): mean\n"
    after = kernel.ok("print(list(df.columns), counts, 'mean' in dir(), label)").stdout
    assert after == "['city', 'temp'] [1, 2] False before\n"
    assert kernel.ok("%agent undo").stdout == (  # a second undo (issue 16 item 4)
        "nothing left to undo: the last run's changes were already undone\n"
    )


def test_protected_names_are_refused(kernel: Kernel) -> None:
    kernel.ok("budget = 100\nimport pi_notebook.tools as pt\npt.protect('budget')")
    script(
        kernel,
        "k2",
        "[calls(('set_variable', {'name': 'budget', 'expression': '0'})),"
        " calls(('run_python', {'code': 'np = None'})),"
        " calls(('run_python', {'code': 'k2 = 1'})),"
        " calls(('run_python', {'code': 'Out = {}'})), reply('ok')]",
    )
    kernel.ok("%%agent --tools notebook\nTry")
    found = results(kernel)
    assert [r["error"] for r in found] == [True, True, True, True]
    assert [r["text"] for r in found] == [
        "refused: writing protected names is not allowed ('budget' is marked protected by "
        "the user)",
        "refused: writing protected names is not allowed ('np' is a module)",
        "refused: writing protected names is not allowed ('k2' is one of the agent's objects)",
        "refused: writing protected names is not allowed ('Out' is one of IPython's own names)",
    ]
    assert kernel.ok("print(budget, np.__name__, type(k2).__name__)").stdout == (
        "100 numpy FauxProvider\n"
    )


def test_one_approval_granted_and_one_denied(kernel: Kernel) -> None:
    kernel.ok(
        "asked = []\nanswers = [True, False]\n"
        "async def approver(request, signal):\n"
        "    asked.append(request.summary)\n"
        "    return answers.pop(0)\n"
        "import pi_notebook.tools as pt\npt.set_approver(approver)"
    )
    script(
        kernel,
        "k3",
        "[calls(('list_variables', {})),"
        " calls(('set_variable', {'name': 'granted', 'expression': '1 + 1'})),"
        " calls(('run_python', {'code': 'denied = 1'})), reply('ok')]",
    )
    run = kernel.ok("%%agent --tools notebook --approve writes\nGo")
    assert "tool run_python (error): denied by user" in run.stdout
    found = results(kernel)
    assert [(r["name"], r["error"]) for r in found] == [
        ("list_variables", False),
        ("set_variable", False),
        ("run_python", True),
    ]
    assert kernel.ok("print(asked, granted, 'denied' in dir())").stdout == (
        "['set_variable: granted = 1 + 1', 'run_python: 1 line of code (denied = 1)'] 2 False\n"
    )
    # Without an approver (plain mode, none set) a write is refused, saying why.
    kernel.ok("pt.set_approver(None)")
    script(kernel, "k3b", "[calls(('run_python', {'code': 'nope = 1'})), reply('ok')]")
    refused = kernel.ok("%%agent --tools notebook --approve all\nGo").stdout
    assert "tool run_python (error): approval required (--approve all) but no approver" in refused
    # The policy belongs to the conversation: it stays until --approve none turns it off.
    script(kernel, "k3c", "[calls(('run_python', {'code': 'free = 1'})), reply('ok')]")
    kernel.ok("%%agent --tools notebook --approve none\nGo")
    assert kernel.ok("print(free)").stdout == "1\n"


def test_function_tools_raising_tool_and_redefinition(kernel: Kernel) -> None:
    kernel.ok(
        "from pi_notebook.tools import tool\n"
        "@tool\n"
        "def divide(a: float, b: float) -> float:\n"
        "    '''Divide a by b.'''\n"
        "    return a / b\n"
        "@tool\n"
        "def version() -> str:\n"
        "    '''The version.'''\n"
        "    return 'v1'\n"
    )
    script(
        kernel,
        "k4",
        "[calls(('divide', {'a': 1, 'b': 0})), calls(('divide', {'a': '9', 'b': '3'})),"
        " calls(('version', {})), reply('ok'), calls(('version', {})), reply('ok')]",
    )
    first = kernel.ok("%%agent --tools divide,version notebook\nDivide").stdout
    assert "tool divide (error): float division by zero" in first
    assert "tool divide: 3.0" in first and "tool version: v1" in first
    assert first.endswith("assistant: ok\n")
    kernel.ok("@tool\ndef version() -> str:\n    '''The version.'''\n    return 'v2'\n")
    second = kernel.ok("%%agent\nAgain").stdout  # no --tools: the agent keeps its tools
    assert "tool version: v2" in second


def test_abort_stops_a_long_run_python_promptly(kernel: Kernel) -> None:
    for code in ("go.set()\\nwhile True: pass", "import time\\ngo.set()\\ntime.sleep(60)"):
        kernel.ok("import threading\ngo = threading.Event()")
        script(
            kernel, "k5", f"[calls(('run_python', {{'code': '{code}'}})), reply('never reached')]"
        )
        kernel.ok("%%agent --tools notebook --background\nSpin")
        measured = kernel.ok(
            "assert go.wait(10)\n"
            "t0 = time.perf_counter()\n"
            "pn.session().current.abort()\n"
            "await asyncio.wait_for(pn.wait(), 20)\n"  # the code never ends by itself
            "print(f'{time.perf_counter() - t0:.4f}')"
        ).stdout
        latency = float(measured)  # printed (bench/ measures it), never asserted
        print(f"abort -> run ended ({code!r}): {latency * 1000:.1f} ms")
        (result,) = results(kernel)
        assert result["error"] and result["text"].startswith("aborted after")
        assert kernel.ok("print(threading.active_count())").stdout.strip().isdigit()
        history = kernel.ok("%agent history").stdout
        assert "never reached" not in history


def test_inspect_stays_bounded_on_a_10_million_row_dataframe(kernel: Kernel) -> None:
    kernel.ok(
        "n = 10_000_000\n"
        "big = pd.DataFrame({'id': np.arange(n), 'x': np.random.default_rng(0).random(n),"
        " 'g': np.where(np.arange(n) % 3 == 0, 'a', 'b')})"
    )
    script(kernel, "k6", "[calls(('inspect_variable', {'name': 'big'})), reply('ok')]")
    kernel.ok("%%agent --tools notebook\nLook", timeout=120)
    (result,) = results(kernel)
    text = result["text"]
    assert text.startswith("big: pandas.DataFrame: 10000000 rows x 3 columns")
    assert len(text) <= 4000 + len("big: ")
    timed = kernel.ok(
        "inspect = [t for t in pt.notebook_tools() if t.name == 'inspect_variable'][0]\n"
        "t0 = time.perf_counter()\n"
        "r = await inspect.execute('id', {'name': 'big'}, None, lambda p: None)\n"
        "print(len(r.content[0].text), f'{time.perf_counter() - t0:.3f}')",
        timeout=120,
    ).stdout.split()
    print(f"inspect_variable on 10M rows: {timed[0]} characters in {timed[1]} s")
    kernel.ok("del big")


def test_kernel_interrupt_stops_a_long_run_python(kernel: Kernel) -> None:
    # A display of run_python's own thread is its result's; one from a thread it starts
    # reaches the cell (it says the code is running).
    code = (
        "import threading\\nfrom IPython.display import display\\n"
        'threading.Thread(target=display, args=("spinning",)).start()\\nwhile True: pass'
    )
    script(kernel, "k7", f"[calls(('run_python', {{'code': '{code}'}})), reply('never reached')]")
    interrupted: list[float] = []

    def on_output(out: dict[str, Any]) -> None:
        if not interrupted and "spinning" in str(out.get("data", {}).get("text/plain", "")):
            interrupted.append(time.perf_counter())
            kernel.km.interrupt_kernel()

    result = kernel.run("%%agent --tools notebook\nSpin", timeout=30, on_output=on_output)
    ended = time.perf_counter()
    assert interrupted, result.outputs
    print(f"kernel interrupt -> cell finished: {(ended - interrupted[0]) * 1000:.1f} ms")
    assert result.status == "error" and result.error is not None
    assert result.error["ename"] == "CancelledError"
    (tool_result,) = results(kernel)
    assert tool_result["error"] and tool_result["text"].startswith("aborted after")
    assert kernel.ok("print('still usable')").stdout == "still usable\n"


def test_with_the_panel_approvals_are_asked_in_the_panel(kernel: Kernel) -> None:
    """Panel mode: --approve asks the live panel; its Approve/Deny messages answer."""
    script(
        kernel,
        "k8",
        "[reply([faux_tool_call('set_variable', {'name': 'ok_var', 'expression': '1'}, id='a1'),"
        " faux_tool_call('run_python', {'code': 'no_var = 1'}, id='a2')], stop_reason='toolUse'),"
        " reply('done')]",
    )
    kernel.ok("import os\nos.environ['PI_NOTEBOOK_UI'] = 'panel'\npt.set_approver(None)")
    try:
        kernel.ok("%%agent --tools notebook --approve writes --background\nGo")
        answers = kernel.ok(
            "import asyncio\n"
            "async def card(call_id):\n"
            "    for _ in range(10_000):  # yield to the run until its card is published\n"
            "        cards = _agent_panel.snapshot['approvals']\n"
            "        if any(c['tool_call_id'] == call_id for c in cards):\n"
            "            return [c['summary'] for c in cards]\n"
            "        await asyncio.sleep(0)\n"
            "    raise AssertionError('no approval card for ' + call_id)\n"
            "shown = [await card('a1')]\n"
            "_agent_panel.handle_message({'type': 'approval', 'tool_call_id': 'a1', "
            "'approved': True})\n"
            "shown.append(await card('a2'))\n"
            "_agent_panel.handle_message({'type': 'approval', 'tool_call_id': 'a2', "
            "'approved': False})\n"
            "await pn.wait()\n"
            "print(json.dumps(shown))"
        ).stdout
    finally:
        kernel.ok("os.environ['PI_NOTEBOOK_UI'] = 'plain'")
    assert json.loads(answers) == [
        ["set_variable: ok_var = 1"],
        ["run_python: 1 line of code (no_var = 1)"],
    ]
    assert [(r["name"], r["error"], r["text"]) for r in results(kernel)][1] == (
        "run_python",
        True,
        "denied by user",
    )
    assert kernel.ok("print(ok_var, 'no_var' in dir())").stdout == "1 False\n"
