"""One tool result reaches the model capped (issue 28, item 10): 100,000 characters of text by
default (``$PI_NOTEBOOK_TOOL_RESULT_CHARS``, or a tool's ``max_result_chars``), then a note;
the whole text stays in the result's details. A result that fits is the tool's own, untouched."""

from __future__ import annotations

from typing import Any

import pytest

from pi_notebook.agent import (
    CUT_NOTE,
    DEFAULT_TOOL_RESULT_CHARS,
    FULL_TEXT,
    Agent,
    AgentTool,
    AgentToolResult,
)
from pi_notebook.ai import FauxProvider, ImageContent, TextContent, faux_tool_call
from pi_notebook.ai import faux_assistant_message as reply

BIG = "".join(f"{i:07d} " for i in range(40_000))  # 320,000 characters
PNG = "iVBORw0KGgo="


def returning(result: AgentToolResult, **fields: Any) -> AgentTool:
    def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return result

    return AgentTool(
        name="fetch", parameters={"type": "object"}, execute=execute, description="", **fields
    )


async def run(faux: FauxProvider, tool: AgentTool) -> tuple[Agent, list[Any], list[str]]:
    sent: list[str] = []

    def answer(context: Any, options: Any, state: Any, model: Any) -> Any:
        for message in context.messages:
            if message.role == "toolResult":
                sent.extend(b.text for b in message.content if b.type == "text")
        return reply("done")

    faux.set_responses(
        [reply([faux_tool_call("fetch", {}, id="c1")], stop_reason="toolUse"), answer]
    )
    agent = Agent(model=faux.get_model(), tools=[tool])
    events: list[Any] = []
    agent.subscribe(events.append)
    await agent.prompt("go")
    return agent, events, sent


async def test_a_huge_result_reaches_the_model_capped_and_stays_whole_in_details(
    faux: FauxProvider,
) -> None:
    original = AgentToolResult(
        content=[TextContent(text=BIG), ImageContent(data=PNG, mime_type="image/png")],
        details={"source": "web"},
    )
    agent, events, sent = await run(faux, returning(original))
    cut = len(BIG) - DEFAULT_TOOL_RESULT_CHARS
    assert sent == [BIG[:DEFAULT_TOOL_RESULT_CHARS] + "\n" + CUT_NOTE.format(n=cut)]
    assert sent[0].endswith("[… 220000 characters cut; the whole value is in the tool's details]")
    [stored] = [m for m in agent.state.messages if m.role == "toolResult"]
    assert stored.content[0].text == sent[0]
    assert stored.content[1].type == "image"  # images are never dropped
    assert stored.details == {"source": "web", FULL_TEXT: BIG}
    [end] = [e for e in events if e.type == "tool_execution_end"]
    assert end.result.content[0].text == sent[0]


async def test_a_result_that_fits_is_the_tools_own(faux: FauxProvider) -> None:
    original = AgentToolResult(content=[TextContent(text="x" * 1000)], details=[1, 2])
    agent, events, sent = await run(faux, returning(original))
    assert sent == ["x" * 1000]
    [end] = [e for e in events if e.type == "tool_execution_end"]
    assert end.result is original  # the very object: Pi's events, untouched
    [stored] = [m for m in agent.state.messages if m.role == "toolResult"]
    assert stored.details == [1, 2]


async def test_the_limit_is_a_setting_and_a_tool_parameter(
    faux: FauxProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_NOTEBOOK_TOOL_RESULT_CHARS", "5000")
    text = AgentToolResult(content=[TextContent(text="ab" * 3000)], details="raw")
    agent, _, sent = await run(faux, returning(text))
    assert sent == ["ab" * 2500 + "\n" + CUT_NOTE.format(n=1000)]
    [stored] = [m for m in agent.state.messages if m.role == "toolResult"]
    assert stored.details == {"details": "raw", FULL_TEXT: "ab" * 3000}
    faux.set_responses([])
    _, _, sent = await run(faux, returning(text, max_result_chars=100))
    assert sent == ["ab" * 50 + "\n" + CUT_NOTE.format(n=5900)]
