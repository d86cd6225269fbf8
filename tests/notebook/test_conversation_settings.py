"""Tools and the approval policy belong to the conversation and stay until a cell changes them.

A real kernel (plain mode, no approver: a call that needs an approval is refused with the
reason, which is how the tests see whether the policy applied). Synchronisation is on kernel
replies.
"""

from __future__ import annotations

from .conftest import Kernel

SETUP = """
import pi_notebook.notebook as pn
import pi_notebook.tools as pt
from pi_notebook.ai import faux_assistant_message as reply, faux_tool_call, register_faux_provider

def run_python(code):
    return reply([faux_tool_call('run_python', {'code': code})], stop_reason='toolUse')
pt.set_approver(None)
"""

REFUSED = "tool run_python (error): approval required (--approve writes) but no approver"


def script(kernel: Kernel, name: str, turns: str) -> None:
    kernel.ok(SETUP)
    kernel.ok(
        f"{name} = register_faux_provider(token_size=(1, 1))\n"
        f"{name}.set_responses({turns})\n"
        f"pn.use_model({name})\n"
        "%agent reset"
    )


def test_the_approval_policy_stays_with_the_conversation_until_approve_none(
    kernel: Kernel,
) -> None:
    script(
        kernel,
        "c1",
        "[run_python('a = 1'), reply('refused'), run_python('b = 2'), reply('refused again'),"
        " run_python('c = 3'), reply('ran')]",
    )
    first = kernel.ok("%%agent --tools notebook --approve writes\nGo").stdout
    assert REFUSED in first
    # The next cell, without --approve: the policy did not lapse.
    second = kernel.ok("%%agent\nAgain").stdout
    assert REFUSED in second
    assert kernel.ok("print('a' in dir(), 'b' in dir())").stdout == "False False\n"
    status = kernel.ok("%agent status").stdout
    assert "tools: list_variables, inspect_variable, run_python, set_variable" in status
    assert "approvals: writes (asks before a tool writes variables or runs code)" in status
    third = kernel.ok("%%agent --approve none\nNow run it").stdout
    assert "approval required" not in third
    assert kernel.ok("print(c)").stdout == "3\n"
    assert "approvals: none (tools run without asking)" in kernel.ok("%agent status").stdout


def test_new_and_reset_keep_tools_and_policy(kernel: Kernel) -> None:
    script(kernel, "c2", "[reply('hi'), run_python('d = 4'), reply('x'), run_python('e = 5'), "
                         "reply('y')]")  # fmt: skip
    kernel.ok("%%agent --tools notebook --approve writes\nHello")
    assert REFUSED in kernel.ok("%%agent --new\nGo").stdout
    kernel.ok("%agent reset")
    assert REFUSED in kernel.ok("%%agent\nGo").stdout
    kernel.ok("%%agent --approve none --no-tools\nBye")  # leave the default conversation clean


def test_no_tools_removes_every_tool_and_tools_sets_exactly_these(kernel: Kernel) -> None:
    script(kernel, "c3", "[reply('one'), reply('two'), reply('three')]")
    kernel.ok(
        "from pi_notebook.tools import tool\n"
        "@tool\n"
        "def ping() -> str:\n"
        "    '''Ping.'''\n"
        "    return 'pong'\n"
    )
    kernel.ok("%%agent --tools notebook\nOne")
    kernel.ok("%%agent --tools ping\nTwo")  # replaces: exactly these tools from now on
    assert "tools: ping\n" in kernel.ok("%agent status").stdout
    kernel.ok("%%agent --no-tools\nThree")
    status = kernel.ok("%agent status").stdout
    assert "tools: none\n" in status
    assert kernel.ok("print(pn.session().current.state.tools)").stdout == "[]\n"
    clash = kernel.run("%%agent --tools ping --no-tools\nFour")
    assert clash.status == "error" and "contradict" in str(clash.error)
