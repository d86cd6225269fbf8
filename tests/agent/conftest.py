"""Shared fixtures for the loop and Agent tests: a faux model and an event/hook recorder."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pi_notebook.agent import (
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    default_convert_to_llm,
)
from pi_notebook.ai import FauxProvider, TextContent, register_faux_provider


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    provider = register_faux_provider(token_size=(1, 1))
    yield provider
    provider.unregister()


class Log:
    """One ordered log of events (by type) and hook calls, as the awaited sink sees them."""

    def __init__(self) -> None:
        self.entries: list[str] = []
        self.events: list[Any] = []

    async def emit(self, event: Any) -> None:
        self.events.append(event)
        if event.type != "message_update":
            self.entries.append(_describe(event))

    def note(self, entry: str) -> None:
        self.entries.append(entry)

    def types(self, *, updates: bool = False) -> list[str]:
        return [e.type for e in self.events if updates or e.type != "message_update"]

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


def _describe(event: Any) -> str:
    if event.type in ("message_start", "message_end"):
        return f"{event.type}({event.message.role})"
    if event.type.startswith("tool_execution"):
        return f"{event.type}({event.tool_call_id})"
    return str(event.type)


@pytest.fixture
def log() -> Log:
    return Log()


def text_tool(name: str, reply: str = "ok", **kwargs: Any) -> AgentTool:
    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        return AgentToolResult(content=[TextContent(text=reply)], details={"params": params})

    return AgentTool(
        name=name,
        description=f"the {name} tool",
        parameters={"type": "object", "properties": {}},
        execute=execute,
        **kwargs,
    )


def make_config(faux: FauxProvider, **kwargs: Any) -> AgentLoopConfig:
    kwargs.setdefault("convert_to_llm", default_convert_to_llm)
    return AgentLoopConfig(model=faux.get_model(), **kwargs)


def make_context(*tools: AgentTool, messages: list[Any] | None = None) -> AgentContext:
    return AgentContext(system_prompt="You are a test.", messages=messages or [], tools=list(tools))
