"""What changed between two requests (``%agent context TURN --diff`` and the panel's "what
changed"), on a real Agent run with tools, a steer and a compaction (faux model, no kernel),
and on requests built by hand for what a run rarely changes (system prompt, tools, options)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from IPython.core.error import UsageError

from pi_notebook.agent import Agent, AgentTool, AgentToolResult, RunConfig
from pi_notebook.ai import (
    TextContent,
    UserMessage,
    faux_assistant_message,
    faux_tool_call,
    register_faux_provider,
)
from pi_notebook.notebook.context_command import context_of
from pi_notebook.notebook.context_diff import changes_view, diff_text, request_diff
from pi_notebook.notebook.context_view import (
    RequestTap,
    SentRequest,
    context_summary,
    context_text,
    turn_request,
)

KEY = "sk-proj-" + "A1b2C3d4" * 6


def _tool(name: str, steer: list[str], agent: list[Agent]) -> AgentTool:
    async def run(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        agent[0].steer(steer.pop(0))  # typed while the tool runs: delivered after the tools
        return AgentToolResult(content=[TextContent(text="R" * int(params["n"]))])

    return AgentTool(
        name=name,
        description=f"The {name} tool.",
        parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
        execute=run,
    )


def three_turns() -> list[SentRequest]:
    """Turn 1 asks; its tool steers; turn 2 sends the reply, the result and the steer; the
    second tool's big result pushes turn 3 past the window's threshold: a summary comes in."""
    faux = register_faux_provider(
        token_size=(1, 1), models=[{"id": "small", "context_window": 400}]
    )
    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("look", {"n": 40}, id="a")], "toolUse"),
            faux_assistant_message([faux_tool_call("look", {"n": 1200}, id="b")], "toolUse"),
            faux_assistant_message("SUMMARY"),
            faux_assistant_message("done"),
        ]
    )
    holder: list[Agent] = []
    steers = ["Also say it in French.", "And in German."]
    agent = Agent(model=faux.get_model("small"), tools=[_tool("look", steers, holder)])
    holder.append(agent)
    tap = RequestTap()
    asyncio.run(agent.prompt("P" * 400, run=RunConfig(on_request=tap)))
    assert [(r.turn, r.purpose) for r in tap.requests] == [
        (1, "turn"),
        (2, "turn"),
        (3, "summary"),
        (3, "turn"),
    ]
    return tap.requests


def test_the_second_request_adds_the_reply_the_tool_result_and_the_steer() -> None:
    requests = three_turns()
    second = turn_request(requests, 2)
    assert second is not None
    diff = request_diff(turn_request(requests, 1), second)
    added = [(c.n, c.message.role, c.why) for c in diff.added]
    assert added == [
        (2, "assistant", "the model's reply to turn 1's request"),
        (3, "toolResult", "a tool result"),
        (4, "user", "steer, entered after turn 1's tools"),
    ]
    assert diff.removed == [] and diff.unchanged == [1] and diff.notes == []
    text = context_of(requests, "2 --diff")
    lines = text.splitlines()
    assert lines[0].startswith("turn 2: what changed since turn 1's request (now 4 messages")
    assert lines[1:7] == [
        "new (3):",
        "+ 2. assistant (≈ 5 tokens): the model's reply to turn 1's request",
        '    → look({"n": 40})',
        "+ 3. toolResult look (≈ 10 tokens): a tool result",
        "    " + "R" * 40,
        "+ 4. user (≈ 6 tokens): steer, entered after turn 1's tools",
    ]
    assert lines[-1] == "unchanged: 1 message (1), the system prompt, 1 tool, the options"
    assert "P" * 100 not in text, "the unchanged prompt is collapsed, not printed"


def test_the_compacted_request_shows_the_summary_in_and_the_messages_out() -> None:
    requests = three_turns()
    text = context_of(requests, "3 --diff")
    lines = text.splitlines()
    assert lines[1:3] == [
        "new (2):",
        "+ 1. user (≈ 22 tokens): the compaction summary (it stands for 6 messages: the 4 out "
        "below and 2 new since turn 2's request, never sent on their own)",
    ]
    assert "+ 2. user (≈ 4 tokens): a user message entered during the run" in text
    assert "    And in German." in text
    out = lines.index("out (4, replaced by the compaction summary; numbered as turn 2 sent them):")
    assert [line.split(":")[0] for line in lines[out + 1 : out + 5]] == [
        "- 1. user (≈ 100 tokens)",
        "- 2. assistant (≈ 5 tokens)",
        "- 3. toolResult look (≈ 10 tokens)",
        "- 4. user (≈ 6 tokens)",
    ]
    assert len(lines[out + 1]) < 200, "a message that left is a preview"
    assert lines[-2:] == [
        "unchanged: 0 messages, the system prompt, 1 tool, the options",
        "(turn 3 also sent: a compaction summary request)",
    ]
    # The panel's form says the same, bounded, and marks the compaction.
    third = turn_request(requests, 3)
    assert third is not None
    changes = changes_view(turn_request(requests, 2), third)
    assert changes is not None and changes["compacted"] is True
    assert [c["n"] for c in changes["added"]] == [1, 2]
    assert [c["label"] for c in changes["removed"]] == [
        "user",
        "assistant",
        "toolResult look",
        "user",
    ]
    assert changes["unchanged"] == 0 and changes["since"] == 2 and changes["tokens"] < 0


def test_turn_one_has_nothing_before_it_and_shows_all_as_new() -> None:
    requests = three_turns()
    text = context_of(requests, "1 --diff")
    first, _, rest = text.partition("\n")
    assert first == (
        "turn 1: the run's first request: nothing before it to compare with, so all of it is new"
    )
    assert rest == context_text(requests[0])
    assert changes_view(None, requests[0]) is None
    assert context_summary(requests[0])["changes"] is None


def test_bad_turns_and_options_are_one_line_errors() -> None:
    requests = three_turns()
    cases = {
        "4 --diff": "%agent context: turn 4: the last run had 3 turns (1 to 3)",
        "0 --diff": "%agent context: turn 0: the last run had 3 turns (1 to 3)",
        "2 --dif": "%agent context: unknown option '--dif'; expected --json or --diff",
        "2 --json --diff": "%agent context: --json and --diff do not go together; choose one",
        "two --diff": "%agent context: expected a turn number, got 'two --diff'",
    }
    for rest, message in cases.items():
        with pytest.raises(UsageError) as error:
            context_of(requests, rest)
        assert str(error.value) == message
    with pytest.raises(UsageError, match="made no model request"):
        context_of([], "--diff")
    assert context_of(requests, "--diff") == context_of(requests, "3 --diff")  # the last


def _request(
    turn: int,
    messages: list[Any],
    system_prompt: str = "Be brief.",
    tools: list[AgentTool] | None = None,
    options: dict[str, Any] | None = None,
) -> SentRequest:
    return SentRequest(turn, "faux/faux-1", system_prompt, messages, tools or [], options or {})


def test_a_reply_without_tools_then_a_user_message_is_a_steer_or_follow_up() -> None:
    prompt = UserMessage(content=[TextContent(text="hi")])
    reply = faux_assistant_message("hello")
    later = UserMessage(content=[TextContent(text="one more thing")])
    diff = request_diff(_request(1, [prompt]), _request(2, [prompt, reply, later]))
    assert [c.why for c in diff.added] == [
        "the model's reply to turn 1's request",
        "steer or follow-up, entered after turn 1",
    ]


def test_rebuilt_messages_with_the_same_content_are_unchanged() -> None:
    """convert_to_llm may hand the provider new objects: equal content is the same message."""
    prompt = UserMessage(content=[TextContent(text="hi")])
    reply = faux_assistant_message("hello")
    before = _request(1, [prompt])
    now = _request(2, [prompt.model_copy(deep=True), reply])
    diff = request_diff(before, now)
    assert diff.unchanged == [1] and [c.n for c in diff.added] == [2] and diff.removed == []


def test_system_prompt_tools_options_and_model_changes_are_named() -> None:
    prompt = UserMessage(content=[TextContent(text="hi")])
    tools = [_tool("one", [], []), _tool("two", [], [])]
    before = _request(1, [prompt], tools=[tools[0]], options={"max_tokens": 10})
    now = _request(
        2,
        [prompt],
        system_prompt=f"Be brief. The key is {KEY}.",
        tools=[tools[1]],
        options={"max_tokens": 5, "temperature": 0.2},
    )
    now.model = "faux/faux-2"
    diff = request_diff(before, now)
    assert diff.notes == [
        "model: faux/faux-1 → faux/faux-2",
        "system prompt changed (≈ 3 tokens → ≈ 20 tokens)",
        "tools added: two",
        "tools removed: one",
        "options changed: max_tokens, temperature",
    ]
    text = diff_text(diff)
    assert "\n    Be brief. The key is [redacted" in text and KEY not in text
    assert "no change: the same messages as before" not in text
    assert text.endswith("unchanged: 1 message (1)")
    again = _request(2, [prompt], tools=[tools[0]], options={"max_tokens": 10})
    same = diff_text(request_diff(before, again))
    assert "no change: the same messages as before" in same


def test_no_key_reaches_the_diff_or_the_panels_changes() -> None:
    prompt = UserMessage(content=[TextContent(text="hi")])
    leak = UserMessage(content=[TextContent(text=f"use {KEY}")])
    before = _request(1, [prompt, leak])
    now = _request(2, [prompt, UserMessage(content=[TextContent(text=f"now {KEY}")])])
    for text in (diff_text(request_diff(before, now)), json.dumps(changes_view(before, now))):
        assert KEY not in text and "[redacted" in text
