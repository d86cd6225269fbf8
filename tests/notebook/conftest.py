"""Fixtures for the notebook tests: a real ipykernel driven by jupyter_client.

The kernel gets a temporary IPYTHONDIR (no user config or startup files leak in), plain UI, no
notebook context (``PI_NOTEBOOK_CONTEXT=off``: a scripted run sends exactly its prompt),
no provider API keys and an unreachable PI_NOTEBOOK_MODEL override is never set, so runs
default to models the tests script. It must never leave a kernel process behind.
"""

from __future__ import annotations

import os
import queue
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import KernelManager

ROOT = Path(__file__).resolve().parents[2]
KEY_VARS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "GEMINI_API_KEY",
    "PI_NOTEBOOK_MODEL",
)


@dataclass
class CellResult:
    status: str
    stdout: str = ""
    stderr: str = ""
    outputs: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        """All text/plain output (stream, results, displays) in order."""
        parts: list[str] = []
        for out in self.outputs:
            if out["type"] == "stream":
                parts.append(out["text"])
            elif "data" in out:
                parts.append(str(out["data"].get("text/plain", "")))
        return "".join(parts)


class Kernel:
    def __init__(self, km: KernelManager) -> None:
        self.km = km
        self.kc = km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(
        self,
        code: str,
        timeout: float = 60,
        on_output: Callable[[dict[str, Any]], None] | None = None,
    ) -> CellResult:
        result = CellResult(status="?")

        def hook(msg: dict[str, Any]) -> None:
            kind = msg["header"]["msg_type"]
            content = msg["content"]
            out: dict[str, Any] | None = None
            if kind == "stream":
                out = {"type": "stream", "name": content["name"], "text": content["text"]}
                if content["name"] == "stdout":
                    result.stdout += content["text"]
                else:
                    result.stderr += content["text"]
            elif kind in ("execute_result", "display_data", "update_display_data"):
                out = {"type": kind, "data": content["data"]}
            elif kind == "error":
                out = {"type": "error", **content}
                result.error = content
            if out is not None:
                result.outputs.append(out)
                if on_output is not None:
                    on_output(out)

        reply = self.kc.execute_interactive(code, timeout=timeout, output_hook=hook)
        result.status = reply["content"]["status"]
        if result.error is None and result.status == "error":
            result.error = reply["content"]
        return result

    def ok(self, code: str, timeout: float = 60) -> CellResult:
        result = self.run(code, timeout=timeout)
        assert result.status == "ok", (result.error, result.stdout, result.stderr)
        return result

    def run_raw(
        self,
        code: str,
        timeout: float = 60,
        on_msg: Callable[[dict[str, Any]], None] | None = None,
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Execute ``code``; (reply, every iopub message until the cell's idle).

        Unlike :meth:`run` it keeps iopub messages of any parent (comm messages sent while
        handling a widget message have that message as parent); ``on_msg`` sees each one as
        it arrives and may send comm messages (:meth:`comm_send`) meanwhile.
        """
        msg_id = self.kc.execute(code)
        messages: list[dict[str, Any]] = []
        reply: dict[str, Any] | None = None
        idle = False
        deadline = time.monotonic() + timeout
        while reply is None or not idle:
            if time.monotonic() > deadline:
                raise TimeoutError(f"cell did not finish in {timeout}s: {code[:60]!r}")
            if not idle:
                try:
                    msg = self.kc.get_iopub_msg(timeout=0.05)
                except queue.Empty:
                    msg = None
                if msg is not None:
                    messages.append(msg)
                    if on_msg is not None:
                        on_msg(msg)
                    if (
                        msg["header"]["msg_type"] == "status"
                        and msg["parent_header"].get("msg_id") == msg_id
                        and msg["content"]["execution_state"] == "idle"
                    ):
                        idle = True
            if reply is None:
                try:
                    shell = self.kc.get_shell_msg(timeout=0 if not idle else 0.05)
                except queue.Empty:
                    shell = None
                if shell is not None and shell["parent_header"].get("msg_id") == msg_id:
                    reply = shell
        return reply, messages

    def comm_send(self, comm_id: str, content: dict[str, Any]) -> None:
        """Send a widget custom message to comm ``comm_id``, as a front end does."""
        data = {"method": "custom", "content": content}
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.kc.shell_channel.send(msg)

    def shutdown(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def kernel_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    env.pop("JPY_SESSION_NAME", None)  # no notebook path: nothing saved beside a notebook
    env["IPYTHONDIR"] = str(tmp / "ipython")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PI_NOTEBOOK_UI"] = "plain"
    # Scripted runs send exactly their prompt, as they were written to; the tests of the
    # notebook context (test_notebook_context_kernel.py) turn it on for their conversations.
    env["PI_NOTEBOOK_CONTEXT"] = "off"
    return env


#: Kernel code for the panel tests. ``after_panel(step, ready)`` is a faux reply (or reply
#: factory) that waits until ``ready(panel)`` holds for the running panel (``_agent_panel``),
#: checked again after each message the panel gets from its view; ``after_view(step)`` waits
#: for the view's hello. A faux run can end in milliseconds, before the test's view joins or
#: its steer arrives; a test that follows the live panel gates its replies on what the view
#: did instead of hoping that pacing gives it time. It waits on the panel's messages (no
#: polling), and after ``timeout`` seconds it answers anyway, so a view that never did what
#: the test expects fails the test's assertions instead of hanging it.
VIEW_GATE = """
import inspect as _inspect

def after_panel(step, ready, timeout=30):
    async def reply(context, options, state, model):
        panel = _agent_panel
        if not ready(panel):
            loop = asyncio.get_running_loop()
            seen = loop.create_future()

            def check(*_):
                if ready(panel) and not seen.done():
                    seen.set_result(None)

            def on_msg(_widget, _content, _buffers):
                loop.call_soon_threadsafe(check)  # after the panel's own handling of it

            panel.on_msg(on_msg)
            loop.call_soon(check)  # a message that came in while this was being set up
            try:
                await asyncio.wait_for(seen, timeout)
            except TimeoutError:
                pass
            finally:
                panel.on_msg(on_msg, remove=True)
        if not callable(step):
            return step
        answer = step(context, options, state, model)  # a scripted factory
        return await answer if _inspect.isawaitable(answer) else answer
    return reply

def after_view(step, timeout=30):
    return after_panel(step, lambda panel: panel.transport.ready, timeout)
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    tmp = tmp_path_factory.mktemp("kernel")
    km = KernelManager(kernel_name="python3")
    km.kernel_cmd = []  # use the spec of this interpreter
    km.start_kernel(env=kernel_env(tmp), cwd=str(tmp), extra_arguments=[])
    kernel = Kernel(km)
    try:
        kernel.ok("import sys; print(sys.executable)")
        kernel.ok("%load_ext pi_notebook")
        yield kernel
    finally:
        kernel.shutdown()


@pytest.fixture(scope="module")
def ui_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    """A kernel with the interactive UI (``%%agent`` displays the panel), one per module."""
    tmp = tmp_path_factory.mktemp("ui-kernel")
    env = kernel_env(tmp)
    env.pop("PI_NOTEBOOK_UI")
    km = KernelManager(kernel_name="python3")
    km.start_kernel(env=env, cwd=str(tmp), extra_arguments=[])
    kernel = Kernel(km)
    try:
        kernel.ok("%load_ext pi_notebook")
        kernel.ok(
            "import asyncio\nimport pi_notebook.notebook as pn\n"
            "from pi_notebook.ai import faux_assistant_message, register_faux_provider"
        )
        kernel.ok(VIEW_GATE)
        yield kernel
    finally:
        kernel.shutdown()


assert sys.version_info >= (3, 11)
