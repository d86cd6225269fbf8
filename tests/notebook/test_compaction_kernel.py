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

