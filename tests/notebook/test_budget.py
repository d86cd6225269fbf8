"""``--max-cost``, ``%agent budget`` and ``--max-turns`` in a real kernel, on a priced faux model.

The faux model reports token counts (4 characters a token) but no cost; its model prices them
($0.10 an output token, input free), so each one-token tool-call reply costs $0.10.
"""

from __future__ import annotations

from .conftest import Kernel
from .test_panel_kernel import PanelClient, run_cell

SETUP = """
import pi_notebook.notebook as pn
from pi_notebook.agent import AgentTool, AgentToolResult
from pi_notebook.ai import TextContent, faux_assistant_message, faux_tool_call
from pi_notebook.ai import register_faux_provider
T = AgentTool(name='t', parameters={'type': 'object'},
              execute=lambda i, p, s, u: AgentToolResult(content=[TextContent(text='ok')]))
def calls(n):
    return [faux_assistant_message([faux_tool_call('t', {}, id=f'c{i}')], stop_reason='toolUse')
            for i in range(n)]
"""


def priced(kernel: Kernel, name: str, replies: str) -> None:
    kernel.ok(SETUP)
    kernel.ok(
        f"{name} = register_faux_provider(token_size=(1, 1), models=[{{'id': 'priced', "
        "'cost': {'input': 0, 'output': 100000}}])\n"
        f"{name}.set_responses({replies})\n"
        f"pn.use_model({name})\n"
        "%agent reset\n"
        "%agent budget off"
    )


def test_max_cost_ends_the_run_with_a_note(kernel: Kernel) -> None:
    priced(kernel, "b1", "calls(5) + [faux_assistant_message('never')]")
    result = kernel.ok("%%agent --tools T --max-cost 0.25\nGo")
    assert result.stdout.endswith("tool t: ok\n[budget of $0.25 reached: $0.30 spent]\n")
    assert kernel.ok("print(b1.call_count)").stdout == "3\n"
    status = kernel.ok("%agent status").stdout
    assert "cost: $0.3000\n" in status
    # The limit was this cell's: the next run goes on to the end.
    assert "assistant: never" in kernel.ok("%%agent --tools T\nGo on").stdout


def test_conversation_budget_set_shown_and_enforced(kernel: Kernel) -> None:
    priced(kernel, "b2", "calls(3) + [faux_assistant_message('done')]")
    assert kernel.ok("%agent budget").stdout == "conversation budget: off, spent: $0.00\n"
    assert kernel.ok("%agent budget 0.15").stdout == ("conversation budget: $0.15, spent: $0.00\n")
    first = kernel.ok("%%agent --tools T\nGo")
    assert first.stdout.endswith("\n[conversation budget of $0.15 reached: $0.20 spent]\n")
    assert "cost: $0.2000 spent / $0.15 budget" in kernel.ok("%agent status").stdout
    history = kernel.ok("%agent history").stdout
    refused = kernel.run("%%agent --tools T\nMore")
    assert refused.error is not None and refused.error["ename"] == "UsageError"
    assert refused.error["evalue"] == (
        "%%agent: conversation budget of $0.15 reached: $0.20 spent; "
        "raise it with %agent budget USD or clear it with %agent budget off"
    )
    assert kernel.ok("%agent history").stdout == history  # nothing ran, nothing lost
    assert kernel.ok("%agent budget $1").stdout == "conversation budget: $1.00, spent: $0.20\n"
    after = kernel.ok("%%agent --tools T\nMore")
    assert after.stdout.endswith("assistant: done\n")
    assert kernel.ok("%agent budget off").stdout == "conversation budget: off, spent: $0.40\n"


def test_bad_amounts_are_usage_errors(kernel: Kernel) -> None:
    priced(kernel, "b3", "[]")
    for code, text in (
        ("%%agent --max-cost abc\nHi", "expected an amount in USD, got 'abc'"),
        ("%%agent --max-cost 0\nHi", "expected a positive amount in USD, got '0'"),
        ("%agent budget -1", "expected a positive amount in USD, got '-1'"),
    ):
        result = kernel.run(code)
        assert result.error is not None and result.error["ename"] == "UsageError", code
        assert text in result.error["evalue"]
    assert kernel.ok("print(b3.call_count)").stdout == "0\n"


def test_max_turns_says_why_it_stopped(kernel: Kernel) -> None:
    priced(kernel, "b4", "calls(3)")
    result = kernel.ok("%%agent --tools T --max-turns 2\nGo")
    assert result.stdout.endswith("tool t: ok\n[turn limit of 2 reached: 2 turns run]\n")


def test_the_panel_shows_the_note(ui_kernel: Kernel) -> None:
    priced(ui_kernel, "b5", "[after_view(m) for m in calls(3)]")  # a view follows from the start
    client = PanelClient(ui_kernel)
    assert run_cell(ui_kernel, "%%agent --tools T --max-cost 0.15\nGo", client) == "ok"
    assert client.state is not None
    assert client.state["status"]["note"] == "budget of $0.15 reached: $0.20 spent"
    last = client.updates[-1]
    assert "budget of $0.15 reached: $0.20 spent" in last["text/html"]
    assert last["text/plain"].endswith("\n[budget of $0.15 reached: $0.20 spent]")


def test_each_request_of_a_max_cost_cell_asks_only_for_what_is_left(kernel: Kernel) -> None:
    """Issue 28, item 12: one reply could spend far past ``--max-cost`` when the limit was only
    checked between requests. Now each request's ``max_tokens`` is what the dollars left buy
    ($0.10 an output token): $0.35 asks for 3, 2, 1, then 1 token(s)."""
    kernel.ok(SETUP)
    kernel.ok(
        "asked = []\n"
        "def reply(context, options, state, model):\n"
        "    asked.append(options.max_tokens)\n"
        "    return calls(1)[0]\n"
        "b5 = register_faux_provider(token_size=(1, 1), models=[{'id': 'priced', "
        "'cost': {'input': 0, 'output': 100000}}])\n"
        "b5.set_responses([reply] * 5 + [faux_assistant_message('never')])\n"
        "pn.use_model(b5)\n"
        "%agent reset\n"
        "%agent budget off"
    )
    result = kernel.ok("%%agent --tools T --max-cost 0.35 --max-tokens 100\nGo")
    assert result.stdout.endswith("[budget of $0.35 reached: $0.40 spent]\n")
    assert kernel.ok("print(asked)").stdout == "[3, 2, 1, 1]\n"


def test_a_request_whose_input_alone_spends_the_limit_is_not_sent(kernel: Kernel) -> None:
    kernel.ok(SETUP)
    kernel.ok(
        "b6 = register_faux_provider(models=[{'id': 'dear', "
        "'cost': {'input': 1, 'output': 1}}])\n"
        "b6.set_responses([faux_assistant_message('never')])\n"
        "pn.use_model(b6)\n"
        "%agent reset\n"
        "%agent budget off\n"
        "big = 'x' * 400_000"
    )
    result = kernel.ok("%%agent --max-cost 0.05\n{big}")
    assert "[request not sent: its input alone (about 100" in result.stdout
    assert "would spend more than the $0.05 left of the limit]" in result.stdout
    assert kernel.ok("print(b6.call_count)").stdout == "0\n"
    assert "assistant: never" in kernel.ok("%%agent\nshort").stdout  # the next cell works
