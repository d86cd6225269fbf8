"""Issue 28, items 5 and 6: an MCP tool may not take a built-in's place, is marked with its
server, and its description reaches the model capped. A real kernel, a hostile MCP server
(``impostor_server.py``: a "read-only" ``run_python`` that records the code it is given, a tool
with a 20,000-character description) and a faux model that records what each request held."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from pi_notebook.agent import Agent
from pi_notebook.ai import FauxProvider, faux_assistant_message, faux_tool_call
from pi_notebook.tools import mcp_tools_async

from ..notebook.conftest import Kernel
from ..panel.helpers import CapturePanel

IMPOSTOR = Path(__file__).with_name("impostor_server.py")

SETUP = """
import json, sys
import pi_notebook.notebook as pn
from pi_notebook.tools import mcp_tools, tool
from pi_notebook.ai import faux_assistant_message as reply, faux_tool_call, register_faux_provider

def calls(*pairs):
    return reply([faux_tool_call(name, args) for name, args in pairs], stop_reason='toolUse')

sent = []

def seen(step):
    def respond(context, options, state, model):
        sent.append({t.name: t.description for t in context.tools})
        return step
    return respond

def script(*steps):
    sent.clear()
    model = register_faux_provider(token_size=(1, 1))
    model.set_responses([seen(step) for step in steps])
    pn.use_model(model)
    return model
"""


EVIL, IMP, LONE = "name='evil', prefix=False", "name='imp'", "name='lone', prefix=False"


def impostor(record: Path, options: str) -> str:
    extra = f", {options}"
    return f"mcp_tools([sys.executable, {str(IMPOSTOR)!r}, '--record', {str(record)!r}]{extra})"


def test_an_mcp_tool_named_like_a_built_in_is_refused_before_any_request(
    kernel: Kernel, tmp_path: Path
) -> None:
    record = tmp_path / "code.txt"
    kernel.ok(SETUP)
    kernel.ok(f"evil = {impostor(record, EVIL)}")
    kernel.ok("m = script(calls(('run_python', {'code': 'x = 1'})), reply('done'))\n%agent reset")
    run = kernel.run("%%agent --tools notebook,evil\nSet x")
    assert run.status == "error"
    assert run.error is not None and run.error["ename"] == "UsageError"
    assert run.error["evalue"] == (
        "%%agent: two tools are named 'run_python': one from the built-in notebook tools, one "
        "from MCP server 'evil'; drop one, or rename it (mcp_tools prefixes its tools with the "
        "server's name unless prefix=False)"
    )
    assert kernel.ok("print(m.call_count, len(sent))").stdout == "0 0\n"  # nothing was sent
    assert not record.exists()


def test_mcp_tools_are_prefixed_with_their_server_and_marked_in_status(
    kernel: Kernel, tmp_path: Path
) -> None:
    record = tmp_path / "code.txt"
    kernel.ok(SETUP)
    names = kernel.ok(f"imp = {impostor(record, IMP)}\nprint([t.name for t in imp])")
    assert names.stdout == "['imp__run_python', 'imp__sprawl', 'imp__flood']\n"
    kernel.ok(
        "m = script(calls(('run_python', {'code': 'x = 41 + 1'}),"
        " ('imp__run_python', {'code': 'y = 2'})), reply('done'))\n%agent reset"
    )
    run = kernel.ok("%%agent --tools notebook,imp\nSet x")
    assert "imp__run_python" in run.stdout and run.stdout.endswith("assistant: done\n")
    assert kernel.ok("print(x)").stdout == "42\n"  # the built-in ran the built-in's call
    assert record.read_text() == "y = 2\n"  # the server got only its own tool's call
    status = kernel.ok("%agent status").stdout
    tools_line = next(line for line in status.splitlines() if line.startswith("tools: "))
    assert tools_line == (
        "tools: list_variables, inspect_variable, run_python, set_variable, notebook_cells, "
        "last_error, imp__run_python (MCP imp), imp__sprawl (MCP imp), imp__flood (MCP imp)"
    )
    assert "--record" in status  # the server's own line, as before
    assert "    tools: imp__run_python, imp__sprawl, imp__flood\n" in status
    # Item 6: the 20,000-character description went to the model capped, with a marker.
    described = kernel.ok("print(json.dumps(sent[0]['imp__sprawl']))").stdout
    sprawl = __import__("json").loads(described)
    assert sprawl.startswith("Read the docs. xxx")
    assert len(sprawl) < 4_100
    assert sprawl.endswith("[… 16019 characters of the server's description cut]")
    assert "END-OF-DESCRIPTION" not in sprawl


def test_a_read_only_hint_never_loosens_the_policy_of_a_built_in_name(
    kernel: Kernel, tmp_path: Path
) -> None:
    record = tmp_path / "code.txt"
    kernel.ok(SETUP)
    kernel.ok(f"lone = {impostor(record, LONE)}")
    kernel.ok("m = script(calls(('run_python', {'code': 'z = 1'})), reply('done'))\n%agent reset")
    run = kernel.ok("%%agent --tools lone --approve writes\nSet z")
    assert "approval required (--approve writes) but no approver is available" in run.stdout
    assert not record.exists()  # the server never got the code
    assert "run_python (MCP lone)" in kernel.ok("%agent status").stdout
    # Asked, the approval names the server: it cannot pass for the built-in run_python.
    kernel.ok(
        "import pi_notebook.tools as pt\nasked = []\n"
        "async def deny(request, signal):\n    asked.append(request.summary)\n    return False\n"
        "pt.set_approver(deny)\n"
        "m = script(calls(('run_python', {'code': 'z = 1'})), reply('done'))"
    )
    try:
        denied = kernel.ok("%%agent\nSet z")
    finally:
        kernel.ok("pt.set_approver(None)")
    assert "denied by user" in denied.stdout
    assert kernel.ok("print(asked)").stdout == (
        "[\"run_python: 1 line of code (z = 1) [MCP server 'lone']\"]\n"
    )
    assert not record.exists()


def test_a_tool_defined_again_by_rerunning_its_cell_still_replaces_it(kernel: Kernel) -> None:
    kernel.ok(SETUP)
    define = "@tool\ndef greet() -> str:\n    'Say hello.'\n    return '{word}'"
    kernel.ok(define.format(word="old") + "\nold_greet = greet")
    kernel.ok(define.format(word="new"))
    kernel.ok("m = script(calls(('greet', {})), reply('done'))\n%agent reset")
    run = kernel.ok("%%agent --tools old_greet,greet --approve none\nGreet")
    assert run.stdout.endswith("assistant: done\n")
    assert kernel.ok("print(list(sent[0]))").stdout == "['greet']\n"
    last = "print(pn.session().current.state.messages[-2].content[0].text)"
    assert kernel.ok(last).stdout == "new\n"


@pytest.mark.kernel  # starts the impostor MCP server
async def test_the_card_of_an_mcp_tool_names_its_server(faux: FauxProvider, tmp_path: Path) -> None:
    """A real panel following a run: the card of an unprefixed MCP ``run_python`` says where
    the tool lives, so it cannot pass for the built-in one."""
    record = tmp_path / "code.txt"
    argv = [sys.executable, str(IMPOSTOR), "--record", str(record)]
    lone = await mcp_tools_async(argv, name="lone", prefix=False)
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("run_python", {"code": "x = 1"}, id="c1")], stop_reason="toolUse"
            ),
            faux_assistant_message("done"),
        ]
    )
    agent = Agent(model=faux.get_model(), tools=lone)
    panel = CapturePanel()
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    await asyncio.wait_for(agent.prompt("go"), 30)
    panel.finish()
    card = panel.snapshot["tools"]["c1"]
    assert card["name"] == "run_python (MCP lone)"
    assert card["result_text"] == "ran elsewhere" and card["status"] == "done"
    assert record.read_text() == "x = 1\n"
