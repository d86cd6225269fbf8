"""Per-run settings (``RunConfig``) and the request hook (``on_request``) of the Agent.

A run's settings replace the Agent's own for that run only, and nothing of the Agent is written;
the hook sees every request the Agent sends, numbered by the loop's turns, with the options
actually sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pi_notebook.agent import (
    Agent,
    AgentTool,
    AgentToolResult,
    BeforeToolCallResult,
    BudgetExceededError,
    ModelRequest,
    RunConfig,
)
from pi_notebook.ai import (
    AssistantMessage,
    Context,
    FauxProvider,
    Model,
    TextContent,
    faux_assistant_message,
    faux_tool_call,
    register_faux_provider,
)

PRICES = {"input": 0, "output": 100_000}  # each one-token tool-call reply costs $0.10


@pytest.fixture
def priced() -> Iterator[FauxProvider]:
    provider = register_faux_provider(
        token_size=(1, 1), models=[{"id": "priced", "cost": PRICES, "context_window": 400}]
    )
    yield provider
    provider.unregister()


def tool_calls(n: int) -> list[AssistantMessage]:
    return [
        faux_assistant_message([faux_tool_call("t", {}, id=f"c{i}")], stop_reason="toolUse")
        for i in range(n)
    ]


def t_tool(calls: list[str] | None = None) -> AgentTool:
    def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        if calls is not None:
            calls.append(call_id)
        return AgentToolResult(content=[TextContent(text="ok")])

    return AgentTool(name="t", description="", parameters={"type": "object"}, execute=execute)


def own_values(agent: Agent) -> tuple[Any, ...]:
    return (
        agent.max_turns,
        agent.max_cost,
        agent.budget,
        agent.stream_options.max_tokens,
        agent.compaction.enabled,
        agent.before_tool_call,
        agent.on_request,
        agent.stream_fn,
    )


async def test_a_run_config_limits_that_run_only(priced: FauxProvider) -> None:
    priced.set_responses([*tool_calls(3), faux_assistant_message("never"), *tool_calls(3)])
    priced.append_responses([faux_assistant_message("done")])
    agent = Agent(model=priced.get_model(), tools=[t_tool()], max_tokens=500)
    before = own_values(agent)
    await agent.prompt("go", run=RunConfig(max_turns=2))
    assert agent.limit_note == "turn limit of 2 reached: 2 turns run"
    assert own_values(agent) == before  # nothing of the Agent was written
    agent.clear_all_queues()
    priced.set_responses([*tool_calls(3), faux_assistant_message("done")])
    await agent.prompt("again")  # the Agent's own values: no limit
    assert agent.limit_note is None
    assert agent.state.messages[-1].content[0].text == "done"


async def test_none_lifts_the_agents_own_limit_for_the_run(priced: FauxProvider) -> None:
    priced.set_responses([*tool_calls(3), faux_assistant_message("done")])
    agent = Agent(model=priced.get_model(), tools=[t_tool()], max_turns=1)
    await agent.prompt("go", run=RunConfig(max_turns=None))
    assert agent.limit_note is None and agent.max_turns == 1
    assert agent.state.messages[-1].content[0].text == "done"


async def test_max_cost_and_budget_per_run(priced: FauxProvider) -> None:
    priced.set_responses([*tool_calls(5), faux_assistant_message("never")])
    agent = Agent(model=priced.get_model(), tools=[t_tool()])
    await agent.prompt("go", run=RunConfig(max_cost=0.15))
    assert agent.limit_note == "budget of $0.15 reached: $0.20 spent"
    assert agent.max_cost is None
    with pytest.raises(BudgetExceededError, match="conversation budget of \\$0.10 reached"):
        await agent.prompt("more", run=RunConfig(budget=0.10))
    assert agent.budget is None


async def test_run_listeners_follow_the_agents_subscribers_for_that_run(
    priced: FauxProvider,
) -> None:
    priced.set_responses([faux_assistant_message("a"), faux_assistant_message("b")])
    agent = Agent(model=priced.get_model())
    order: list[str] = []
    agent.subscribe(lambda e: order.append(f"own:{e.type}") if e.type == "agent_end" else None)

    async def extra(event: Any, signal: Any) -> None:
        if event.type == "agent_end":
            order.append("run:agent_end")

    await agent.prompt("one", run=RunConfig(listeners=[extra]))
    await agent.prompt("two")
    assert order == ["own:agent_end", "run:agent_end", "own:agent_end"]


async def test_before_tool_call_and_compaction_for_one_run(priced: FauxProvider) -> None:
    ran: list[str] = []
    priced.set_responses([*tool_calls(1), faux_assistant_message("blocked")])
    agent = Agent(model=priced.get_model(), tools=[t_tool(ran)])

    def block(context: Any, signal: Any) -> BeforeToolCallResult:
        return BeforeToolCallResult(block=True, reason="no")

    await agent.prompt("go", run=RunConfig(before_tool_call=block, compaction=False))
    assert ran == [] and agent.before_tool_call is None and agent.compaction.enabled
    priced.set_responses([*tool_calls(1), faux_assistant_message("ran")])
    await agent.prompt("go")
    assert ran == ["c0"]


async def test_the_request_hook_sees_each_request_with_its_turn(priced: FauxProvider) -> None:
    seen: list[ModelRequest] = []
    priced.set_responses([*tool_calls(1), faux_assistant_message("done")])
    agent = Agent(model=priced.get_model(), tools=[t_tool()], on_request=seen.append)
    await agent.prompt("go", run=RunConfig(max_tokens=77))
    assert [(r.purpose, r.turn) for r in seen] == [("turn", 1), ("turn", 2)]
    assert [r.options.max_tokens for r in seen] == [77, 77]
    assert seen[0].signal is not None and seen[1].context.messages[-1].role == "toolResult"
    replaced: list[ModelRequest] = []
    priced.set_responses([faux_assistant_message("x")])
    await agent.prompt("again", run=RunConfig(on_request=replaced.append))
    assert len(seen) == 2 and [r.options.max_tokens for r in replaced] == [None]


async def test_a_limit_computed_per_request_sees_the_compacted_context(
    priced: FauxProvider,
) -> None:
    """The output limit is a function of what is sent: the summary request and the compacted
    turn get their own values, never the uncompacted history's."""
    agent = Agent(model=priced.get_model())
    priced.set_responses([faux_assistant_message("r1")])
    await agent.prompt("A" * 800)
    asked: list[tuple[int, str]] = []

    def limit(model: Model, context: Context) -> int:
        asked.append((len(context.messages), context.system_prompt or ""))
        return 1000 + len(context.messages)

    seen: list[ModelRequest] = []
    priced.set_responses([faux_assistant_message("SUMMARY"), faux_assistant_message("r2")])
    await agent.prompt("B" * 800, run=RunConfig(max_tokens=limit, on_request=seen.append))
    assert [r.purpose for r in seen] == ["summary", "turn"]
    assert [r.turn for r in seen] == [1, 1]
    summary, turn = seen
    assert summary.options.max_tokens == 1000 + len(summary.context.messages)
    assert turn.options.max_tokens == 1000 + len(turn.context.messages)
    assert len(turn.context.messages) == 2  # the summary and the new prompt
    assert agent.stream_options.max_tokens is None


async def test_a_runs_convert_to_llm_replaces_the_agents_for_that_run_only() -> None:
    from pi_notebook.ai import CustomMessage, UserMessage

    faux = register_faux_provider(token_size=(1, 1))
    faux.set_responses([faux_assistant_message("one"), faux_assistant_message("two")])
    agent = Agent(model=faux.get_model())
    own = agent.convert_to_llm

    def with_notes(messages: list[Any]) -> list[Any]:
        return [
            UserMessage(content=[TextContent(text=f"note: {m.note}")])
            if m.role == "note"
            else m
            for m in messages
        ]

    note = CustomMessage(role="note", note="cell 3 failed")  # type: ignore[call-arg]
    prompt = UserMessage(content=[TextContent(text="why?")])
    await agent.prompt([note, prompt], run=RunConfig(convert_to_llm=with_notes))
    assert [m.content[0].text for m in faux.requests[0].context.messages] == [
        "note: cell 3 failed",
        "why?",
    ]
    assert agent.convert_to_llm is own  # nothing of the Agent was written
    await agent.prompt("again")  # the Agent's own (Pi's default) drops the custom message
    assert [m.role for m in faux.requests[1].context.messages] == [
        "user",
        "assistant",
        "user",
    ]
    faux.unregister()
