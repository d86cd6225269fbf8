"""Context compaction on the Agent, with a faux model whose context window is small.

Sizes are 4 characters a token: the window is 400 tokens, so the threshold (80%) is 320 and
the kept tail about 120; each prompt of 800 characters is 200 tokens.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pi_notebook.agent import (
    SUMMARY_MARK,
    Agent,
    AgentTool,
    AgentToolResult,
    Compaction,
    Compactor,
    is_summary,
)
from pi_notebook.agent.summarise import SUMMARY_INSTRUCTIONS, SUMMARY_SYSTEM
from pi_notebook.ai import (
    AssistantMessage,
    Context,
    FauxProvider,
    Model,
    TextContent,
    ToolResultMessage,
    UserMessage,
    faux_assistant_message,
    faux_tool_call,
    register_faux_provider,
)

A, B, C = "A" * 800, "B" * 800, "C" * 800


@pytest.fixture
def small() -> Iterator[FauxProvider]:
    provider = register_faux_provider(
        token_size=(1, 1), models=[{"id": "small", "context_window": 400}]
    )
    yield provider
    provider.unregister()


class Requests:
    """Scripted replies that remember the request each one answered."""

    def __init__(self) -> None:
        self.contexts: list[Context] = []

    def reply(self, text: str, **fields: Any) -> Any:
        def step(context: Context, options: Any, state: Any, model: Any) -> AssistantMessage:
            self.contexts.append(context)
            return faux_assistant_message(text, **fields)

        return step


def texts(context: Context) -> list[str]:
    out = []
    for message in context.messages:
        content = message.content
        out.append(content if isinstance(content, str) else content[0].text)
    return out


async def test_the_oldest_turns_are_summarised_for_the_model_only(small: FauxProvider) -> None:
    seen = Requests()
    small.set_responses([seen.reply("r1"), seen.reply("SUMMARY of A"), seen.reply("r2")])
    agent = Agent(model=small.get_model())
    compactions: list[Compaction] = []
    agent.compaction.subscribe(compactions.append)
    await agent.prompt(A)
    assert compactions == [] and small.call_count == 1  # 200 tokens: under the threshold
    await agent.prompt(B)
    # The summary request: the same model, no tools, the old turns written out, instructions.
    summary = seen.contexts[1]
    assert summary.system_prompt == SUMMARY_SYSTEM and summary.tools == []
    [request] = texts(summary)
    assert request == (
        f"<conversation>\n[user]: {A}\n\n[assistant]: r1\n</conversation>\n\n{SUMMARY_INSTRUCTIONS}"
    )
    # The model then saw the summary, marked as such, and the kept tail as it was.
    main = seen.contexts[2]
    marker = SUMMARY_MARK.format(count=2)
    assert texts(main) == [f"{marker}\n<summary>\nSUMMARY of A\n</summary>", B]
    assert main.messages[1] is agent.state.messages[2]
    # The transcript keeps the whole history.
    assert [m.role for m in agent.state.messages] == ["user", "assistant"] * 2
    assert agent.state.messages[0].content[0].text == A
    [done] = compactions
    assert (done.count, done.position, done.note) == (2, 3, "compacted 2 messages")
    assert done.tokens_before > 320 >= done.tokens_after


async def test_the_summary_is_reused_not_recomputed(small: FauxProvider) -> None:
    seen = Requests()
    small.set_responses([seen.reply("r1"), seen.reply("S1"), seen.reply("r2"), seen.reply("r3")])
    agent = Agent(model=small.get_model())
    await agent.prompt(A)
    await agent.prompt(B)
    await agent.prompt("short")
    assert small.call_count == 4  # one summary only
    assert is_summary(seen.contexts[3].messages[0])
    assert texts(seen.contexts[3])[1:] == [B, "r2", "short"]


async def test_a_second_compaction_summarises_the_summary_with_the_next_turns(
    small: FauxProvider,
) -> None:
    seen = Requests()
    small.set_responses([seen.reply(t) for t in ("r1", "S1", "r2", "S2", "r3")])
    agent = Agent(model=small.get_model())
    for prompt in (A, B, C):
        await agent.prompt(prompt)
    [second] = texts(seen.contexts[3])
    assert second.startswith(
        f"<conversation>\n[summary of what came before]: {SUMMARY_MARK.format(count=2)}"
    )
    assert f"[user]: {B}\n\n[assistant]: r2\n</conversation>" in second
    assert texts(seen.contexts[4]) == [
        f"{SUMMARY_MARK.format(count=4)}\n<summary>\nS2\n</summary>",
        C,
    ]
    assert agent.compaction.compacted == 4


async def test_compaction_off_sends_everything(small: FauxProvider) -> None:
    seen = Requests()
    small.set_responses([seen.reply("r1"), seen.reply("r2")])
    agent = Agent(model=small.get_model(), compaction=False)
    await agent.prompt(A)
    await agent.prompt(B)
    assert texts(seen.contexts[1]) == [A, "r1", B]


async def test_compact_by_hand_and_reset(small: FauxProvider) -> None:
    seen = Requests()
    small.set_responses([seen.reply("r1"), seen.reply("by hand"), seen.reply("r2")])
    agent = Agent(model=small.get_model())
    await agent.prompt("one")
    done = await agent.compact()
    assert done is not None and done.count == 1
    await agent.prompt("three")
    assert texts(seen.contexts[2])[1:] == ["r1", "three"]
    agent.reset()
    assert agent.compaction.compacted == 0


async def test_abort_during_the_summary_ends_the_run_cleanly(small: FauxProvider) -> None:
    agent = Agent(model=small.get_model())
    small.set_responses([faux_assistant_message("r1")])
    await agent.prompt(A)

    def summary(context: Context, options: Any, state: Any, model: Any) -> AssistantMessage:
        agent.abort()  # the user presses Abort while the summary is being written
        return faux_assistant_message("never used")

    small.set_responses([summary, faux_assistant_message("never")])
    types: list[str] = []
    agent.subscribe(lambda e: types.append(e.type))
    await agent.prompt(B)
    assert types[-1] == "agent_end" and types.count("agent_end") == 1
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "aborted"
    assert agent.compaction.compacted == 0 and small.pending_response_count() == 1
    small.set_responses([faux_assistant_message("S"), faux_assistant_message("next")])
    await agent.prompt("again")  # the transcript is valid for the next request
    assert agent.state.messages[-1].content[0].text == "next"


# -- where the cut falls ---------------------------------------------------------------------


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


def calls(*ids: str) -> AssistantMessage:
    return faux_assistant_message(
        [faux_tool_call("t", {}, id=i) for i in ids], stop_reason="toolUse"
    )


def result(call_id: str, text: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name="t", content=[TextContent(text=text)])


def compactor(window: int, keep: float) -> tuple[Compactor, list[Context]]:
    asked: list[Context] = []

    async def summarise(context: Context, signal: Any) -> AssistantMessage:
        asked.append(context)
        return faux_assistant_message("S")

    model = Model(id="m", api="x", provider="p", base_url="", context_window=window)
    return Compactor(model=lambda: model, summarise=summarise, keep_fraction=keep), asked


async def test_a_tool_call_is_never_split_from_its_result() -> None:
    # u1 400 tokens, call 1, result 100, u2 100; keeping 200 tokens would fit the result and
    # u2, but not the call too: the result goes with its call into the summary.
    messages = [user("u" * 1600), calls("c1"), result("c1", "r" * 400), user("v" * 400)]
    comp, asked = compactor(window=1000, keep=0.2)
    done = await comp.compact(messages)
    assert done is not None and done.count == 3
    [request] = texts(asked[0])
    assert "[assistant calls t]: {}" in request and "[tool result of t]: rrrr" in request
    assert comp.view(messages)[1:] == [messages[3]]


async def test_an_unanswered_tool_call_is_kept() -> None:
    messages = [user("u" * 1600), user("w" * 1600), calls("c9"), user("v" * 40)]
    comp, _ = compactor(window=1000, keep=0.01)
    done = await comp.compact(messages)
    assert done is not None and done.count == 2
    assert comp.view(messages)[1:] == messages[2:]


async def test_tool_turns_in_one_run_are_compacted(small: FauxProvider) -> None:
    seen = Requests()
    tool = AgentTool(
        name="t",
        description="",
        parameters={"type": "object"},
        execute=lambda i, p, s, u: AgentToolResult(content=[TextContent(text="x" * 600)]),
    )
    small.set_responses(
        [
            _call_step(seen, "a"),
            _call_step(seen, "b"),
            seen.reply("S"),
            seen.reply("done"),
        ]
    )
    agent = Agent(model=small.get_model(), tools=[tool])
    await agent.prompt("go")
    final = seen.contexts[-1]
    assert is_summary(final.messages[0])
    roles = [m.role for m in final.messages[1:]]
    assert roles[0] == "assistant" and roles == ["assistant", "toolResult"]
    assert agent.state.messages[-1].content[0].text == "done"


def _call_step(seen: Requests, call_id: str) -> Any:
    def step(context: Context, options: Any, state: Any, model: Any) -> AssistantMessage:
        seen.contexts.append(context)
        return calls(call_id)

    return step
