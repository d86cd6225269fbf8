"""The lab MCP server (tests/mcp/lab_server.py) through a real Agent and a faux model, over stdio
and streamable HTTP: arguments, results, progress, errors and aborts."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_notebook.agent import Agent, AgentTool
from pi_notebook.ai import FauxProvider, ImageContent, faux_assistant_message
from pi_notebook.tools import mcp_tools
from pi_notebook.tools.mcp import McpServer

from ..tools.conftest import tool_turn
from .conftest import by_name, run_agent, text_of


async def test_the_server_schema_is_the_tool_parameters(lab: list[AgentTool]) -> None:
    add = by_name(lab)["lab__add"]
    schema = add.json_schema()
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"a", "b"}
    assert schema["properties"]["a"]["type"] == "integer"
    assert sorted(schema["required"]) == ["a", "b"]
    assert add.description == "Add two integers (a structured result)."


async def test_text_result_and_structured_content_as_details(
    faux: FauxProvider, lab: list[AgentTool]
) -> None:
    [result] = await run_agent(faux, lab, [("lab__add", {"a": 2, "b": 3})])
    assert not result.is_error
    assert text_of(result) == "5"
    assert result.details == {"result": 5}


async def test_arguments_are_coerced_by_the_schema_before_the_call(
    faux: FauxProvider, lab: list[AgentTool]
) -> None:
    [result] = await run_agent(faux, lab, [("lab__add", {"a": "40", "b": 2})])
    assert not result.is_error, text_of(result)
    assert text_of(result) == "42"


async def test_invalid_arguments_fail_without_calling_the_server(
    faux: FauxProvider, lab: list[AgentTool]
) -> None:
    [server] = _servers_of(lab)
    before = server.calls
    [result] = await run_agent(faux, lab, [("lab__add", {"a": "many"})])
    assert result.is_error
    assert text_of(result).startswith('Validation failed for tool "lab__add"')
    assert "a: must be integer" in text_of(result)
    assert server.calls == before


async def test_image_and_embedded_resource_content(
    faux: FauxProvider, lab: list[AgentTool]
) -> None:
    picture, document = await run_agent(
        faux, lab, [("lab__picture", {}), ("lab__document", {})]
    )
    [image] = picture.content
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    assert image.data.startswith("iVBORw0KGgo")
    assert text_of(document) == "[resource memo://one]\nhello memo"


async def test_is_error_becomes_an_error_result(faux: FauxProvider, lab: list[AgentTool]) -> None:
    [result] = await run_agent(faux, lab, [("lab__fail", {"message": "the disk is full"})])
    assert result.is_error
    assert "the disk is full" in text_of(result)


async def test_progress_notifications_are_tool_execution_updates(
    faux: FauxProvider, lab: list[AgentTool]
) -> None:
    events: list[Any] = []
    faux.set_responses([tool_turn(("lab__count", {"steps": 3})), faux_assistant_message("done")])
    agent = Agent(model=faux.get_model(), tools=lab)
    agent.subscribe(events.append)
    await agent.prompt("count")
    updates = [e for e in events if e.type == "tool_execution_update"]
    assert [u.partial_result.content[0].text for u in updates] == [
        "step 1 (1/3)",
        "step 2 (2/3)",
        "step 3 (3/3)",
    ]
    assert updates[-1].partial_result.details == {"progress": 3, "total": 3, "message": "step 3"}
    end = next(e for e in events if e.type == "tool_execution_end")
    assert end.result.content[0].text == "counted to 3"


async def test_parallel_calls_share_one_connection(
    faux: FauxProvider, lab: list[AgentTool]
) -> None:
    results = await run_agent(
        faux, lab, [("lab__echo", {"text": "one"}), ("lab__echo", {"text": "two"})]
    )
    assert [text_of(r) for r in results] == ["one", "two"]
    [server] = _servers_of(lab)
    assert server.state == "connected"


async def test_abort_cancels_the_request_on_the_server(
    faux: FauxProvider, lab: list[AgentTool]
) -> None:
    faux.set_responses([tool_turn(("lab__slow", {"seconds": 600})), faux_assistant_message("-")])
    agent = Agent(model=faux.get_model(), tools=lab)
    events: list[Any] = []

    def on_event(event: Any) -> None:
        events.append(event)
        if event.type == "tool_execution_update":  # the server is running the call
            agent.abort()

    agent.subscribe(on_event)
    await asyncio.wait_for(agent.prompt("sleep"), 30)
    [end] = [e for e in events if e.type == "tool_execution_end"]
    assert end.is_error
    assert end.result.content[0].text == (
        "aborted: the call of 'slow' on MCP server 'lab' was cancelled"
    )
    assert events[-1].type == "agent_end"
    # The server saw the cancellation: its handler was interrupted.
    tools = by_name(lab)
    result = await tools["lab__cancellations"].execute("c", {"wait": 20}, None, lambda _: None)
    assert result.details == {"result": 1}


def _servers_of(tools: list[AgentTool]) -> list[McpServer]:
    found: list[McpServer] = []
    for item in tools:
        server = item.execute.server  # type: ignore[attr-defined]
        if server not in found:
            found.append(server)
    return found


async def test_http_headers_reach_the_server_and_never_show(
    faux: FauxProvider, http_lab_url: str
) -> None:
    tools = mcp_tools(http_lab_url, name="web", headers={"X-Team-Token": "team-secret-123"})
    [result] = await run_agent(faux, tools, [("web__header", {"name": "x-team-token"})])
    assert text_of(result) == "team-secret-123"  # what the server saw
    [server] = _servers_of(tools)
    assert "team-secret-123" not in repr(server) + "\n".join(server.status_lines())
