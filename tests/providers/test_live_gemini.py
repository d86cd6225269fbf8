"""Opt-in live tier: Google's Gemini API itself (``GEMINI_API_KEY=... pytest -m live``).

Skipped cleanly without ``GEMINI_API_KEY``. One short reply through ``complete()`` and one tool
round trip through the ``Agent`` on ``google/gemini-2.5-flash`` (a fraction of a cent).
Assertions are about structure, never wording.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest

from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import Context, TextContent, UserMessage, complete
from pi_notebook.ai.providers import aclose_client, resolve_model

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not os.environ.get("GEMINI_API_KEY"), reason="GEMINI_API_KEY is not set"),
]

MODEL = "google/gemini-2.5-flash"


async def test_complete_says_something() -> None:
    try:
        reply = await asyncio.wait_for(
            complete(
                resolve_model(MODEL),
                Context(messages=[UserMessage(content="Say hello in three words.")]),
            ),
            60,
        )
    finally:
        await aclose_client()
    assert reply.stop_reason == "stop", reply.error_message
    assert any(b.type == "text" and b.text.strip() for b in reply.content)
    assert reply.usage.input > 0 and reply.usage.output > 0


async def test_a_tool_round_trip_through_the_agent() -> None:
    seen: list[dict[str, Any]] = []

    async def execute(call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> Any:
        seen.append(params)
        return AgentToolResult(content=[TextContent(text="The secret word is 'aubergine'.")])

    tool = AgentTool(
        name="get_secret_word",
        description="Returns today's secret word.",
        parameters={"type": "object", "properties": {}},
        execute=execute,
    )
    agent = Agent(model=resolve_model(MODEL), tools=[tool], thinking_level="low")
    try:
        await asyncio.wait_for(agent.prompt("Call get_secret_word, then tell me the word."), 90)
    finally:
        await aclose_client()
    assert seen == [{}]
    last = agent.state.messages[-1]
    assert last.role == "assistant" and last.stop_reason == "stop", last.error_message
