"""The run's events as data (``AgentPanel.events``): a record per event, with its time.

A message's updates (one per streamed token) share one counting record with their ``count``
and ``kinds``, so the log grows per event, not per token. This module must stay pure.
"""

from __future__ import annotations

from typing import Any

from ...agent import (
    AgentEndEvent,
    AgentEvent,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
)
from .status_line import RunClock


class EventLog:
    """Records and counts of a run's events (see the module docstring)."""

    __slots__ = ("_clock", "_counts", "_updates", "events")

    def __init__(self, clock: RunClock) -> None:
        self._clock = clock
        self.events: list[dict[str, Any]] = []
        self._counts: dict[str, int] = {}  # of the events other than updates
        self._updates: dict[str, Any] | None = None  # this message's counting record

    @property
    def counts(self) -> dict[str, int]:
        """How many events of each type the run had (the updates summed from their records,
        so a token costs one count, not two)."""
        counts = dict(self._counts)
        updates = sum(e["count"] for e in self.events if e["type"] == "message_update")
        if updates:
            counts["message_update"] = updates
        return counts

    def record(self, event: AgentEvent) -> None:
        """An event other than a message update (it starts the run's clock)."""
        kind = event.type
        self._counts[kind] = self._counts.get(kind, 0) + 1
        self._clock.start()
        self.events.append({"type": kind, "t": self._clock.now(), **_event_info(event)})

    def update(self, kind: str) -> None:
        """A message update whose streamed event is ``kind`` (``text_delta``...)."""
        record = self._updates
        if record is None:
            self._clock.start()
            record = {"type": "message_update", "t": self._clock.now(), "count": 0, "kinds": {}}
            self.events.append(record)
            self._updates = record
        record["count"] += 1
        kinds = record["kinds"]
        kinds[kind] = kinds.get(kind, 0) + 1

    def message_started(self) -> None:
        self._updates = None

    def message_ended(self) -> int:
        """How many updates the message that ends had."""
        count = self._updates["count"] if self._updates is not None else 0
        self._updates = None
        return int(count)


def _event_info(event: AgentEvent) -> dict[str, Any]:
    match event:
        case MessageStartEvent() | MessageEndEvent() | TurnEndEvent():
            return {"role": getattr(event.message, "role", None)}
        case ToolExecutionStartEvent() | ToolExecutionUpdateEvent():
            return {"tool_call_id": event.tool_call_id, "tool_name": event.tool_name}
        case ToolExecutionEndEvent():
            return {
                "tool_call_id": event.tool_call_id,
                "tool_name": event.tool_name,
                "is_error": bool(event.is_error),
            }
        case AgentEndEvent():
            return {"messages": len(event.messages or [])}
        case _:
            return {}


__all__ = ["EventLog"]
