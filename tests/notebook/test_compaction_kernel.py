"""Context compaction through ``%%agent`` in a real kernel: the marker in plain mode and in the
panel, ``%agent compact``, ``--no-compact``, ``%agent status``; a faux model with a window of
400 tokens (threshold 320), prompts of 200 tokens."""

from __future__ import annotations

from .conftest import Kernel
from .test_panel_kernel import PanelClient, run_cell


def small(
    kernel: Kernel, name: str, replies: list[str], tps: float | None = None, gate_from: int = -1
) -> None:
    """Script ``replies`` on a model with a small window; from index ``gate_from`` on, each
    waits for a view of the running panel (conftest's ``after_view``)."""
    steps = ", ".join(
        f"after_view(faux_assistant_message({t!r}))"
        if 0 <= gate_from <= i
        else f"faux_assistant_message({t!r})"
        for i, t in enumerate(replies)
    )
    kernel.ok(
        "import pi_notebook.notebook as pn\n"
        "from pi_notebook.ai import faux_assistant_message, register_faux_provider\n"
        "A, B = 'A' * 800, 'B' * 800\n"
        f"{name} = register_faux_provider(token_size=(1, 1), tokens_per_second={tps!r}, "
        "models=[{'id': 'small', 'context_window': 400}])\n"
        f"{name}.set_responses([{steps}])\n"
        f"pn.use_model({name}).state.system_prompt = ''  # the sizes below assume none\n"
        "%agent reset"
    )


def test_plain_mode_marks_the_compaction_and_history_keeps_everything(kernel: Kernel) -> None:
    small(kernel, "c1", ["r1", "SUMMARY", "r2"])
    kernel.ok("%%agent\n{A}")
    second = kernel.ok("%%agent\n{B}")
    assert second.stdout == f"user: {'B' * 800}\n[compacted 2 messages]\nassistant: r2\n"
    history = kernel.ok("%agent history").stdout
    assert history.startswith(f"user: {'A' * 800}\nassistant: r1\n")
    status = kernel.ok("%agent status").stdout
    assert "of 400, the first 2 messages as a summary" in status
    # The run made two requests (the summary, then the turn's) in one turn: %agent context
    # shows the turn's request, names the summary it also sent, and knows of one turn only.
    context = kernel.ok("%agent context").stdout
    assert context.startswith("turn 1: the request to faux/small: 2 messages, 0 tools, ")
    assert "<summary>\n  SUMMARY\n  </summary>" in context
    assert context.endswith("\n(turn 1 also sent: a compaction summary request)\n")
    assert kernel.ok("%agent context 1").stdout == context
    wrong = kernel.run("%agent context 2")
    assert wrong.error is not None and wrong.error["evalue"] == (
        "%agent context: turn 2: the last run had 1 turn"
    )


def test_no_compact_sends_everything(kernel: Kernel) -> None:
    small(kernel, "c2", ["r1", "r2"])
    kernel.ok("%%agent\n{A}")
    second = kernel.ok("%%agent --no-compact\n{B}")
    assert "compacted" not in second.stdout and second.stdout.endswith("assistant: r2\n")
    assert kernel.ok("print(c2.call_count)").stdout == "2\n"
    assert "(compaction off)" not in kernel.ok("%agent status").stdout  # this run only


def test_compact_by_hand(kernel: Kernel) -> None:
    small(kernel, "c3", ["r1", "r2", "by hand", "r3"])
    kernel.ok("%%agent\none")
    kernel.ok("%%agent\ntwo")
    out = kernel.ok("%agent compact").stdout
    assert out.startswith("compacted 2 messages: about ")
    third = kernel.ok("%%agent\nthree")
    assert third.stdout == "user: three\nassistant: r3\n"
    assert "the first 2 messages as a summary" in kernel.ok("%agent status").stdout
    kernel.ok("%agent reset")
    assert kernel.ok("%agent compact").stdout == (
        "nothing to compact: the conversation is only its last turn\n"
    )


def test_the_panel_shows_a_one_line_marker(ui_kernel: Kernel) -> None:
    small(ui_kernel, "c4", ["r1", "SUMMARY", "r2" * 20], gate_from=1)  # the panel run's
    ui_kernel.ok("%%agent --plain\n{A}")
    client = PanelClient(ui_kernel)
    assert run_cell(ui_kernel, "%%agent\n{B}", client) == "ok"
    assert client.state is not None
    roles = [m["role"] for m in client.state["messages"]]
    assert roles == ["user", "compaction", "assistant"]
    marker = client.state["messages"][1]
    assert marker == {"role": "compaction", "count": 2, "text": "compacted 2 messages"}
    last = client.updates[-1]
    assert '<span class="pi-compaction">compacted 2 messages</span>' in last["text/html"]
    assert "\n[compacted 2 messages]\nassistant: r2r2" in last["text/plain"]


DIFF_RUN = """
import pi_notebook.notebook as pn
from pi_notebook.agent import AgentTool, AgentToolResult
from pi_notebook.ai import TextContent, faux_assistant_message, faux_tool_call
from pi_notebook.ai import register_faux_provider

_steers = ["Also say it in French.", "And in German."]

async def _look(tool_call_id, params, signal, on_update):
    pn.session().current.steer(_steers.pop(0))  # typed while the tool runs
    return AgentToolResult(content=[TextContent(text="R" * params["n"])])

LOOK = AgentTool(name="look", description="Look.", execute=_look,
                 parameters={"type": "object", "properties": {"n": {"type": "integer"}}})
d1 = register_faux_provider(token_size=(1, 1), models=[{"id": "small", "context_window": 400}])
d1.set_responses([
    faux_assistant_message([faux_tool_call("look", {"n": 40}, id="a")], stop_reason="toolUse"),
    faux_assistant_message([faux_tool_call("look", {"n": 1200}, id="b")], stop_reason="toolUse"),
    faux_assistant_message("SUMMARY"),
    faux_assistant_message("done"),
])
pn.use_model(d1).state.system_prompt = ""  # the sizes below assume none
%agent reset
"""


def test_context_diff_on_a_run_with_tools_a_steer_and_a_compaction(kernel: Kernel) -> None:
    """Turn 2's request adds the reply, the tool result and the steer; turn 3's is compacted:
    the summary in, the four messages it replaced out, the second steer new."""
    kernel.ok(DIFF_RUN)
    out = kernel.ok("%%agent --tools LOOK\n{'P' * 400}").stdout
    assert "[compacted 6 messages]" in out and out.endswith("assistant: done\n")
    second = kernel.ok("%agent context 2 --diff").stdout.splitlines()
    assert second[0].startswith("turn 2: what changed since turn 1's request (now 4 messages")
    assert second[1:] == [
        "new (3):",
        "+ 2. assistant (≈ 5 tokens): the model's reply to turn 1's request",
        '    → look({"n": 40})',
        "+ 3. toolResult look (≈ 10 tokens): a tool result",
        "    " + "R" * 40,
        "+ 4. user (≈ 6 tokens): steer, entered after turn 1's tools",
        "    Also say it in French.",
        "unchanged: 1 message (1), the system prompt, 1 tool, the options",
    ]
    third = kernel.ok("%agent context 3 --diff").stdout
    assert third.startswith("turn 3: what changed since turn 2's request (now 2 messages")
    assert (
        "\n+ 1. user (≈ 22 tokens): the compaction summary (it stands for 6 messages: the 4 out "
        "below and 2 new since turn 2's request, never sent on their own)\n"
    ) in third
    assert "\n+ 2. user (≈ 4 tokens): a user message entered during the run" in third
    assert "\nout (4, replaced by the compaction summary; numbered as turn 2 sent them):\n" in third
    assert "\n- 4. user (≈ 6 tokens): Also say it in French.\n" in third
    assert third.endswith(
        "\nunchanged: 0 messages, the system prompt, 1 tool, the options\n"
        "(turn 3 also sent: a compaction summary request)\n"
    )
    assert kernel.ok("%agent context --diff").stdout == third  # the last turn by default
    first = kernel.ok("%agent context 1 --diff").stdout
    assert first.startswith("turn 1: the run's first request: nothing before it to compare with")
    assert "\n1. user (≈ 100 tokens)\n" in first
    for line, message in (
        ("%agent context 4 --diff", "%agent context: turn 4: the last run had 3 turns (1 to 3)"),
        (
            "%agent context 2 --diffs",
            "%agent context: unknown option '--diffs'; expected --json or --diff",
        ),
    ):
        bad = kernel.run(line)
        assert bad.error is not None and bad.error["evalue"] == message
