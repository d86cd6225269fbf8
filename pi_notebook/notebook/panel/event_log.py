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

    __slots__ = ("_clock", "_updates", "counts", "events")

    def __init__(self, clock: RunClock) -> None:
        self._clock = clock
        self.events: list[dict[str, Any]] = []
        self.counts: dict[str, int] = {}
        self._updates: dict[str, Any] | None = None  # this message's counting record

    def record(self, event: AgentEvent) -> None:
        """An event other than a message update (it starts the run's clock)."""
        kind = event.type
        self.counts[kind] = self.counts.get(kind, 0) + 1
        self._clock.start()
        self.events.append({"type": kind, "t": self._clock.now(), **_event_info(event)})

    def update(self, kind: str) -> None:
        """A message update whose streamed event is ``kind`` (``text_delta``...)."""
        counts = self.counts
        counts["message_update"] = counts.get("message_update", 0) + 1
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
