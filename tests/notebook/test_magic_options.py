"""``%%agent`` options in a real kernel: --agent, --new, --system, --background, bad --model.

A faux response factory records what each model call saw (system prompt, thinking level, the
number of messages), so every option is checked by its effect on the request, not on a flag.
"""

from __future__ import annotations

import queue
import time

from .conftest import Kernel

SETUP = """
import asyncio
import pi_notebook.notebook as pn
from pi_notebook.ai import faux_assistant_message, register_faux_provider

def spy(provider, seen):
    '''A response factory that records the request and answers with its call number.'''
    def respond(context, options, state, model):
        seen.append({
            'system': context.system_prompt,
            'reasoning': getattr(options, 'reasoning', None),
            'messages': len(context.messages),
        })
        return faux_assistant_message(f'answer {len(seen)}')
    return respond
"""


def scripted(kernel: Kernel, name: str, calls: int, tps: float | None = None) -> None:
    """Faux provider ``name`` answering ``calls`` times, recording requests in ``name_seen``."""
    kernel.ok(SETUP)
    kernel.ok(
        f"{name} = register_faux_provider(token_size=(1, 1), tokens_per_second={tps!r})\n"
        f"{name}_seen = []\n"
        f"{name}.set_responses([spy({name}, {name}_seen)] * {calls})\n"
        f"pn.use_model({name})\n"
        "%agent reset"
    )


def test_system_prompt_and_thinking_reach_the_request(kernel: Kernel) -> None:
    scripted(kernel, "s1", 2)
    kernel.ok("%%agent --system 'You are terse.' --thinking high\nHi")
    seen = kernel.ok("print(s1_seen[-1]['system'], s1_seen[-1]['reasoning'])").stdout
    assert seen == "You are terse. high\n"
    # Options persist on the conversation: the next cell keeps them.
    kernel.ok("%%agent\nAgain")
    assert kernel.ok("print(s1_seen[-1]['system'], s1_seen[-1]['messages'])").stdout == (
        "You are terse. 3\n"
    )


def test_bad_thinking_level_is_a_usage_error(kernel: Kernel) -> None:
    result = kernel.run("%%agent --thinking extreme\nHi")
    assert result.error is not None and result.error["ename"] == "UsageError"
    assert "extreme" in result.error["evalue"]


def test_new_starts_a_fresh_conversation_on_the_same_model(kernel: Kernel) -> None:
    scripted(kernel, "s2", 3)
    kernel.ok("%%agent\nOne")
    kernel.ok("%%agent\nTwo")
    assert kernel.ok("print(s2_seen[-1]['messages'])").stdout == "3\n"
    fresh = kernel.ok("%%agent --new\nThree")
    assert fresh.stdout == "user: Three\nassistant: answer 3\n"
    assert kernel.ok("print(s2_seen[-1]['messages'])").stdout == "1\n"
    assert kernel.ok("%agent history").stdout == "user: Three\nassistant: answer 3\n"


def test_named_agent_is_stored_and_kept_apart_from_the_default(kernel: Kernel) -> None:
    scripted(kernel, "s3", 4)
    kernel.ok("%%agent\nDefault one")
    kernel.ok("%%agent --agent helper --model s3\nHelper one")
    assert kernel.ok("print(type(helper).__name__, len(helper.state.messages))").stdout == (
        "Agent 2\n"
    )
    kernel.ok("%%agent --agent helper\nHelper two")
    # The line commands act on the agent of the last cell: the named one.
    assert kernel.ok("%agent history").stdout == (
        "user: Helper one\nassistant: answer 2\nuser: Helper two\nassistant: answer 3\n"
    )
    kernel.ok("%%agent\nDefault two")
    assert kernel.ok("%agent history").stdout == (
        "user: Default one\nassistant: answer 1\nuser: Default two\nassistant: answer 4\n"
    )
    # --agent with a name that holds something else is refused, and nothing runs.
    kernel.ok("not_an_agent = 5")
    result = kernel.run("%%agent --agent not_an_agent\nHi")
    assert result.error is not None and result.error["ename"] == "UsageError"
    assert "is a int, not an Agent" in result.error["evalue"]
    assert kernel.ok("print(len(s3_seen))").stdout == "4\n"


def test_unknown_model_is_one_readable_line(kernel: Kernel) -> None:
    result = kernel.run("%%agent --model nosuchprovider/x\nHi")
    assert result.error is not None and result.error["ename"] == "UsageError"
    assert "nosuchprovider" in result.error["evalue"]
    assert "Traceback" not in result.error["evalue"]


def test_background_run_is_steered_and_inspected_from_other_cells(kernel: Kernel) -> None:
    kernel.ok(SETUP)
    kernel.ok(
        # The first answer waits for the test's go, so the run is surely still going when the
        # status is read and the steer is sent (however loaded the machine).
        "go = asyncio.Event()\n"
        "async def held(*_):\n"
        "    await go.wait()\n"
        "    return faux_assistant_message('long answer ' * 20)\n"
        "b = register_faux_provider(token_size=(1, 1), tokens_per_second=100)\n"
        "b.set_responses([held, faux_assistant_message('steered answer')])\n"
        "pn.use_model(b)\n"
        "%agent reset"
    )
    started = kernel.ok("%%agent --background\nBackground prompt")
    assert "running in the background" in started.text
    # The cell returned at once: the run goes on while other cells execute.
    status = kernel.ok("%agent status").stdout
    assert "running: yes" in status
    kernel.ok("%agent steer change course\ngo.set()")
    kernel.ok("await pn.wait()")
    history = kernel.ok("%agent history").stdout
    assert history.endswith("user: change course\nassistant: steered answer\n"), history
    assert "running: no" in kernel.ok("%agent status").stdout


def test_background_result_updates_its_own_output(kernel: Kernel) -> None:
    """The run's transcript replaces the 'running in the background' note in place."""
    kernel.ok(SETUP)
    kernel.ok(
        "bg = register_faux_provider(token_size=(1, 1))\n"
        "bg.set_responses([faux_assistant_message('done in background')])\n"
        "pn.use_model(bg)\n"
        "%agent reset"
    )
    kc = kernel.kc
    msg_id = kc.execute("%%agent --background\nGo")
    display_id = None
    updated = None
    deadline = time.monotonic() + 60
    while updated is None:
        try:
            msg = kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError("no update_display_data arrived") from None
        kind = msg["header"]["msg_type"]
        if kind == "display_data" and msg["parent_header"].get("msg_id") == msg_id:
            display_id = msg["content"]["transient"]["display_id"]
        elif (
            kind == "update_display_data"
            and display_id is not None
            and msg["content"]["transient"]["display_id"] == display_id
        ):
            updated = msg["content"]["data"]["text/plain"]
    assert updated == "user: Go\nassistant: done in background"
    kc.get_shell_msg(timeout=10)
