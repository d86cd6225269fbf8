"""Tools with the same name: the first one in the context's list is the one used (as in Pi)."""

from __future__ import annotations

from typing import Any

from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import FauxProvider, TextContent, faux_assistant_message

from .conftest import tool_turn


def named_tool(name: str, reply: str, mode: Any) -> AgentTool:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(content=[TextContent(text=reply)])

    return AgentTool(name=name, parameters={"type": "object"}, execute=execute, execution_mode=mode)


async def test_the_first_tool_of_a_name_decides_both_the_code_and_the_execution_mode(
    faux: FauxProvider,
) -> None:
    # The first "dup" runs, so its "sequential" mode must decide the batch (the last one's
    # "parallel" used to: the batch ran in parallel with the first tool's code).
    tools = [named_tool("dup", "first", "sequential"), named_tool("dup", "second", "parallel")]
    faux.set_responses([tool_turn(("dup", {}), ("dup", {})), faux_assistant_message("done")])
    agent = Agent(model=faux.get_model(), tools=tools)
    kinds: list[str] = []

    def record(event: Any) -> None:
        if event.type.startswith("tool_execution"):
            kinds.append(event.type)

    agent.subscribe(record)
    await agent.prompt("go")
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    assert [m.content[0].text for m in results] == ["first", "first"]
    assert kinds == ["tool_execution_start", "tool_execution_end"] * 2  # one call at a time
