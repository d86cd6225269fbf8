"""How long each tool call of a run ran, as a recording keeps it (``durationMs`` of a ``tool``
line) so that a replay, which runs no tool, can show it.

A call's execution begins after its ``tool_execution_start``: at once when its batch runs one
call at a time (the Agent's ``tool_execution`` is ``sequential``, or a tool of the batch is),
else once every call of the batch is prepared (Pi prepares them all in source order, then runs
the batch). :class:`ToolClock` follows the run's events as a listener and times each call from
that moment to its ``tool_execution_end``, on a monotonic clock. It sees the events after the
panel's listener, so a step-mode hold at a call's end (in a recorded run held by hand) counts
as the call's time. Pure: no I/O.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..agent import AgentEvent, MessageEndEvent, ToolExecutionStartEvent
from ..ai import AssistantMessage, ToolCall


class ToolClock:
    """Times the tool calls of ``agent``'s run (see the module docstring)."""

    __slots__ = ("_batch", "_began", "_now", "_sequential", "_started", "agent")

    def __init__(self, agent: Any, now: Callable[[], float] = time.monotonic) -> None:
        self.agent = agent
        self._now = now
        self._batch: list[str] = []
        self._sequential = False
        self._started: dict[str, float] = {}
        self._began: dict[str, float] = {}

    def __call__(self, event: AgentEvent) -> None:
        match event:
            case MessageEndEvent(message=AssistantMessage() as message):
                calls = [b for b in message.content if isinstance(b, ToolCall)]
                modes = {tool.name: tool.execution_mode for tool in self.agent.state.tools}
                self._batch = [call.id for call in calls]
                self._sequential = self.agent.tool_execution == "sequential" or any(
                    modes.get(call.name) == "sequential" for call in calls
                )
            case ToolExecutionStartEvent():
                now = self._now()
                call_id = event.tool_call_id
                self._started[call_id] = now
                if self._sequential or call_id not in self._batch:
                    self._began[call_id] = now
                elif all(call in self._started for call in self._batch):
                    for call in self._batch:
                        self._began.setdefault(call, now)
            case _:
                pass

    def duration_ms(self, tool_call_id: str) -> float | None:
        """Milliseconds the call ran, at its end (None for a call never announced)."""
        started = self._started.pop(tool_call_id, None)
        began = self._began.pop(tool_call_id, started)
        if began is None:
            return None
        return round((self._now() - began) * 1000, 1)


__all__ = ["ToolClock"]
