"""Record the run that notebooks/02_loop_lifecycle.ipynb replays.

Run ``python scripts/record_lesson_run.py``.

One run on a scripted (faux) model, recorded with ``pi_notebook.ai.replay.record`` plus the
tool lines of ``pi_notebook.notebook.record_tools``, so the replay can show what a model call
alone cannot: which parallel tool finished first, and a ``terminate``. The run:

- turn 1: the model reads three weather stations in parallel; ``north`` is slow, ``south``
  fast, ``east`` in between, so they finish south, east, north (out of call order); while they
  run, the user steers ("Give the temperatures in Fahrenheit too.");
- turn 2: the steering message enters at the turn boundary, before the request; the model calls
  ``record_answer``, whose result asks to terminate, so the run ends with no third request.

The tools finish in that order through events, not sleeps, so the recording is the same every
time (up to timestamps and durations). Each station also takes a little time of its own
(``WORK``) after the one it waits for, so the recording's tool lines carry durations a replay
can show (south about 0.15 s, east 0.35 s, north 0.6 s), as a real slow station would.
This script must never need a key or a network.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from pi_notebook.agent import Agent, AgentTool, AgentToolResult
from pi_notebook.ai import (
    TextContent,
    faux_assistant_message,
    faux_text,
    faux_tool_call,
    register_faux_provider,
)
from pi_notebook.ai.replay import forget, record
from pi_notebook.notebook import record_tools

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "notebooks" / "02_loop_lifecycle.run.jsonl"
READINGS = {"north": 11.5, "south": 19.0, "east": 14.0}
WORK = {"south": 0.15, "east": 0.2, "north": 0.25}
"""Seconds each station works after the station it waits for finished."""
STEER = "Give the temperatures in Fahrenheit too."
SYSTEM = "You are a weather assistant. Use the tools; keep answers short."


async def main(target: Path) -> None:
    done = {name: asyncio.Event() for name in READINGS}
    after = {"south": None, "east": "south", "north": "east"}  # who each one waits for
    agent: Agent

    async def read_station(tool_call_id: str, params: dict[str, str], signal, on_update):  # type: ignore[no-untyped-def]
        name = params["station"]
        on_update(AgentToolResult(content=[TextContent(text=f"contacting {name}...")]))
        previous = after[name]
        if previous is not None:
            await done[previous].wait()
        await asyncio.sleep(WORK[name])
        if name == "south":  # the user types while the tools run
            agent.steer(STEER)
        done[name].set()
        return AgentToolResult(content=[TextContent(text=f"{name}: {READINGS[name]} °C")])

    async def record_answer(tool_call_id: str, params: dict[str, str], signal, on_update):  # type: ignore[no-untyped-def]
        return AgentToolResult(
            content=[TextContent(text=f"recorded: {params['answer']}")], terminate=True
        )

    station = AgentTool(
        name="read_station",
        description="Read the current temperature (°C) of a weather station.",
        parameters={
            "type": "object",
            "properties": {"station": {"type": "string", "enum": sorted(READINGS)}},
            "required": ["station"],
        },
        execute=read_station,
    )
    answer = AgentTool(
        name="record_answer",
        description="Record the final answer; the run ends after it.",
        parameters={
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
        },
        execute=record_answer,
    )
    faux = register_faux_provider(token_size=(2, 2))
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_text("I will read the three stations at once."),
                    *(
                        faux_tool_call("read_station", {"station": name}, id=f"read_{name}")
                        for name in ("north", "south", "east")
                    ),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message(
                [
                    faux_tool_call(
                        "record_answer",
                        {"answer": "Warmest: south, 19.0 °C (66.2 °F)."},
                        id="record_1",
                    )
                ],
                stop_reason="toolUse",
            ),
        ]
    )
    model = record(faux.get_model(), target)
    agent = Agent(model=model, tools=[station, answer], system_prompt=SYSTEM)
    recorder = record_tools(agent)
    assert recorder is not None
    agent.subscribe(recorder)
    await agent.prompt("Which station is the warmest right now?")
    forget(model)
    faux.unregister()
    print(f"recorded {target.relative_to(ROOT)}: {len(target.read_text().splitlines())} lines")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else TARGET))
