"""Fixtures for the tools tests: a faux model driving a real Agent, and the real kernel."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pi_notebook.agent import Agent, AgentTool
from pi_notebook.ai import (
    FauxProvider,
    ToolResultMessage,
    faux_assistant_message,
    faux_tool_call,
    register_faux_provider,
)

from ..notebook.conftest import Kernel, kernel  # noqa: F401  (the real-kernel fixture)


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    provider = register_faux_provider(token_size=(1, 1))
    yield provider
    provider.unregister()


def tool_turn(*calls: tuple[str, dict[str, Any]]) -> Any:
    """One assistant message calling ``calls`` (name, arguments) in order."""
    return faux_assistant_message(
        [faux_tool_call(name, args, id=f"call_{i}") for i, (name, args) in enumerate(calls)],
        stop_reason="toolUse",
    )


async def run_agent(
    faux: FauxProvider,
    tools: list[AgentTool],
    *turns: list[tuple[str, dict[str, Any]]],
    **agent_options: Any,
) -> list[ToolResultMessage]:
    """Run an Agent whose model calls ``turns`` (one batch each), then says "done"."""
    faux.set_responses([*(tool_turn(*turn) for turn in turns), faux_assistant_message("done")])
    agent = Agent(model=faux.get_model(), tools=tools, **agent_options)
    await agent.prompt("go")
    assert agent.state.messages[-1].role == "assistant"
    return [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]


def text_of(message: ToolResultMessage) -> str:
    return "\n".join(block.text for block in message.content if block.type == "text")
