"""Each conversation keeps its own settings and last run (issue 26), in a real kernel.

One test per bug the side tables let through: the output limit after compaction, a replay
taking over ``_agent_reply`` and ``%agent undo``, ``%agent context`` after another
conversation's run, a second cell behind a held run waiting silently, and ``%agent status``
not saying which limit stopped a run. Synchronisation is on kernel replies and panel frames.
"""

from __future__ import annotations

import json
import queue
import time
from pathlib import Path

from .conftest import Kernel
from .test_panel_kernel import PanelClient, script

SERVER = """
from tests.providers.server import ScriptServer, sse, stream_bytes
from pi_notebook.ai import Model
server = ScriptServer()
await server.start()

def said(text):  # a streamed reply that reports no usage, as many local servers do
    return stream_bytes(sse(
        {"choices": [{"index": 0, "delta": {"content": text}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ))

server.queue(said("first"), said("SUMMARY of the talk"), said("second"))
small = Model(id="small-gguf", api="openai-completions", provider="llamacpp",
              base_url=server.url + "/v1", context_window=8000)
"""


def test_after_compaction_no_request_asks_for_one_token(kernel: Kernel) -> None:
    """The clamp is on what is sent (the compacted context), with a floor of 1,024 tokens:
    a full window no longer gives ``max_tokens: 1`` to the turn and the summary request."""
    kernel.ok(SERVER)
    try:
        kernel.ok("%%agent --model small --new --no-tools --approve none\n" + "x " * 14_000)
        second = kernel.ok("%%agent\nAnd now?")
        bodies = json.loads(
            kernel.ok("import json; print(json.dumps([r.json() for r in server.requests]))").stdout
        )
    finally:
        kernel.ok("await server.stop()")
    assert len(bodies) == 3, "a turn, then a summary request and the compacted turn"
    assert "[compacted 1 message]" in second.stdout
    summary = bodies[1]["messages"][0]["content"]
    assert "summar" in json.dumps(summary).lower()
    limits = [b["max_tokens"] for b in bodies]
    assert all(limit >= 1024 for limit in limits), limits
    assert limits[2] > limits[0], "the compacted request leaves more room than the full one"


REPLAY = """
import pi_notebook.notebook as pn
from pi_notebook.ai import faux_assistant_message as reply, faux_tool_call, register_faux_provider
x = 1
rp = register_faux_provider(token_size=(1, 1))
rp.set_responses([
    reply("the recorded answer"),
    reply([faux_tool_call("set_variable", {"name": "x", "expression": "2"})],
          stop_reason="toolUse"),
    reply("x is 2 now"),
])
pn.use_model(rp)
%agent reset
"""


def test_a_replay_leaves_agent_reply_and_undo_to_the_notebooks_conversation(
    kernel: Kernel, tmp_path: Path
) -> None:
    saved = tmp_path / "other.jsonl"
    kernel.ok(REPLAY)
    kernel.ok("%%agent --agent other --model rp --no-tools\nSay something.\n")
    kernel.ok(f"%agent save {saved}")
    kernel.ok("%%agent --new --tools notebook --approve none\nSet x to 2.")
    assert kernel.ok("print(_agent_reply, x)").stdout == "x is 2 now 2\n"
    replayed = kernel.ok(f"%agent replay {saved}").stdout
    assert "the recorded answer" in replayed
    assert kernel.ok("print(_agent_reply)").stdout == "x is 2 now\n"
    assert kernel.ok("_last = %agent last\nprint(_last)").stdout == "x is 2 now\n"
    undone = kernel.ok("%agent undo").stdout
    assert "restored: x" in undone
    assert kernel.ok("print(x)").stdout == "1\n"


CONTEXT = """
import pi_notebook.notebook as pn
from pi_notebook.agent import AgentTool, AgentToolResult
from pi_notebook.ai import TextContent, faux_assistant_message as reply, faux_tool_call
from pi_notebook.ai import register_faux_provider
__vsc_ipynb_file__ = {notebook!r}

async def _add(tool_call_id, params, signal, on_update):
    return AgentToolResult(content=[TextContent(text=str(params["a"] + params["b"]))])

ADD = AgentTool(name="add", description="Add.", parameters={{"type": "object"}}, execute=_add)
cx = register_faux_provider(token_size=(1, 1))
cx.set_responses([
    reply([faux_tool_call("add", {{"a": 2, "b": 3}}, id="t1")], stop_reason="toolUse"),
    reply("2 + 3 = 5"),
    reply("hello from b"),
])
pn.use_model(cx)
%agent reset
"""


def test_agent_context_shows_the_current_conversations_last_run(
    kernel: Kernel, tmp_path: Path
) -> None:
    """Another conversation's run does not replace what ``%agent context`` shows for this
    one: after ``%agent resume`` the default conversation's two turns are there."""
    kernel.ok(CONTEXT.format(notebook=str(tmp_path / "context.ipynb")))
    kernel.ok("%%agent --new --tools ADD --approve none\nWhat is 2 + 3?")
    kernel.ok("%%agent --agent b --model cx --no-tools\nHi")
    assert kernel.run("%agent context 2").error is not None  # b's run had one turn
    kernel.ok("%agent resume")
    text = kernel.ok("%agent context 2").stdout
    assert text.startswith("turn 2: the request to faux/faux-1: 3 messages, 1 tool")
    assert "3. toolResult add" in text
    kernel.ok("del __vsc_ipynb_file__")


WAITING = "waiting for conversation default, held in step mode: press Next / Run to end, or Abort"


def _frames_until(kernel: Kernel, client: PanelClient, done: object, timeout: float = 60) -> None:
    """Feed ``client`` the kernel's iopub messages (between cells) until ``done()``."""
    deadline = time.monotonic() + timeout
    while not done():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the panel never got there"
        try:
            msg = kernel.kc.get_iopub_msg(timeout=0.1)
        except queue.Empty:
            continue
        client(msg)


def test_a_cell_behind_a_held_run_says_at_once_what_it_waits_for(ui_kernel: Kernel) -> None:
    script(ui_kernel, "hw", ["first", "second"], gate=False)
    client = PanelClient(ui_kernel)
    reply, _ = ui_kernel.run_raw("%%agent --step --background\nHi", on_msg=client)
    assert reply["content"]["status"] == "ok"
    _frames_until(ui_kernel, client, lambda: bool(client.state and client.state["step"]["held"]))
    held_when_said: list[str] = []

    def on_msg(msg: dict[str, object]) -> None:
        client(msg)
        if WAITING in client.stdout and not held_when_said:
            assert client.state is not None
            held_when_said.append(str(client.state["step"]["held"]))
            client.send({"type": "run_to_end"})  # now release the held run

    second, _ = ui_kernel.run_raw("%%agent\nAgain", on_msg=on_msg, timeout=60)
    assert second["content"]["status"] == "ok"
    assert held_when_said == ["agent_start"], "said while the first run was still held"


BUDGET = """
import pi_notebook.notebook as pn
from pi_notebook.agent import AgentTool, AgentToolResult
from pi_notebook.ai import TextContent, faux_assistant_message as reply, faux_tool_call
from pi_notebook.ai import register_faux_provider

async def _t(tool_call_id, params, signal, on_update):
    return AgentToolResult(content=[TextContent(text="ok")])

T = AgentTool(name="t", description="", parameters={"type": "object"}, execute=_t)
priced = register_faux_provider(
    token_size=(1, 1), models=[{"id": "priced", "cost": {"input": 0, "output": 6150}}]
)
priced.set_responses([
    reply([faux_tool_call("t", {}, id=f"c{i}")], stop_reason="toolUse") for i in range(4)
])
pn.use_model(priced)
%agent reset
"""


def test_status_after_a_max_cost_run_names_the_limit_and_what_was_spent(kernel: Kernel) -> None:
    kernel.ok(BUDGET)
    run = kernel.ok("%%agent --new --tools T --approve none --max-cost 0.01\nGo.")
    assert "[budget of $0.01 reached: $0.01 spent]" in run.stdout
    status = kernel.ok("%agent status").stdout
    assert (
        "last run: 2 turns, limits: --max-cost $0.01; stopped by --max-cost $0.01: $0.0123 spent"
    ) in status
