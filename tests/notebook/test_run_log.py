"""What the magic keeps of a run (issue 14, items 6 and 7): counts, the lifecycle, coalesced
deltas; never an object per token, and ``%agent events`` dumps each message once."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest

from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import (
    FauxProvider,
    TextContent,
    faux_assistant_message,
    faux_thinking,
    faux_tool_call,
    register_faux_provider,
)
from pi_notebook.notebook import magic
from pi_notebook.notebook.options import AgentOptions
from pi_notebook.notebook.session import NotebookSession


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    provider = register_faux_provider(token_size=(1, 1))
    yield provider
    provider.unregister()


async def _run(faux: FauxProvider, *replies: Any, tools: list[AgentTool] | None = None) -> Any:
    faux.set_responses(list(replies))
    agent = Agent(model=faux.get_model(), tools=tools or [])
    session = NotebookSession()
    shown: list[str] = []
    await magic.execute(agent, "hi", AgentOptions(plain=True), session, {}, shown.append)
    return session


async def test_a_plain_run_keeps_no_object_per_token(faux: FauxProvider) -> None:
    tokens = 50_000
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        session = await _run(faux, faux_assistant_message("word" * tokens))
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # What stays is the text a few times (transcript, _agent_reply, the coalesced deltas):
    # about 16 bytes a token. Keeping every event cost ~600 bytes a token (issue 14: 1M tokens
    # took RSS from 70 to 687 MB).
    assert retained / tokens < 50, f"{retained / tokens:.0f} bytes retained per token"
    assert session.last_run.updates == tokens + 2  # text_start, the deltas, text_end


async def test_events_coalesce_deltas_per_block_and_dump_each_message_once(
    faux: FauxProvider,
) -> None:
    async def progress(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        for step in range(3):
            on_update(AgentToolResult(content=[TextContent(text=f"step {step}")]))
        return AgentToolResult(content=[TextContent(text="done")])

    tool = AgentTool(name="work", parameters={"type": "object"}, execute=progress)
    session = await _run(
        faux,
        faux_assistant_message(
            [faux_thinking("hm " * 50), faux_tool_call("work", {"n": 1}, id="w1")],
            stop_reason="toolUse",
        ),
        faux_assistant_message("answer " * 100),
        tools=[tool],
    )
    records = session.last_events
    updates = [r for r in records if r["type"] == "message_update"]
    deltas = [r for r in updates if r["update"].endswith("_delta")]
    assert [(r["update"], r["content_index"]) for r in deltas] == [
        ("thinking_delta", 0),
        ("toolcall_delta", 1),
        ("text_delta", 0),
    ]
    assert deltas[0]["delta"] == "hm " * 50 and deltas[2]["delta"] == "answer " * 100
    assert json.loads(deltas[1]["delta"]) == {"n": 1}
    assert sum(r["deltas"] for r in deltas) == session.last_run.updates - (len(updates) - 3)
    [tool_updates] = [r for r in records if r["type"] == "tool_execution_update"]
    assert tool_updates["updates"] == 3 and tool_updates["tool_name"] == "work"
    ends = [r for r in records if r["type"] == "message_end"]
    assert [r["role"] for r in ends] == ["user", "assistant", "toolResult", "assistant"]
    assert ends[-1]["message"]["content"] == [{"type": "text", "text": "answer " * 100}]
    starts = [r for r in records if r["type"] == "message_start"]
    assert all("message" not in r for r in starts)  # dumped once: at the message's end
    types = [r["type"] for r in records if r["type"] != "message_update"]
    assert types[:4] == ["agent_start", "turn_start", "message_start", "message_end"]
    assert types[-2:] == ["turn_end", "agent_end"]
    assert records[-1] == {"type": "agent_end", "messages": 4}  # user, assistant, result, answer
    json.dumps(records)  # plain data
