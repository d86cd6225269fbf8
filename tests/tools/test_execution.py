"""run_code: a worker thread, thread-aware output capture, tracebacks and prompt aborts."""

from __future__ import annotations

import asyncio
import io
import sys
import threading
import time
from typing import Any

import pytest

from pi_notebook.ai import AbortController
from pi_notebook.tools.execution import BoundedBuffer, run_code


async def test_output_value_and_namespace() -> None:
    ns: dict[str, Any] = {}
    outcome = await run_code(
        "x = 20\nprint('out')\nimport sys\nprint('err', file=sys.stderr)\nx + 1", ns, None
    )
    assert (outcome.stdout, outcome.stderr) == ("out\n", "err\n")
    assert outcome.has_value and outcome.value == 21 and ns["x"] == 20
    assert outcome.error is None and not outcome.aborted


async def test_exception_becomes_a_short_traceback_of_the_agent_code() -> None:
    outcome = await run_code("def f(v):\n    return 1 / v\nprint('before')\nf(0)", {}, None)
    assert outcome.stdout == "before\n"
    assert outcome.error is not None
    assert outcome.error.startswith("Traceback (most recent call last):")
    assert "line 4, in <module>" in outcome.error and "return 1 / v" in outcome.error
    assert outcome.error.endswith("ZeroDivisionError: division by zero")
    assert "execution.py" not in outcome.error


async def test_other_threads_output_is_not_captured(monkeypatch: pytest.MonkeyPatch) -> None:
    real = io.StringIO()
    monkeypatch.setattr(sys, "stdout", real)
    inside = threading.Event()
    release = threading.Event()
    ns: dict[str, Any] = {"inside": inside, "release": release}
    task = asyncio.ensure_future(
        run_code("print('captured')\ninside.set()\nrelease.wait(10)\nprint('end')", ns, None)
    )
    await asyncio.to_thread(inside.wait, 10)
    print("from the kernel thread")  # while the code runs: goes to the real stream
    release.set()
    outcome = await task
    assert outcome.stdout == "captured\nend\n"
    assert real.getvalue() == "from the kernel thread\n"
    assert sys.stdout is real  # the proxy is gone once no code runs


async def test_output_is_bounded() -> None:
    outcome = await run_code("for i in range(100000): print(i)", {}, None, output_chars=400)
    assert len(outcome.stdout) < 500
    assert outcome.stdout.startswith("0\n1\n") and outcome.stdout.endswith("99999\n")
    assert "characters omitted" in outcome.stdout


def test_bounded_buffer_keeps_everything_under_the_limit() -> None:
    buffer = BoundedBuffer(100)
    for part in ("a" * 30, "b" * 30, "c" * 30):
        buffer.write(part)
    assert buffer.getvalue() == "a" * 30 + "b" * 30 + "c" * 30


@pytest.mark.parametrize(
    "code",
    [
        "started.set()\nwhile True: pass",
        "import time\nstarted.set()\ntime.sleep(60)",
        "started.set()\nwhile True:\n    try:\n        sum(range(9))\n    except Exception:\n"
        "        pass",
    ],
    ids=["busy-loop", "sleep-60", "swallowing-except-Exception"],
)
async def test_abort_stops_long_running_code_promptly(code: str) -> None:
    started = threading.Event()
    controller = AbortController()
    task = asyncio.ensure_future(run_code(code, {"started": started}, controller.signal))
    assert await asyncio.to_thread(started.wait, 10)
    begin = time.perf_counter()
    controller.abort()
    outcome = await task
    latency = time.perf_counter() - begin
    print(f"abort latency ({code.splitlines()[-1]!r}): {latency * 1000:.1f} ms")
    assert outcome.aborted and not outcome.still_running
    assert latency < 0.5  # the "stops promptly": measured from the abort call


async def test_abort_of_code_blocked_in_c_reports_it_still_running() -> None:
    started = threading.Event()
    gate = threading.Event()
    controller = AbortController()
    ns: dict[str, Any] = {"started": started, "gate": gate}
    task = asyncio.ensure_future(
        run_code("started.set()\ngate.wait(30)\ndone = True", ns, controller.signal, grace=0.05)
    )
    assert await asyncio.to_thread(started.wait, 10)
    controller.abort()
    outcome = await task
    assert outcome.aborted and outcome.still_running
    (worker,) = [t for t in threading.enumerate() if t.name == "pi-run-python"]
    gate.set()  # the C call returns: the pending abort lands before the next line
    await asyncio.to_thread(worker.join, 10)
    assert not worker.is_alive()
    assert "done" not in ns
