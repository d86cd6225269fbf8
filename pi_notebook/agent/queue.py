"""The Agent's steering and follow-up queues.

A drained message stays "in flight" until the loop delivers it (its ``message_start``); when a
run ends, in-flight messages that were never delivered go back to the front of their queue,
so an abort never loses what the user typed.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from ..ai import AgentMessage

QueueMode: TypeAlias = Literal["all", "one-at-a-time"]


class MessageQueue:
    def __init__(self, mode: QueueMode = "one-at-a-time") -> None:
        self.mode: QueueMode = mode
        self._queued: list[AgentMessage] = []
        self._in_flight: list[AgentMessage] = []

    def __len__(self) -> int:
        return len(self._queued)

    def enqueue(self, message: AgentMessage) -> None:
        self._queued.append(message)

    def peek(self) -> list[AgentMessage]:
        return list(self._queued)

    def drain(self) -> list[AgentMessage]:
        if not self._queued:
            return []
        if self.mode == "all":
            taken, self._queued = self._queued, []
        else:
            taken = [self._queued.pop(0)]
        self._in_flight.extend(taken)
        return taken

    def delivered(self, message: object) -> None:
        """The loop emitted ``message_start`` for ``message``."""
        for i, pending in enumerate(self._in_flight):
            if pending is message:
                del self._in_flight[i]
                return

    def restore_undelivered(self) -> None:
        """At the end of a run: put drained-but-undelivered messages back at the front."""
        if self._in_flight:
            self._queued[:0] = self._in_flight
            self._in_flight = []

    def clear(self) -> None:
        self._queued = []
        self._in_flight = []
