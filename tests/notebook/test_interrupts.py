"""A kernel interrupt reaches a cell that awaits a worker thread (real kernel, jupyter_client).

Without the extension's signal wake-up, ipykernel's loop sleeps in ``select`` until the thread
finishes, so the interrupt would wait for the thread's 120 s gate and these tests would time out.
The gate is never opened by the test before the interrupt has been answered.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from .conftest import Kernel

GATE = """
import asyncio, threading
gate = threading.Event()
def blocked():
    print('thread waiting', flush=True)
    gate.wait(120)
    return 'gate opened'
"""


def _interrupt_on(kernel: Kernel, marker: str) -> Any:
    sent: list[bool] = []

    def hook(out: dict[str, Any]) -> None:
        if not sent and marker in out.get("text", ""):
            sent.append(True)
            kernel.km.interrupt_kernel()

    return sent, hook


def test_the_extension_installs_the_wakeup(kernel: Kernel) -> None:
    out = kernel.ok(
        "import signal\nfrom pi_notebook.notebook import interrupts\n"
        "fd = signal.set_wakeup_fd(-1)\nsignal.set_wakeup_fd(fd)\n"
        "print(interrupts.installed(), fd != -1)"
    )
    assert out.stdout == "True True\n"


def test_interrupt_cancels_a_cell_awaiting_a_thread(kernel: Kernel) -> None:
    kernel.ok(GATE)
    sent, hook = _interrupt_on(kernel, "thread waiting")
    result = kernel.run("await asyncio.to_thread(blocked)", timeout=30, on_output=hook)
    assert sent
    assert result.status == "error"
    assert result.error is not None and result.error["ename"] == "CancelledError"
    assert kernel.ok("print(gate.is_set())").stdout == "False\n"
    kernel.ok("gate.set()")


def test_interrupt_during_a_tool_on_a_thread_aborts_the_run(kernel: Kernel) -> None:
    kernel.ok(GATE)
    kernel.ok(
        "import pi_notebook.notebook as pn\n"
        "from pi_notebook.ai import faux_assistant_message, faux_tool_call, "
        "register_faux_provider\n"
        "from pi_notebook.tools import tool\n"
        "@tool\n"
        "async def wait_for_gate() -> str:\n"
        "    '''Waits on a worker thread.'''\n"
        "    return await asyncio.to_thread(blocked)\n"
        "th = register_faux_provider(token_size=(1, 1))\n"
        "th.set_responses([faux_assistant_message([faux_tool_call('wait_for_gate', {})],"
        " stop_reason='toolUse'), faux_assistant_message('after')])\n"
        "pn.use_model(th)\n"
        "%agent reset"
    )
    sent, hook = _interrupt_on(kernel, "thread waiting")
    result = kernel.run("%%agent --tools wait_for_gate\nWait", timeout=30, on_output=hook)
    assert sent
    assert result.error is not None and result.error["ename"] == "CancelledError"
    events = kernel.ok(
        "evs = [e['type'] for e in pn.session().last_events]\n"
        "print(evs[-1], evs.count('turn_start') == evs.count('turn_end'),"
        " evs.count('tool_execution_start') == evs.count('tool_execution_end'))"
    ).stdout
    assert events == "agent_end True True\n"
    kernel.ok("gate.set()")
    # The transcript stays valid: the next cell runs on it.
    after = kernel.ok("%%agent\nAgain")
    assert after.stdout.endswith("assistant: after\n")


BLOCKING_TOOLS = """
import pi_notebook.notebook as pn
from pi_notebook.ai import faux_assistant_message, faux_tool_call, register_faux_provider
from pi_notebook.tools import tool

@tool
def sleeper() -> str:
    '''Sleeps for a very long time.'''
    import time
    print('sleeper blocking', flush=True)
    time.sleep(10**6)
    return 'woke up'

@tool
def spinner() -> str:
    '''Spins for ever.'''
    print('spinner blocking', flush=True)
    while True:
        pass

def blocking_script(name):
    faux = register_faux_provider(token_size=(1, 1))
    faux.set_responses([faux_assistant_message([faux_tool_call(name, {})], stop_reason='toolUse'),
                        faux_assistant_message('after ' + name)])
    pn.use_model(faux)
"""


@pytest.mark.parametrize("name", ["sleeper", "spinner"])
def test_interrupt_stops_a_blocking_sync_tool(kernel: Kernel, name: str) -> None:
    """A sync @tool runs on a worker thread: the stop button ends ``time.sleep`` and busy loops."""
    kernel.ok(BLOCKING_TOOLS)
    kernel.ok(f"blocking_script({name!r})\n%agent reset")
    sent_at: list[float] = []

    def on_output(out: dict[str, Any]) -> None:
        if not sent_at and f"{name} blocking" in out.get("text", ""):
            sent_at.append(time.perf_counter())
            kernel.km.interrupt_kernel()

    # Before the fix the tool ran on the event loop: the kernel stayed busy (a timeout here).
    result = kernel.run(f"%%agent --tools {name}\nBlock", timeout=30, on_output=on_output)
    assert sent_at, result.outputs
    print(f"interrupt -> reply ({name}): {(time.perf_counter() - sent_at[0]) * 1000:.0f} ms")
    assert result.error is not None and result.error["ename"] == "CancelledError"
    events = kernel.ok(
        "evs = [e['type'] for e in pn.session().last_events]\n"
        "print(evs[-1], evs.count('tool_execution_start') == evs.count('tool_execution_end'))"
    ).stdout
    assert events == "agent_end True\n"
    alive = kernel.ok(
        "import threading\n"
        "tool_threads = [t for t in threading.enumerate() if t.name.startswith('pi-tool')]\n"
        "for t in tool_threads:\n"
        "    t.join(10)\n"
        "print([t.name for t in tool_threads if t.is_alive()])"
    ).stdout
    assert alive == "[]\n"  # the tool's thread was stopped, not left running
    after = kernel.ok("%%agent\nAgain")
    assert after.stdout.endswith(f"assistant: after {name}\n")
