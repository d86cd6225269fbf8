"""The main job for now: a short scripted agent run on the faux model, printed as a transcript.

No API key needed: ``python -m pi_notebook.demo``.
"""

from __future__ import annotations

import asyncio

from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import (
    AssistantMessage,
    TextContent,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
    register_faux_provider,
)


async def add(
    tool_call_id: str, params: dict[str, float], signal: object, on_update: object
) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=str(params["a"] + params["b"]))])


ADD = AgentTool(
    name="add",
    label="Add",
    description="Add two numbers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
    execute=add,
)


async def main() -> None:
    faux = register_faux_provider(token_size=(1, 1))
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_thinking("The user wants a sum; I have an add tool."),
                    faux_text("Let me add those."),
                    faux_tool_call("add", {"a": 19, "b": 23}, id="call_1"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("19 + 23 = 42."),
        ]
    )
    agent = Agent(
        system_prompt="You are a careful calculator.", model=faux.get_model(), tools=[ADD]
    )

    def show(event: object) -> None:
        kind = getattr(event, "type", "")
        if kind in ("agent_start", "turn_start", "turn_end", "agent_end"):
            print(f"  [{kind}]")
        elif kind == "tool_execution_start":
            print(f"  [tool {event.tool_name}({event.args})]")  # type: ignore[attr-defined]

    agent.subscribe(show)
    await agent.prompt("What is 19 + 23?")
    print("\nTranscript:")
    for message in agent.state.messages:
        for block in getattr(message, "content", []):
            kind = block.type
            if kind == "text":
                print(f"{message.role:>10}: {block.text}")
            elif kind == "thinking":
                print(f"{message.role:>10}: (thinking) {block.thinking}")
            elif kind == "toolCall":
                print(f"{message.role:>10}: -> {block.name}({block.arguments})")
    last = agent.state.messages[-1]
    if isinstance(last, AssistantMessage):
        print(f"\nlast reply: {last.usage.input} tokens in, {last.usage.output} out")


if __name__ == "__main__":
    asyncio.run(main())
