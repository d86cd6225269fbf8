"""The main job: a notebook session on the built-in ``demo`` model, then the Agent API.

No API key needed: ``python -m pi_notebook.demo``. Part one runs notebook cells through
IPython exactly as a kernel would (``%load_ext pi_notebook``, an ``%%agent`` cell, line
commands, the reply in ``_agent_reply``) in plain mode; part two drives an ``Agent`` with a
tool on a scripted faux model and prints the lifecycle events and the transcript.
"""

from __future__ import annotations

import asyncio
from typing import Any

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


NOTEBOOK_CELLS = [
    "%load_ext pi_notebook",
    "%%agent --model demo\nHello! What can you do?",
    "%agent status",
    "print(len(_agent_reply) > 0)",
]


def notebook_demo() -> bool:
    """Run ``NOTEBOOK_CELLS`` in an in-process IPython shell; False if a cell failed."""
    import os

    from IPython.core.interactiveshell import InteractiveShell

    os.environ.setdefault("PI_NOTEBOOK_UI", "plain")
    shell: Any = InteractiveShell.instance()  # IPython's API is untyped
    ok = True
    for number, cell in enumerate(NOTEBOOK_CELLS, 1):
        print(f"\nIn [{number}]: " + cell.replace("\n", "\n        "))
        result = shell.run_cell(cell, store_history=True)
        ok = ok and bool(result.success)
    return ok


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
    import sys

    print("== A notebook session on the built-in demo model")
    notebook_ok = notebook_demo()
    print("\n== The Agent API with a tool, on a scripted faux model")
    asyncio.run(main())
    sys.exit(0 if notebook_ok else 1)
