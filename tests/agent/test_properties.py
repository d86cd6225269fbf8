"""Property-based checks over random scripted runs (hypothesis).

Random mixes of thinking, text and tool calls (fast, slow, raising, unknown, terminating,
sequential tools; truncated and errored replies), with steering, follow-ups and aborts injected
at random events. Whatever happens, the run's events close properly, every executed batch
answers its calls in source order, the transcript stays a valid history, and no queued message
is lost or duplicated.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import (
    AssistantMessage,
    TextContent,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
    register_faux_provider,
)
from pi_notebook.ai.transform import is_valid_history, transform_messages

TOOL_NAMES = ["fast", "slow", "boom", "missing", "stop", "serial"]


async def _fast(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=f"fast {call_id}")])


async def _slow(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    for step in range(3):
        on_update(AgentToolResult(content=[TextContent(text=f"step {step}")]))
        await asyncio.sleep(0)
    return AgentToolResult(content=[TextContent(text=f"slow {call_id}")])


async def _boom(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    await asyncio.sleep(0)
    raise RuntimeError("boom")


async def _stop(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text="stop")], terminate=True)


TOOLS = [
    AgentTool(name="fast", execute=_fast),
    AgentTool(name="slow", execute=_slow),
    AgentTool(name="boom", execute=_boom),
    AgentTool(name="stop", execute=_stop),
    AgentTool(name="serial", execute=_fast, execution_mode="sequential"),
]

block = st.one_of(
    st.builds(lambda s: faux_thinking(s), st.text(min_size=1, max_size=12)),
    st.builds(lambda s: faux_text(s), st.text(min_size=1, max_size=20)),
    st.builds(lambda n: ("call", n), st.sampled_from(TOOL_NAMES)),
)
reply = st.tuples(
    st.lists(block, min_size=1, max_size=5),
    st.sampled_from(["auto", "auto", "auto", "length", "error"]),
)
action = st.tuples(st.integers(0, 60), st.sampled_from(["steer", "follow_up", "abort"]))


def build_reply(blocks: list[Any], stop: str, counter: list[int]) -> AssistantMessage:
    content = []
    for item in blocks:
        if isinstance(item, tuple):
            counter[0] += 1
            content.append(faux_tool_call(item[1], {"n": counter[0]}, id=f"call_{counter[0]}"))
        else:
            content.append(item)
    has_calls = any(b.type == "toolCall" for b in content)
    if stop == "auto":
        return faux_assistant_message(content, stop_reason="toolUse" if has_calls else "stop")
    if stop == "error":
        return faux_assistant_message(content, stop_reason="error", error_message="scripted")
    return faux_assistant_message(content, stop_reason="length")


def check_events(kinds: list[str]) -> None:
    assert kinds[0] == "agent_start"
    assert kinds[-1] == "agent_end" and kinds.count("agent_end") == 1
    open_message = open_turn = False
    for kind in kinds:
        if kind == "message_start":
            assert not open_message
            open_message = True
        elif kind == "message_update":
            assert open_message
        elif kind == "message_end":
            assert open_message
            open_message = False
        elif kind == "turn_start":
            assert not open_turn
            open_turn = True
        elif kind == "turn_end":
            assert open_turn
            open_turn = False
    assert not open_message and not open_turn


def check_batches(messages: list[Any], aborted: bool) -> None:
    for i, message in enumerate(messages):
        if message.role != "assistant" or message.stop_reason in ("error", "aborted"):
            continue
        call_ids = [b.id for b in message.content if b.type == "toolCall"]
        answered = []
        for later in messages[i + 1 :]:
            if later.role != "toolResult":
                break
            answered.append(later.tool_call_id)
        if aborted:
            assert answered == call_ids[: len(answered)]
        else:
            assert answered == call_ids


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    replies=st.lists(reply, min_size=1, max_size=6),
    actions=st.lists(action, max_size=4),
    parallel=st.booleans(),
)
def test_random_runs_keep_every_invariant(
    replies: list[tuple[list[Any], str]], actions: list[tuple[int, str]], parallel: bool
) -> None:
    asyncio.run(_run_case(replies, actions, parallel))


async def _run_case(
    replies: list[tuple[list[Any], str]], actions: list[tuple[int, str]], parallel: bool
) -> None:
    faux = register_faux_provider(token_size=(1, 1))
    try:
        counter = [0]
        scripted = [build_reply(blocks, stop, counter) for blocks, stop in replies]

        def respond(context: Any, options: Any, state: Any, model: Any) -> AssistantMessage:
            return scripted.pop(0) if scripted else faux_assistant_message("fine")

        faux.set_responses([respond] * 40)
        agent = Agent(
            model=faux.get_model(),
            tools=TOOLS,
            tool_execution="parallel" if parallel else "sequential",
        )
        kinds: list[str] = []
        sent: list[str] = []
        sent_at: dict[str, int] = {}
        pending_actions = sorted(actions)
        aborted = [False]

        def listener(event: Any) -> None:
            kinds.append(event.type)
            while pending_actions and pending_actions[0][0] <= len(kinds):
                _, what = pending_actions.pop(0)
                if what == "abort":
                    aborted[0] = True
                    agent.abort()
                else:
                    text = f"{what} #{len(sent)}"
                    sent.append(text)
                    sent_at[text] = len(kinds)
                    getattr(agent, what)(text)

        agent.subscribe(listener)
        await asyncio.wait_for(agent.prompt("start"), 10)

        check_events(kinds)
        transcript = agent.state.messages
        check_batches(transcript, aborted[0])
        assert is_valid_history(transform_messages(transcript, faux.get_model()))

        delivered = [
            m.content[0].text
            for m in transcript
            if m.role == "user" and m.content[0].text != "start"
        ]
        queued = [m.content[0].text for m in agent.steering_queue + agent.follow_up_queue]
        assert sorted(delivered + queued) == sorted(sent)
        assert len(set(delivered)) == len(delivered)
        replies_seen = [m for m in transcript if m.role == "assistant"]
        if not aborted[0] and replies_seen[-1].stop_reason not in ("error", "aborted"):
            # A clean end drained every queue, except what arrived after the last poll.
            last_turn_end = len(kinds) - kinds[::-1].index("turn_end")
            assert all(sent_at[text] >= last_turn_end for text in queued)
    finally:
        faux.unregister()
