"""Turn and cost limits on the Agent: where a run stops, what it says, what stays queued."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from pi_notebook.agent import (
    Agent,
    AgentTool,
    AgentToolResult,
    BudgetExceededError,
    reply_cost,
)
from pi_notebook.ai import (
    AssistantMessage,
    AssistantMessageEvent,
    AssistantMessageEventStream,
    FauxProvider,
    Model,
    ModelCost,
    StartEvent,
    TextContent,
    Usage,
    UsageCost,
    faux_assistant_message,
    faux_tool_call,
    register_faux_provider,
)
from pi_notebook.ai import DoneEvent as Done

#: $0.10 an output token, input free: each one-token tool-call reply ("t:{}") costs $0.10.
PRICES = {"input": 0, "output": 100_000}


@pytest.fixture
def priced() -> Iterator[FauxProvider]:
    provider = register_faux_provider(token_size=(1, 1), models=[{"id": "priced", "cost": PRICES}])
    yield provider
    provider.unregister()


def tool_calls(n: int) -> list[AssistantMessage]:
    return [
        faux_assistant_message([faux_tool_call("t", {}, id=f"c{i}")], stop_reason="toolUse")
        for i in range(n)
    ]


def t_tool(on_call: Any = None) -> AgentTool:
    def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        if on_call is not None:
            on_call()
        return AgentToolResult(content=[TextContent(text="ok")])

    return AgentTool(name="t", description="", parameters={"type": "object"}, execute=execute)


async def test_max_cost_stops_the_run_before_the_next_request(priced: FauxProvider) -> None:
    priced.set_responses([*tool_calls(5), faux_assistant_message("never")])
    agent = Agent(model=priced.get_model(), tools=[t_tool()], max_cost=0.25)
    ends: list[str] = []
    agent.subscribe(lambda e: ends.append(e.type) if e.type == "agent_end" else None)
    await agent.prompt("go")
    assert agent.limit_note == "budget of $0.25 reached: $0.30 spent"
    assert priced.call_count == 3  # the fourth request never started
    assert ends == ["agent_end"]
    assert agent.state.messages[-1].role == "toolResult"  # a valid transcript to continue
    assert agent.spent == pytest.approx(0.30)


async def test_each_request_asks_only_for_the_output_the_money_left_buys(
    priced: FauxProvider,
) -> None:
    """$0.10 an output token, input free: with $0.35 of --max-cost the requests ask for at most
    3, then 2, then 1 token(s) (each reply spends one; the last asks for one though $0.05
    buys half of it), then the limit stops the run between turns as before."""
    asked: list[int | None] = []

    def reply(context: Any, options: Any, state: Any, model: Any) -> AssistantMessage:
        asked.append(options.max_tokens)
        return tool_calls(1)[0]

    priced.set_responses([reply, reply, reply, reply, reply, faux_assistant_message("never")])
    agent = Agent(model=priced.get_model(), tools=[t_tool()], max_cost=0.35, max_tokens=100)
    await agent.prompt("go")
    assert asked == [3, 2, 1, 1]
    assert agent.spent == pytest.approx(0.40)
    assert agent.limit_note == "budget of $0.35 reached: $0.40 spent"


async def test_a_request_whose_input_alone_spends_what_is_left_is_not_sent() -> None:
    """$1 a million input tokens: a 400,000-character prompt (about 100,000 tokens, $0.10) is
    not sent against $0.05 of --max-cost; the run ends with an error reply naming why."""
    provider = register_faux_provider(models=[{"id": "dear", "cost": {"input": 1, "output": 1}}])
    try:
        provider.set_responses([faux_assistant_message("never")])
        agent = Agent(model=provider.get_model(), max_cost=0.05)
        ends: list[str] = []
        agent.subscribe(lambda e: ends.append(e.type) if e.type == "agent_end" else None)
        await agent.prompt("x" * 400_000)
        assert provider.call_count == 0
        assert ends == ["agent_end"]
        last = agent.state.messages[-1]
        assert last.role == "assistant" and last.stop_reason == "error"
        assert agent.limit_note == last.error_message
        assert agent.limit_note.startswith(
            "request not sent: its input alone (about 100000 tokens, $0.10) would spend more "
            "than the $0.05 left"
        )
    finally:
        provider.unregister()


async def test_max_cost_counts_this_run_only(priced: FauxProvider) -> None:
    priced.set_responses([*tool_calls(2), faux_assistant_message("a"), *tool_calls(2)])
    agent = Agent(model=priced.get_model(), tools=[t_tool()], max_cost=0.25)
    await agent.prompt("first")  # $0.30 in all, but it ends by itself: no note
    assert agent.limit_note is None
    priced.append_responses([faux_assistant_message("b")])
    await agent.prompt("second")  # $0.20 in this run: under the limit
    assert agent.limit_note is None
    assert agent.state.messages[-1].content[0].text == "b"


async def test_queued_messages_stay_queued_at_a_limit(priced: FauxProvider) -> None:
    priced.set_responses(tool_calls(3))
    agent = Agent(model=priced.get_model(), max_cost=0.05)

    def queue_more() -> None:
        agent.steer("steer me")
        agent.follow_up("then this")

    agent.state.tools = [t_tool(queue_more)]
    await agent.prompt("go")
    assert agent.limit_note == "budget of $0.05 reached: $0.10 spent"
    assert [m.content[0].text for m in agent.steering_queue] == ["steer me"]
    assert [m.content[0].text for m in agent.follow_up_queue] == ["then this"]
    assert priced.call_count == 1


async def test_a_run_that_ends_by_itself_is_not_noted(priced: FauxProvider) -> None:
    priced.set_responses([faux_assistant_message("a long answer " * 10)])
    agent = Agent(model=priced.get_model(), max_cost=0.01, max_turns=1)
    await agent.prompt("go")
    assert agent.limit_note is None
    assert agent.spent > 0.01


async def test_conversation_budget_stops_then_refuses_until_raised(priced: FauxProvider) -> None:
    priced.set_responses([*tool_calls(3), faux_assistant_message("done")])
    agent = Agent(model=priced.get_model(), tools=[t_tool()], budget=0.15)
    await agent.prompt("go")
    assert agent.limit_note == "conversation budget of $0.15 reached: $0.20 spent"
    before = list(agent.state.messages)
    with pytest.raises(BudgetExceededError, match=r"budget of \$0.15 reached: \$0.20 spent"):
        await agent.prompt("more")
    agent.follow_up("queued")
    with pytest.raises(BudgetExceededError):
        await agent.continue_()  # it would run the queued follow-up: refused, still queued
    assert [m.content[0].text for m in agent.follow_up_queue] == ["queued"]
    agent.clear_follow_up_queue()
    assert agent.state.messages == before and not agent.is_running
    agent.budget = 1.00
    await agent.continue_()
    assert agent.limit_note is None
    assert agent.state.messages[-1].content[0].text == "done"


async def test_max_turns_says_why_it_stopped(priced: FauxProvider) -> None:
    priced.set_responses(tool_calls(4))
    agent = Agent(model=priced.get_model(), tools=[t_tool()], max_turns=2)
    await agent.prompt("go")
    assert agent.limit_note == "turn limit of 2 reached: 2 turns run"
    assert priced.call_count == 2


async def test_the_users_stop_hook_runs_first_and_takes_no_note(priced: FauxProvider) -> None:
    priced.set_responses(tool_calls(4))
    seen: list[int] = []

    def stop(turn: Any, signal: Any) -> bool:
        seen.append(len(turn.new_messages))
        return True

    agent = Agent(
        model=priced.get_model(), tools=[t_tool()], max_cost=0.05, should_stop_after_turn=stop
    )
    await agent.prompt("go")
    assert seen == [3] and agent.limit_note is None


# -- where a cost comes from --------------------------------------------------------------


MODEL = Model(id="m", api="x", provider="p", base_url="", cost=ModelCost(input=1.0, output=2.0))


def reply(usage: Usage, text: str = "abcdefgh") -> AssistantMessage:
    message = faux_assistant_message(text)
    message.usage = usage
    return message


def test_a_reported_cost_is_taken_as_it_is() -> None:
    usage = Usage(input=1_000_000, output=0, cost=UsageCost(total=0.42))
    assert reply_cost(reply(usage), MODEL, prompt_chars=0) == 0.42


def test_reported_tokens_are_priced_with_the_models_rates() -> None:
    message = reply(Usage(input=1_000_000, output=500_000))
    assert reply_cost(message, MODEL, prompt_chars=0) == pytest.approx(2.0)
    assert message.usage.cost.total == 0  # the transcript's message is not changed


def test_no_usage_at_all_is_estimated_from_characters() -> None:
    # 4 characters a token: 4M prompt characters -> 1M tokens ($1), 8 reply characters -> 2.
    cost = reply_cost(reply(Usage()), MODEL, prompt_chars=4_000_000)
    assert cost == pytest.approx(1.0 + 2 * 2.0 / 1e6)


async def test_spent_uses_what_the_provider_reported() -> None:
    async def events(message: AssistantMessage) -> AsyncIterator[AssistantMessageEvent]:
        yield StartEvent(message.model_copy())
        yield Done("stop", message)

    def stream_fn(model: Any, context: Any, options: Any) -> AssistantMessageEventStream:
        message = reply(Usage(input=10, output=5, cost=UsageCost(total=0.3)), "hi")
        return AssistantMessageEventStream.from_events(events(message))

    agent = Agent(model=MODEL, stream_fn=stream_fn, budget=0.25)
    await agent.prompt("go")
    assert agent.spent == pytest.approx(0.3)
    with pytest.raises(BudgetExceededError, match=r"\$0.30 spent"):
        await agent.prompt("again")


async def test_compaction_summaries_count_towards_the_budget() -> None:
    provider = register_faux_provider(
        token_size=(1, 1), models=[{"id": "p", "cost": PRICES, "context_window": 400}]
    )
    try:
        provider.set_responses(
            [
                faux_assistant_message("r1"),
                faux_assistant_message("SUMM"),
                faux_assistant_message("r2"),
            ]
        )
        agent = Agent(model=provider.get_model())
        await agent.prompt("A" * 800)
        await agent.prompt("B" * 800)
        assert agent.compaction.compacted == 2
        # r1, the summary and r2: one output token each, $0.10 a token.
        assert agent.spent == pytest.approx(0.30)
        agent.reset()
        assert agent.spent == 0
    finally:
        provider.unregister()
