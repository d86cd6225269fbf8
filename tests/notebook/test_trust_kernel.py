"""Issue 14 in real kernels: secrets never reach the model or an output, lone surrogates do not
break a conversation, ``%agent events`` stays bounded, and prompt expansion runs once.

Plain mode uses the shared plain kernel; panel mode the UI kernel of ``test_panel_kernel``,
driven by its :class:`PanelClient` (the front end's side of the comm).
"""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any

from .conftest import Kernel
from .test_panel_kernel import PanelClient, run_cell

GITHUB = "ghp_" + "K3rn3lT0k3n" * 3 + "abc"
HF = "hf_" + "kernelkernel" * 3
AWS_ID = "AKIAKERNELTEST00EXMP"
AWS_SECRET = "kErNeL/sEcReT+4cc3ss/k3y0123456789abcde"
DB_PASSWORD = "db-pa55-kernel"
SECRETS = (GITHUB, HF, AWS_ID, AWS_SECRET, DB_PASSWORD)

SECRET_SETUP = f"""
import json, os
import pi_notebook.notebook as pn
from pi_notebook.ai import faux_assistant_message as reply, faux_tool_call, register_faux_provider
os.environ.update(GITHUB_TOKEN={GITHUB!r}, HF_TOKEN={HF!r}, AWS_ACCESS_KEY_ID={AWS_ID!r},
                  AWS_SECRET_ACCESS_KEY={AWS_SECRET!r}, DB_PASSWORD={DB_PASSWORD!r})
seen_by_model = []

def calls(*pairs):
    return reply([faux_tool_call(n, a) for n, a in pairs], stop_reason='toolUse')

def echo(context, options, state, model):
    for m in context.messages:
        if m.role == 'toolResult':
            seen_by_model.extend(b.text for b in m.content if b.type == 'text')
    return reply('I found ' + os.environ['GITHUB_TOKEN'] + ' in the environment.')
"""

SCRIPT = (
    "[calls(('inspect_variable', {'name': 'os.environ'})),"
    " calls(('run_python', {'code': \"import os\\nprint(os.getenv('GITHUB_TOKEN'))\\n"
    "print(os.environ['DB_PASSWORD'], os.environ['AWS_SECRET_ACCESS_KEY'])\"})),"
    " echo]"
)


def _assistant_text(state: dict[str, Any]) -> str:
    """The assistant text of a panel state, as its HTML reads."""
    html = "".join(
        "".join(b["html"]) + b["tail"]
        for m in state["messages"]
        if m["role"] == "assistant"
        for b in m["blocks"]
        if b["type"] == "text"
    )
    return unescape(re.sub(r"<[^>]+>", "", html)).strip()


def _panel_state(kernel: Kernel) -> dict[str, Any]:
    """The finished panel's state in the kernel (what a snapshot to a view carries)."""
    state: dict[str, Any] = json.loads(
        kernel.ok("import json\nprint(json.dumps(_agent_panel.snapshot))").stdout
    )
    return state


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def _secret_run(kernel: Kernel, name: str, gate: bool = False) -> None:
    kernel.ok(SECRET_SETUP)
    script = f"[after_view(m) for m in {SCRIPT}]" if gate else SCRIPT  # gate: a view follows
    kernel.ok(
        f"{name} = register_faux_provider(token_size=(1, 1))\n"
        f"{name}.set_responses({script})\n"
        f"pn.use_model({name})\n"
        "%agent reset"
    )


def test_secrets_never_reach_the_model_or_plain_outputs(kernel: Kernel) -> None:
    _secret_run(kernel, "s1")
    run = kernel.ok("%%agent --tools notebook\nWhat is in my environment?")
    assert "assistant: I found [redacted: GITHUB_TOKEN] in the environment." in run.stdout
    assert _leaks(run.stdout) == []
    seen = json.loads(kernel.ok("print(json.dumps(seen_by_model))").stdout)
    environ, printed = seen
    assert _leaks(environ) == [] and _leaks(printed) == []
    assert "'GITHUB_TOKEN': '[redacted: GITHUB_TOKEN]'" in environ
    assert "'HF_TOKEN': '[redacted: HF_TOKEN]'" in environ
    assert "'AWS_ACCESS_KEY_ID': '[redacted: AWS_ACCESS_KEY_ID]'" in environ
    assert printed.startswith(
        "stdout:\n[redacted: GITHUB_TOKEN]\n"
        "[redacted: DB_PASSWORD] [redacted: AWS_SECRET_ACCESS_KEY]\n"
    )
    for command in ("%agent history", "%agent status", "last = %agent last\nprint(last)"):
        assert _leaks(kernel.ok(command).stdout) == [], command
    events = kernel.ok("evs = %agent events\nprint(json.dumps(evs))").stdout
    assert _leaks(events) == [] and "[redacted: GITHUB_TOKEN]" in events


def test_secrets_never_reach_the_panel_its_state_or_the_static_output(ui_kernel: Kernel) -> None:
    _secret_run(ui_kernel, "s2", gate=True)
    client = PanelClient(ui_kernel)
    assert run_cell(ui_kernel, "%%agent --tools notebook\nWhat is in my environment?", client) == (
        "ok"
    )
    # The panel's state in the kernel (a finished panel is closed, so no widget state is saved
    # with the notebook) and the state the view rebuilt from what the comm carried.
    saved = _panel_state(ui_kernel)
    assert _assistant_text(saved) == "I found [redacted: GITHUB_TOKEN] in the environment."
    assert _leaks(json.dumps(saved)) == []
    assert client.state is not None and _assistant_text(client.state) == _assistant_text(saved)
    assert _leaks(json.dumps(client.state)) == []
    static = client.updates[-1]
    assert _leaks(static["text/html"]) == [] and _leaks(static["text/plain"]) == []
    assert "[redacted: GITHUB_TOKEN]" in static["text/html"]


SURROGATE_SETUP = """
import pi_notebook.notebook as pn
from pi_notebook.agent import AgentTool, AgentToolResult
from pi_notebook.ai import TextContent, faux_assistant_message as reply, faux_tool_call
from pi_notebook.ai import register_faux_provider

def listing(tool_call_id, params, signal, on_update):
    result = AgentToolResult(content=[TextContent(text='')])
    result.content[0].text = 'caf\\udce9.txt'  # os.listdir on a non-UTF-8 name
    return result

LS = AgentTool(name='ls', parameters={'type': 'object'}, execute=listing)

def calls(*pairs):
    return reply([faux_tool_call(n, a) for n, a in pairs], stop_reason='toolUse')
"""


def _surrogate_run(kernel: Kernel, name: str) -> None:
    kernel.ok(SURROGATE_SETUP)
    kernel.ok(
        f"{name} = register_faux_provider(token_size=(1, 1))\n"
        f"{name}.set_responses([calls(('ls', {{}})),"
        " calls(('run_python', {'code': \"print('x\\\\udcff')\"})),"
        " reply('bad \\udcff text'), reply('second answer')])\n"
        f"pn.use_model({name})\n"
        "%agent reset"
    )


def test_lone_surrogates_in_plain_mode_history_and_later_turns(kernel: Kernel) -> None:
    _surrogate_run(kernel, "u1")
    run = kernel.ok("%%agent --tools notebook LS\nList {chr(0xd800)} please")
    assert run.stdout.startswith("user: List \ufffd please\n")
    assert "tool ls: caf\ufffd.txt\n" in run.stdout
    assert "tool run_python: stdout:\n    x\ufffd\n" in run.stdout
    assert run.stdout.endswith("assistant: bad \ufffd text\n")
    history = kernel.ok("%agent history").stdout
    assert history == run.stdout
    # The next faux turn sees the whole (clean) transcript and answers.
    after = kernel.ok("%%agent\nAgain")
    assert after.stdout == "user: Again\nassistant: second answer\n"


def test_lone_surrogates_in_panel_mode(ui_kernel: Kernel) -> None:
    ui_kernel.ok(SURROGATE_SETUP)
    _surrogate_run(ui_kernel, "u2")
    client = PanelClient(ui_kernel)
    status = run_cell(ui_kernel, "%%agent --tools notebook LS\nList {chr(0xd800)} please", client)
    assert status == "ok"
    saved = _panel_state(ui_kernel)
    assert saved["status"]["state"] == "done"
    assert saved["messages"][0]["html"] == "<p>List \ufffd please</p>\n"
    assert "bad \ufffd text" in client.updates[-1]["text/html"]  # the comm carried it as UTF-8
    assert _assistant_text(saved) == "bad \ufffd text"
    assert "caf\ufffd.txt" in client.updates[-1]["text/plain"]
    assert ui_kernel.ok("%agent history").stdout.startswith("user: List \ufffd please\n")


def test_agent_events_is_bounded_by_the_reply_size(kernel: Kernel) -> None:
    kernel.ok(
        "import json\nimport pi_notebook.notebook as pn\n"
        "from pi_notebook.ai import faux_assistant_message, register_faux_provider\n"
        "big = register_faux_provider(token_size=(1, 1))\n"
        "big.set_responses([faux_assistant_message('word' * 10_000)])\n"
        "pn.use_model(big)\n"
        "%agent reset"
    )
    kernel.ok("%%agent\nTalk")
    out = kernel.ok(
        "evs = %agent events\n"
        "print(len(evs), len(json.dumps(evs)), [e['type'] for e in evs])\n"
        "print(json.dumps([e for e in evs if e.get('update') == 'text_delta']))"
    ).stdout
    first, second = out.splitlines()
    count, size, types = first.split(" ", 2)
    assert int(count) <= 12  # lifecycle events and one record for 10,000 deltas
    assert int(size) < 3 * 40_000 + 5_000  # the text about twice (delta + message), not 20,000x
    assert types.startswith("['agent_start', 'turn_start', 'message_start', 'message_end'")
    [deltas] = json.loads(second)
    assert deltas["deltas"] == 10_000 and deltas["delta"] == "word" * 10_000
    counts = kernel.ok("print(pn.session().last_run.events, pn.session().last_run.updates)")
    assert counts.stdout == "10010 10002\n"  # per-run counts are kept, not the events


def test_prompt_expressions_run_once_and_a_failure_names_the_expression(kernel: Kernel) -> None:
    kernel.ok(
        "import pi_notebook.notebook as pn\n"
        "from pi_notebook.ai import faux_assistant_message, register_faux_provider\n"
        "ex = register_faux_provider(token_size=(1, 1))\n"
        "ex.set_responses([faux_assistant_message('ok')])\n"
        "pn.use_model(ex)\n"
        "%agent reset\n"
        "runs = []\n"
        "def tick():\n"
        "    runs.append(1)\n"
        "    return len(runs)"
    )
    failed = kernel.run("%%agent\nCount {tick()} then {missing_name}")
    assert failed.error is not None and failed.error["ename"] == "UsageError"
    assert failed.error["evalue"] == (
        "%%agent: cannot expand {missing_name}: NameError: name 'missing_name' is not defined "
        "(write {{ for a literal brace)"
    )
    assert kernel.ok("print(len(runs), ex.call_count)").stdout == "1 0\n"
    kernel.ok("%agent steer step {tick()}")
    assert kernel.ok("print(len(runs))").stdout == "2\n"
    run = kernel.ok("%%agent\nCount {tick()}")
    assert run.stdout.startswith("user: Count 3\nuser: step 2\n")  # steering after the prompt


def test_empty_tools_option_is_an_error(kernel: Kernel) -> None:
    result = kernel.run("%%agent --tools ,,\nHi")
    assert result.error is not None and result.error["ename"] == "UsageError"
    assert "--tools names no tool (got ',,')" in result.error["evalue"]
