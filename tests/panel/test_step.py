"""Step mode: the awaited sink holds the agent's loop at each event until "next"."""

from __future__ import annotations

import asyncio

from pi_notebook.agent import Agent
from pi_notebook.agent.events import AGENT_EVENT_TYPES
from pi_notebook.ai import faux_assistant_message

from .helpers import CapturePanel, faux


def expanded(events: list[dict[str, object]]) -> list[object]:
    """Event types, one per event (a message's updates share one counting record)."""
    return [e["type"] for e in events for _ in range(int(str(e.get("count", 1))))]


def held(type_: str | None = None):  # type: ignore[no-untyped-def]
    def predicate(panel: CapturePanel) -> bool:
        return panel.step_held is not None and (type_ is None or panel.step_held == type_)

    return predicate


async def test_the_loop_waits_exactly_at_the_held_event() -> None:
    provider = faux([faux_assistant_message("Hello.")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel(step=True)
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    task = asyncio.ensure_future(agent.prompt("Hi"))
    seen: list[str] = []
    while not task.done():
        waiter = asyncio.ensure_future(panel.wait_for(held()))
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED, timeout=10)
        if task.done():
            waiter.cancel()
            break
        kind = panel.step_held
        assert kind is not None
        seen.append(kind)
        # Parked: the transcript and the panel's events stop exactly at this event.
        before = (len(agent.state.messages), sum(panel.counts.values()))
        for _ in range(20):
            await asyncio.sleep(0)  # let every other ready callback run
        assert (len(agent.state.messages), sum(panel.counts.values())) == before
        assert panel.events[-1]["type"] == kind
        assert panel.snapshot["step"]["held"] == kind
        panel._on_custom_msg(panel, {"type": "next"}, [])
        await panel.wait_for(lambda p, k=kind: p.step_held != k or task.done())
    await task
    assert seen == expanded(panel.events)
    assert seen[0] == "agent_start" and seen[-1] == "agent_end"
    assert panel.snapshot["step"]["count"] == len(seen)


async def test_abort_while_held_releases_the_gate_and_ends_aborted() -> None:
    provider = faux([faux_assistant_message("never finished " * 20)], tps=1000)
    agent = Agent(model=provider.get_model())
    panel = CapturePanel(step=True, step_events=("message_update",))
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    task = asyncio.ensure_future(agent.prompt("Hi"))
    await panel.wait_for(held("message_update"))
    panel.handle_message({"type": "abort"})
    await asyncio.wait_for(task, 5)
    panel.finish()
    assert panel.snapshot["status"]["state"] == "aborted"
    assert agent.state.messages[-1].stop_reason == "aborted"  # type: ignore[union-attr]


async def test_run_to_end_stops_holding() -> None:
    provider = faux([faux_assistant_message("a b c d")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel(step=True)
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    task = asyncio.ensure_future(agent.prompt("Hi"))
    await panel.wait_for(held("agent_start"))
    panel.handle_message({"type": "run_to_end"})
    await asyncio.wait_for(task, 5)
    assert [e["type"] for e in panel.events][-1] == "agent_end"
    assert panel.snapshot["step"]["count"] == 1
    assert set(AGENT_EVENT_TYPES) >= {e["type"] for e in panel.events}
