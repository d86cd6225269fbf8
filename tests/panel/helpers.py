"""Real agent runs (faux provider) for the panel's unit tests, and a capturing panel."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from pi_notebook.agent import Agent, AgentTool
from pi_notebook.agent.types import AgentToolResult
from pi_notebook.ai import AssistantMessage, register_faux_provider
from pi_notebook.ai.faux import FauxProvider
from pi_notebook.notebook.panel import AgentPanel


def faux(
    responses: Sequence[AssistantMessage], tps: float | None = None, size: int = 1
) -> FauxProvider:
    provider = register_faux_provider(token_size=(size, size), tokens_per_second=tps)
    provider.set_responses(list(responses))
    return provider


def image_tool(name: str = "plot", displays: list[dict[str, str]] | None = None) -> AgentTool:
    """A tool that reports progress, returns text + an image and a namespace diff (and
    ``displays``, rich displays as run_python's details carry them)."""

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        on_update(AgentToolResult(content=[{"type": "text", "text": "half way"}]))
        return AgentToolResult(
            content=[
                {"type": "text", "text": f"plotted {params['n']} points"},
                {"type": "image", "data": "iVBORw0KGgo=", "mime_type": "image/png"},
            ],
            details={
                "namespace_diff": {"created": ["fig"], "changed": [], "deleted": []},
                **({"displays": displays} if displays else {}),
            },
        )

    return AgentTool(
        name=name,
        description="plot",
        parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
        execute=execute,
    )


def failing_tool(name: str = "boom") -> AgentTool:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        raise RuntimeError("the tool broke")

    return AgentTool(name=name, description="fails", parameters={"type": "object"}, execute=execute)


async def collect_events(
    provider: FauxProvider, prompt: str | list[Any] = "Hi", tools: Sequence[AgentTool] = ()
) -> list[Any]:
    agent = Agent(model=provider.get_model(), tools=list(tools))
    events: list[Any] = []
    agent.subscribe(events.append)
    await agent.prompt(prompt)
    return events


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class CapturePanel(AgentPanel):
    """An AgentPanel whose custom messages are kept (serialised, as the comm would)."""

    def __init__(self, **kwargs: Any) -> None:
        self.sent: list[dict[str, Any]] = []
        self.waiters: list[tuple[Any, asyncio.Event]] = []
        super().__init__(**kwargs)

    def _send_message(self, message: dict[str, Any]) -> None:
        self.sent.append(json.loads(json.dumps(message)))
        for predicate, event in self.waiters:
            if predicate(self):
                event.set()

    async def wait_for(self, predicate: Any, timeout: float = 10) -> None:
        if predicate(self):
            return
        event = asyncio.Event()
        self.waiters.append((predicate, event))
        await asyncio.wait_for(event.wait(), timeout)


def replay(sent: list[dict[str, Any]]) -> dict[str, Any]:
    """What a view following ``sent`` ends with (asserting the seq numbers are contiguous)."""
    state: dict[str, Any] | None = None
    seq = -1
    from pi_notebook.notebook.panel.ops import apply_ops

    for message in sent:
        if message["type"] == "snapshot":
            state = {k: v for k, v in message.items() if k not in ("type", "seq")}
            seq = message["seq"]
        else:
            assert state is not None
            assert message["seq"] == seq + 1, (message["seq"], seq)
            apply_ops(state, message["ops"])
            seq = message["seq"]
    assert state is not None
    return state
