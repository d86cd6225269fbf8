"""Undo in a real kernel: a user cell run during a --background run is never the agent's write,
and two agents running at once each have their own undo record (issue 14 item 1).

Synchronisation is on threading events set by the agent's code and the cells, never on sleeps.
"""

from __future__ import annotations

from .conftest import Kernel
from .test_kernel_tools import SETUP, results, script


def undo_lines(kernel: Kernel, code: str = "%agent undo") -> list[str]:
    """What undo said, without its notes on the threading events (they cannot be copied)."""
    lines = kernel.ok(code).stdout.splitlines()
    return [line for line in lines if "cannot be copied" not in line]


def test_a_cell_run_during_a_background_run_is_not_the_agents_write(kernel: Kernel) -> None:
    kernel.ok("import threading\ngo, release = threading.Event(), threading.Event()")
    code = "go.set()\\nassert release.wait(10)\\nagent_var = 1"
    script(kernel, "u1", f"[calls(('run_python', {{'code': '{code}'}})), reply('done')]")
    kernel.ok("%%agent --tools notebook --background\nWork")
    # The user works while the agent's code runs.
    kernel.ok("assert go.wait(10)\nmine = 'user'\nrelease.set()")
    kernel.ok("await pn.wait()")
    (result,) = results(kernel)
    assert result["diff"] == {"created": ["agent_var"], "changed": [], "deleted": []}
    assert "mine" not in result["text"]  # not in the diff the model is told
    assert undo_lines(kernel) == ["removed (created by the agent): agent_var"]
    assert kernel.ok("print(mine, 'agent_var' in dir())").stdout == "user False\n"


def test_a_dynamic_write_in_a_foreground_run_is_the_agents(kernel: Kernel) -> None:
    script(
        kernel,
        "u2",
        "[calls(('run_python', {'code': \"globals()['dynamic'] = 1\"})), reply('done')]",
    )
    kernel.ok("%%agent --tools notebook\nWrite")
    (result,) = results(kernel)
    assert result["diff"] == {"created": ["dynamic"], "changed": [], "deleted": []}
    assert kernel.ok("%agent undo").stdout == "removed (created by the agent): dynamic\n"


def test_two_agents_at_once_have_their_own_undo_records(kernel: Kernel) -> None:
    kernel.ok(SETUP)
    kernel.ok(
        "one_waits, two_done = threading.Event(), threading.Event()\n"
        "f1 = register_faux_provider(token_size=(1, 1))\n"
        "f1.set_responses([calls(('run_python', {'code': "
        "'one_var = 1\\none_waits.set()\\nassert two_done.wait(10)'})), reply('one done')])\n"
        "f2 = register_faux_provider(token_size=(1, 1))\n"
        "f2.set_responses([calls(('run_python', {'code': 'two_var = 2'})), reply('two done')])"
    )
    kernel.ok("%%agent --agent one --model f1 --tools notebook --background\nFirst")
    kernel.ok("assert one_waits.wait(10)")
    kernel.ok("%%agent --agent two --model f2 --tools notebook\nSecond")
    kernel.ok("two_done.set()\nawait pn.wait()")
    assert kernel.ok("print(one_var, two_var, _agent_reply)").stdout == "1 2 one done\n"
    # %agent undo acts on the conversation of the last %%agent cell: two's.
    assert undo_lines(kernel) == ["removed (created by the agent): two_var"]
    assert kernel.ok("print(one_var, 'two_var' in dir(), _agent_reply)").stdout == (
        "1 False one done\n"
    )
    assert undo_lines(kernel, "print(pt.undo(conversation=one).text())") == [
        "removed (created by the agent): one_var"
    ]
    assert kernel.ok("print('one_var' in dir(), _agent_reply)").stdout == "False one done\n"


def test_undo_keeps_the_agents_imports_for_the_users_later_cells(kernel: Kernel) -> None:
    """Issue 27: ``import math as m`` is an import in the diff; ``%agent undo`` removes ``x``
    but leaves ``m``, so a cell of the user's that uses ``m`` works; ``--all`` removes it."""
    code = "import math as m\\nx = m.pi"
    turns = f"[calls(('run_python', {{'code': '{code}'}})), reply('done')]"
    script(kernel, "u4", turns)
    kernel.ok("%%agent --new --tools notebook\nUse math")
    (result,) = results(kernel)
    assert result["diff"] == {"created": ["x"], "changed": [], "deleted": [], "imported": ["m"]}
    assert "namespace: created x; imported m" in result["text"]
    assert kernel.ok("%agent undo").stdout == (
        "removed (created by the agent): x\nkept imports: m (undo --all removes them)\n"
    )
    # The user's later cell uses the agent's import: it works, and x is gone.
    assert kernel.ok("print(m.sqrt(16), 'x' in dir())").stdout == "4.0 False\n"
    assert kernel.ok("%agent undo --all").stdout == "removed (created by the agent): m\n"
    assert kernel.ok("print('m' in dir())").stdout == "False\n"
    # The same run again, undone with --all at once: the import goes with the variable.
    script(kernel, "u5", turns)
    kernel.ok("%%agent --new --tools notebook\nUse math")
    assert kernel.ok("%agent undo --all").stdout == "removed (created by the agent): m, x\n"
    assert kernel.ok("print('m' in dir(), 'x' in dir())").stdout == "False False\n"
    bad = kernel.run("%agent undo --al")
    assert bad.error is not None
    assert bad.error["evalue"] == "%agent undo: unknown option '--al'; expected --all or nothing"
