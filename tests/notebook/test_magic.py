"""``%%agent`` and ``%agent`` in a real kernel (jupyter_client), on faux models scripted in it.

Synchronisation is on kernel messages (outputs, replies, idle), never on sleeps.
"""

from __future__ import annotations

import queue
import time
from typing import Any

from .conftest import Kernel

SETUP = """
import asyncio
import pi_notebook.notebook as pn
from pi_notebook.ai import faux_assistant_message, register_faux_provider
"""


def script(kernel: Kernel, name: str, replies: list[str], tps: float | None = None) -> None:
    """Register faux provider ``name`` in the kernel with ``replies`` and make it current."""
    kernel.ok(SETUP)
    kernel.ok(
        f"{name} = register_faux_provider(token_size=(1, 1), tokens_per_second={tps!r})\n"
        f"{name}.set_responses([faux_assistant_message(t) for t in {replies!r}])\n"
        f"pn.use_model({name})\n"
        "%agent reset"
    )


def test_cell_completes_and_prints_transcript(kernel: Kernel) -> None:
    script(kernel, "f1", ["Hello there."])
    result = kernel.ok("%%agent\nHi")
    assert result.stdout == "user: Hi\nassistant: Hello there.\n"
    assert kernel.ok("print(repr(_agent_reply))").stdout == "'Hello there.'\n"
    assert "'Hello there.'" in kernel.ok("%agent last").text


def test_conversation_persists_across_cells_and_reset(kernel: Kernel) -> None:
    script(kernel, "f2", ["First.", "Second."])
    kernel.ok("%%agent\nOne")
    second = kernel.ok("%%agent\nTwo")
    assert second.stdout == "user: Two\nassistant: Second.\n"
    history = kernel.ok("%agent history").stdout
    assert history == "user: One\nassistant: First.\nuser: Two\nassistant: Second.\n"
    status = kernel.ok("%agent status").stdout
    assert "model: faux/faux-1 (from use_model())" in status
    assert "messages: 4, turns: 2" in status
    assert kernel.ok("%agent reset").stdout == "conversation reset\n"
    assert kernel.ok("%agent history").stdout == "\n"
    # f2's script is exhausted: the run still ends, with a readable error line.
    third = kernel.ok("%%agent\nThree")
    assert "assistant [error]: No more faux responses queued" in third.stdout


def test_prompt_expands_notebook_variables(kernel: Kernel) -> None:
    script(kernel, "f3", ["ok"])
    kernel.ok("who = 'Ada'\nitems = [1, 2, 3]")
    result = kernel.ok("%%agent\nGreet {who}: {sum(items) * 2} {{literal}} $who")
    assert result.stdout.startswith("user: Greet Ada: 12 {literal} $who\n")


def test_bad_option_is_a_usage_error_and_nothing_runs(kernel: Kernel) -> None:
    script(kernel, "f4", ["never"])
    result = kernel.run("%%agent --bogus\nHi")
    assert result.status == "error"
    assert result.error is not None and result.error["ename"] == "UsageError"
    assert "unrecognized arguments: --bogus" in result.error["evalue"]
    assert "usage: %%agent" in result.error["evalue"]
    bad_turns = kernel.run("%%agent --max-turns zero\nHi")
    assert bad_turns.error is not None and bad_turns.error["ename"] == "UsageError"
    assert kernel.ok("print(f4.call_count, f4.pending_response_count())").stdout == "0 1\n"
    assert kernel.ok("%agent history").stdout == "\n"


def test_help_prints_usage_and_runs_nothing(kernel: Kernel) -> None:
    script(kernel, "f5", ["never"])
    result = kernel.ok("%%agent --help\nHi")
    assert "usage: %%agent" in result.stdout
    assert "--step" in result.stdout and "panel" in result.stdout
    assert "--background" in result.stdout
    assert kernel.ok("print(f5.call_count)").stdout == "0\n"


def test_unknown_line_command_is_a_usage_error(kernel: Kernel) -> None:
    result = kernel.run("%agent frobnicate")
    assert result.error is not None and result.error["ename"] == "UsageError"
    assert "unknown command 'frobnicate'" in result.error["evalue"]


def test_missing_key_is_one_readable_line(kernel: Kernel) -> None:
    script(kernel, "f6", ["never"])
    result = kernel.run("%%agent --model openai/gpt-4.1-mini\nHi")
    assert result.error is not None and result.error["ename"] == "UsageError"
    assert "no API key for openai/gpt-4.1-mini: set OPENAI_API_KEY" in result.error["evalue"]
    assert result.error.get("traceback", []) == []
    unknown = kernel.run("%%agent --model nosuch/model\nHi")
    assert unknown.error is not None and "Unknown provider: nosuch" in unknown.error["evalue"]
    # the conversation keeps its model
    assert "model: faux/faux-1" in kernel.ok("%agent status").stdout


def test_model_from_namespace_and_demo(kernel: Kernel) -> None:
    script(kernel, "f7", ["from the namespace"])
    kernel.ok("%agent model demo")
    demo = kernel.ok("%%agent\nHello")
    assert "I am `demo`" in demo.stdout and "ANTHROPIC_API_KEY" in demo.stdout
    kernel.ok("%agent reset")
    assert "from the namespace" in kernel.ok("%%agent --model f7\nHi").stdout
    status = kernel.ok("%agent status").stdout
    assert "from --model" in status


def test_steer_before_a_run_is_delivered_with_it(kernel: Kernel) -> None:
    script(kernel, "f8", ["Both read."])
    assert "queued" in kernel.ok("%agent steer Also mention {1 + 1}").stdout
    assert "queued: 1 steering" in kernel.ok("%agent status").stdout
    result = kernel.ok("%%agent\nFirst ask")
    assert result.stdout == "user: First ask\nuser: Also mention 2\nassistant: Both read.\n"


def test_steer_mid_run_is_delivered_at_next_turn(kernel: Kernel) -> None:
    kernel.ok(SETUP)
    kernel.ok(
        "gate = asyncio.Event()\n"
        "async def first(ctx, opts, state, model):\n"
        "    await gate.wait()\n"
        "    return faux_assistant_message('Working on it.')\n"
        "f9 = register_faux_provider(token_size=(1, 1))\n"
        "f9.set_responses([first, faux_assistant_message('Steered!')])\n"
        "pn.use_model(f9)\n"
        "%agent reset"
    )
    started = kernel.ok("%%agent --background\nLong task")
    assert "running in the background" in started.text
    assert "running: yes" in kernel.ok("%agent status").stdout
    kernel.ok("%agent steer Change of plan")
    kernel.ok("gate.set()\nawait pn.wait()")
    history = kernel.ok("%agent history").stdout
    assert history == (
        "user: Long task\nassistant: Working on it.\nuser: Change of plan\nassistant: Steered!\n"
    )
    assert kernel.ok("print(_agent_reply)").stdout == "Steered!\n"


def test_kernel_interrupt_cancels_the_run_and_next_cell_works(kernel: Kernel) -> None:
    kernel.ok(SETUP)
    kernel.ok(
        "slow = register_faux_provider(token_size=(1, 1), tokens_per_second=20)\n"
        "def first(ctx, opts, state, model):\n"
        "    print('model called', flush=True)\n"
        "    return faux_assistant_message('one two three four five six seven ' * 10)\n"
        "slow.set_responses([first, faux_assistant_message('After the interrupt.')])\n"
        "pn.use_model(slow)\n"
        "%agent reset"
    )
    sent: list[bool] = []

    def interrupt_once(out: dict[str, Any]) -> None:
        if not sent and "model called" in out.get("text", ""):
            sent.append(True)
            kernel.km.interrupt_kernel()

    result = kernel.run("%%agent\nGo", timeout=60, on_output=interrupt_once)
    assert sent  # the run was interrupted mid-stream: the error and [aborted] below prove it
    assert result.status == "error"
    assert result.error is not None and result.error["ename"] == "CancelledError"
    assert "assistant [aborted]" in result.stdout
    assert "[interrupted" in result.stdout
    # the next cell runs normally and the transcript is valid (one closed, aborted turn)
    events = kernel.ok(
        "evs = [e['type'] for e in pn.session().last_events]\n"
        "print(evs[0], evs[-1], evs.count('turn_start') == evs.count('turn_end'))"
    ).stdout
    assert events == "agent_start agent_end True\n"
    after = kernel.ok("%%agent\nAgain")
    assert after.stdout == "user: Again\nassistant: After the interrupt.\n"
    roles = kernel.ok("print([m.role for m in pn.session().default.state.messages])").stdout
    assert roles == "['user', 'assistant', 'user', 'assistant']\n"


def test_second_cell_queued_during_a_run_runs_after_it(kernel: Kernel) -> None:
    kernel.ok(SETUP)
    kernel.ok(
        "q = register_faux_provider(token_size=(1, 1), tokens_per_second=200)\n"
        "q.set_responses([faux_assistant_message('first answer ' * 5),"
        " faux_assistant_message('second answer')])\n"
        "pn.use_model(q)\n"
        "%agent reset"
    )
    kc = kernel.kc
    first = kc.execute("%%agent\nCell one")
    second = kc.execute("%%agent\nCell two")
    streams: list[tuple[str, str]] = []
    idle: set[str] = set()
    deadline = time.monotonic() + 60
    while idle != {first, second}:
        try:
            msg = kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"timed out; got {streams}") from None
        parent = msg["parent_header"].get("msg_id")
        if parent not in (first, second):
            continue
        kind = msg["header"]["msg_type"]
        if kind == "stream":
            streams.append((parent, msg["content"]["text"]))
        elif kind == "status" and msg["content"]["execution_state"] == "idle":
            idle.add(parent)
    for msg_id in (first, second):
        assert kc.get_shell_msg(timeout=10)["parent_header"]["msg_id"] == msg_id
    text = "".join(t for _, t in streams)
    assert [p for p, _ in streams] == sorted((p for p, _ in streams), key=[first, second].index)
    assert text.index("user: Cell one") < text.index("user: Cell two")
    assert "assistant: second answer" in text
    history = kernel.ok("%agent history").stdout
    assert history.index("Cell one") < history.index("Cell two")


def test_events_and_max_turns(kernel: Kernel) -> None:
    kernel.ok(SETUP)
    kernel.ok(
        "from pi_notebook.agent import AgentTool, AgentToolResult\n"
        "from pi_notebook.ai import TextContent\n"
        "ADD = AgentTool(name='add', parameters={'type': 'object', 'properties': "
        "{'a': {'type': 'number'}, 'b': {'type': 'number'}}}, execute=lambda i, p, s, u: "
        "AgentToolResult(content=[TextContent(text=str(p['a'] + p['b']))]))\n"
        "from pi_notebook.ai import faux_tool_call\n"
        "t = register_faux_provider(token_size=(1, 1))\n"
        "t.set_responses([faux_assistant_message([faux_tool_call('add', {'a': 1, 'b': 2})],"
        " stop_reason='toolUse'), faux_assistant_message('3')])\n"
        "pn.use_model(t)\n"
        "%agent reset"
    )
    result = kernel.ok("%%agent --tools ADD --max-turns 1\nAdd 1 and 2")
    assert result.stdout == (
        'user: Add 1 and 2\nassistant -> add({"a": 1, "b": 2})\ntool add: 3\n'
        "[turn limit of 1 reached: 1 turn run]\n"
    )
    assert kernel.ok("print(t.pending_response_count())").stdout == "1\n"
    types = kernel.ok("evs = %agent events\nprint([e['type'] for e in evs])").stdout
    assert types.startswith("['agent_start', 'turn_start', 'message_start', 'message_end'")
    assert types.count("'turn_start'") == 1 and types.endswith("'agent_end']\n")


def test_unknown_tool_is_a_usage_error(kernel: Kernel) -> None:
    result = kernel.run("%%agent --tools nope\nHi")
    assert result.error is not None and result.error["ename"] == "UsageError"
    assert "unknown tool 'nope'" in result.error["evalue"]


def test_without_autoawait_the_magic_falls_back_to_a_background_run(kernel: Kernel) -> None:
    script(kernel, "f10", ["fallback answer"])
    kernel.ok("%autoawait off")
    try:
        started = kernel.ok("%%agent\nHi")
        assert "autoawait is off" in started.text
    finally:
        kernel.ok("%autoawait on")
    kernel.ok("await pn.wait()")
    assert kernel.ok("%agent history").stdout == "user: Hi\nassistant: fallback answer\n"


def test_status_says_how_cells_run(kernel: Kernel) -> None:
    script(kernel, "f11", ["unused"])
    status = kernel.ok("%agent status").stdout
    assert "run mode: the cell awaits the run on the kernel's loop (it stays busy" in status
