"""The approval gate's four answers: Approve, Always allow (the tool runs without asking from
then on), Deny (the model may try again) and Deny and stop (the run ends at once)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pi_notebook.agent import Agent, AgentEvent, RunConfig
from pi_notebook.ai import (
    AbortSignal,
    AssistantMessage,
    FauxProvider,
    ToolResultMessage,
    faux_assistant_message,
)
from pi_notebook.tools import (
    DENIED,
    DENIED_AND_STOPPED,
    ApprovalGate,
    ApprovalRequest,
    set_approver,
    tool,
)
from pi_notebook.tools.approval import allowed_line, answer_line, as_answer

from .conftest import text_of, tool_turn


class Script:
    """An approver answering from a script and remembering what it was asked."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, request: ApprovalRequest, signal: AbortSignal | None) -> Any:
        self.asked.append(request.tool_call_id)
        return self.answers.pop(0)


@pytest.fixture(autouse=True)
def no_global_approvers() -> Iterator[None]:
    yield
    set_approver(None)


def counting_tools() -> tuple[list[Any], list[str]]:
    ran: list[str] = []

    @tool
    def ping() -> str:
        """Ping."""
        ran.append("ping")
        return "pong"

    @tool
    def pong() -> str:
        """Pong."""
        ran.append("pong")
        return "ping"

    return [ping, pong], ran


def results(agent: Agent) -> dict[str, ToolResultMessage]:
    return {m.tool_call_id: m for m in agent.state.messages if isinstance(m, ToolResultMessage)}


def test_answers_read_as_before_and_the_new_ones_by_name() -> None:
    assert [as_answer(v) for v in (True, False, "yes", None, 1)] == ["approve"] + ["deny"] * 4
    assert [as_answer(v) for v in ("approve", "always", "deny", "stop")] == [
        "approve",
        "always",
        "deny",
        "stop",
    ]
    assert answer_line("always", "read_file") == (
        "approved by the user: always allow read_file (this conversation)"
    )
    assert answer_line("stop", "x") == DENIED_AND_STOPPED == "denied and stopped by the user"
    assert allowed_line("read_file") == "allowed (always allow read_file)"


async def test_always_allow_skips_the_question_for_that_tool_in_this_run_and_the_next(
    faux: FauxProvider,
) -> None:
    tools, ran = counting_tools()
    approver = Script("always", False)
    allowed: set[str] = set()
    told: list[tuple[str, str]] = []

    def gate() -> ApprovalGate:  # one per run, as a conversation makes them
        return ApprovalGate(
            "all", lambda: approver, allowed=allowed, notify=lambda i, t: told.append((i, t))
        )

    faux.set_responses(
        [
            tool_turn(("ping", {})),
            tool_turn(("ping", {}), ("pong", {})),
            faux_assistant_message("done"),
        ]
    )
    agent = Agent(model=faux.get_model(), tools=tools)
    first = gate()
    await agent.prompt("go", run=RunConfig(before_tool_call=first.before_tool_call))
    # Turn 1: asked, "always"; turn 2: ping runs without asking, pong is asked (and denied).
    assert len(approver.asked) == 2 and allowed == {"ping"}
    assert ran == ["ping", "ping"]
    assert [t for _, t in told] == [
        "approved by the user: always allow ping (this conversation)",
        "allowed (always allow ping)",
        "denied by the user",
    ]
    assert text_of(list(results(agent).values())[-1]) == DENIED
    # The next run (a new gate on the same set): ping still runs without a question.
    faux.set_responses([tool_turn(("ping", {})), faux_assistant_message("again")])
    told.clear()
    second = gate()
    await agent.prompt("more", run=RunConfig(before_tool_call=second.before_tool_call))
    assert len(approver.asked) == 2 and ran == ["ping", "ping", "ping"]
    assert [t for _, t in told] == ["allowed (always allow ping)"]
    # Forgotten (%agent reset, --approve): asked again.
    allowed.clear()
    approver.answers = [True]
    faux.set_responses([tool_turn(("ping", {})), faux_assistant_message("asked")])
    await agent.prompt("once more", run=RunConfig(before_tool_call=gate().before_tool_call))
    assert len(approver.asked) == 3 and ran == ["ping"] * 4


async def test_deny_and_stop_ends_the_run_at_once_and_the_next_prompt_works(
    faux: FauxProvider,
) -> None:
    tools, ran = counting_tools()
    approver = Script(True, "stop")
    agent = Agent(model=faux.get_model(), tools=tools)
    gate = ApprovalGate("all", lambda: approver, stop=agent.abort)
    events: list[AgentEvent] = []
    faux.set_responses(
        [
            # One batch of three: the first approved, the second denied and stopped.
            tool_turn(("ping", {}), ("pong", {}), ("ping", {})),
            faux_assistant_message("never asked for"),
        ]
    )
    agent.steer("queued steer")
    agent.follow_up("queued follow-up")
    config = RunConfig(
        before_tool_call=gate.before_tool_call, listeners=[gate.listener, events.append]
    )
    await agent.prompt("go", run=config)
    assert approver.asked == ["call_0", "call_1"], "the third call is never asked about"
    assert ran == [], "nothing of the batch ran: the approved call was aborted before it ran"
    found = results(agent)
    assert text_of(found["call_1"]) == DENIED_AND_STOPPED and found["call_1"].is_error
    assert found["call_0"].is_error and "call_2" not in found
    assert events[-1].type == "agent_end"
    assert not agent.is_running
    assert [m.role for m in agent.state.messages][-3:] == ["assistant", "toolResult", "toolResult"]
    assert faux.pending_response_count() == 1, "no request after the stop"
    # The steer was queued before the run: the first poll delivered it. The follow-up stays.
    assert [text_of_user(m) for m in agent.follow_up_queue] == ["queued follow-up"]
    # The next prompt runs on the same transcript (and delivers the follow-up after it).
    faux.append_responses([faux_assistant_message("after the follow-up")])
    await agent.prompt("and now?")
    answers = [m for m in agent.state.messages if isinstance(m, AssistantMessage)][-2:]
    assert [m.stop_reason for m in answers] == ["stop", "stop"]
    assert [m.content[0].text for m in answers] == [  # type: ignore[union-attr]
        "never asked for",
        "after the follow-up",
    ]


async def test_a_steer_queued_while_the_question_is_open_stays_queued(faux: FauxProvider) -> None:
    tools, _ = counting_tools()
    agent = Agent(model=faux.get_model(), tools=tools)

    async def approver(request: ApprovalRequest, signal: AbortSignal | None) -> str:
        agent.steer("while asked")
        return "stop"

    gate = ApprovalGate("all", lambda: approver, stop=agent.abort)
    faux.set_responses([tool_turn(("ping", {})), faux_assistant_message("no")])
    await agent.prompt(
        "go", run=RunConfig(before_tool_call=gate.before_tool_call, listeners=[gate.listener])
    )
    assert [text_of_user(m) for m in agent.steering_queue] == ["while asked"]
    assert faux.pending_response_count() == 1


async def test_without_a_way_to_stop_deny_and_stop_is_a_plain_denial(faux: FauxProvider) -> None:
    tools, _ = counting_tools()
    told: list[str] = []
    gate = ApprovalGate("all", lambda: Script("stop"), notify=lambda i, t: told.append(t))
    faux.set_responses([tool_turn(("ping", {})), faux_assistant_message("tried again")])
    agent = Agent(model=faux.get_model(), tools=tools)
    await agent.prompt("go", run=RunConfig(before_tool_call=gate.before_tool_call))
    (result,) = results(agent).values()
    assert text_of(result) == DENIED and told == ["denied by the user"]
    assert agent.state.messages[-1].content[0].text == "tried again"  # type: ignore[union-attr]


def text_of_user(message: Any) -> str:
    content = message.content
    return content if isinstance(content, str) else "".join(b.text for b in content)
