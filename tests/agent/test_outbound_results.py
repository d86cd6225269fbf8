"""Tool results leave the batch redacted and with clean text: before a listener or the model
sees them, whatever tool made them (issue 14, items 4 and 5)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import (
    FauxProvider,
    TextContent,
    faux_assistant_message,
    faux_tool_call,
)

GITHUB = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"


def _tool(name: str, execute: Any) -> AgentTool:
    return AgentTool(name=name, parameters={"type": "object"}, execute=execute)


async def _run(faux: FauxProvider, tool: AgentTool) -> tuple[Agent, list[Any], list[str]]:
    seen_by_model: list[str] = []

    def answer(context: Any, options: Any, state: Any, model: Any) -> Any:
        for message in context.messages:
            if message.role == "toolResult":
                seen_by_model.extend(b.text for b in message.content if b.type == "text")
        return faux_assistant_message("done")

    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call(tool.name, {}, id="c1")], stop_reason="toolUse"),
            answer,
        ]
    )
    agent = Agent(model=faux.get_model(), tools=[tool])
    events: list[Any] = []
    agent.subscribe(events.append)
    await agent.prompt("go")
    return agent, events, seen_by_model


async def test_environment_dump_reaches_model_and_listeners_redacted(
    faux: FauxProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB)
    monkeypatch.setenv("DATABASE_PASSWORD", "s3cret-db-pw")

    def dump_env(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        progress = f"so far {os.environ['GITHUB_TOKEN']}"
        on_update(AgentToolResult(content=[TextContent(text=progress)]))
        text = json.dumps(dict(os.environ)) + f" aws {AWS_ID}"
        return AgentToolResult(content=[TextContent(text=text)])

    agent, events, seen = await _run(faux, _tool("dump_env", dump_env))
    assert seen, "the model got the tool result"
    for text in seen:
        assert GITHUB not in text and "s3cret-db-pw" not in text and AWS_ID not in text
        assert '"GITHUB_TOKEN": "[redacted: GITHUB_TOKEN]"' in text
        assert '"DATABASE_PASSWORD": "[redacted: DATABASE_PASSWORD]"' in text
        assert "aws [redacted: AWS access key id]" in text
    [update] = [e for e in events if e.type == "tool_execution_update"]
    assert update.partial_result.content[0].text == "so far [redacted: GITHUB_TOKEN]"
    [end] = [e for e in events if e.type == "tool_execution_end"]
    assert GITHUB not in end.result.content[0].text
    stored = [m for m in agent.state.messages if m.role == "toolResult"]
    assert GITHUB not in stored[0].content[0].text


async def test_an_error_result_is_redacted_too(
    faux: FauxProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_" + "q" * 30)

    def fail(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        raise RuntimeError(f"could not log in with {os.environ['HF_TOKEN']}")

    agent, _, seen = await _run(faux, _tool("fail", fail))
    assert seen == ["could not log in with [redacted: HF_TOKEN]"]
    assert agent.state.messages[2].is_error


async def test_lone_surrogates_in_a_tool_result_become_replacement_characters(
    faux: FauxProvider,
) -> None:
    def listing(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        result = AgentToolResult(content=[TextContent(text="ok")])
        # As os.listdir gives a non-UTF-8 name, set after validation (as a tool may do).
        result.content[0].text = "caf\udce9.txt"
        return result

    agent, _, seen = await _run(faux, _tool("ls", listing))
    assert seen == ["caf\ufffd.txt"]
    text = agent.state.messages[2].content[0].text
    text.encode("utf-8")  # would raise UnicodeEncodeError with the surrogate left in


async def test_an_unchanged_result_is_not_copied(faux: FauxProvider) -> None:
    returned = AgentToolResult(content=[TextContent(text="plain text, nothing secret")])

    def plain(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return returned

    _, events, _ = await _run(faux, _tool("plain", plain))
    [end] = [e for e in events if e.type == "tool_execution_end"]
    assert end.result is returned
