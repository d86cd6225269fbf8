"""What the magic keeps of a run for ``%agent events`` and ``%agent status``: bounded by the text.

A :class:`RunLog` is an agent listener. It keeps the run's counts (events, message updates),
its lifecycle events (agent / turn / message / tool starts and ends: a few per message, held by
reference, never copied) and, of the per-token ``message_update`` events, one record per run of
consecutive deltas of one block, with the deltas joined (grown in place, so a 1M-token reply
costs its text once, not two objects per token). :meth:`RunLog.records` turns that into the
dicts ``%agent events`` returns, redacted, dumping each message once (``to_json_dict``), at the
moment they are asked for.

It must never keep an event per token, copy a message while the run streams, or call
``model_dump()`` on an event (events are read by attribute).
"""

from __future__ import annotations

from typing import Any

from ..agent import (
    AgentEndEvent,
    AgentEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
)
from ..ai import redact_data

_DELTAS = frozenset(("text_delta", "thinking_delta", "toolcall_delta"))
_ENDS = {"text_end": "text_delta", "thinking_end": "thinking_delta"}


class _Deltas:
    """Consecutive deltas of one block: their kind, block index, count and joined text."""

    __slots__ = ("count", "index", "kind", "text")

    def __init__(self, kind: str, index: int, delta: str) -> None:
        self.kind = kind
        self.index = index
        self.count = 1
        self.text = {0: delta}  # the only reference to the string: it grows in place


class _ToolUpdates:
    """Consecutive progress updates of one tool call."""

    __slots__ = ("count", "event")

    def __init__(self, event: ToolExecutionUpdateEvent) -> None:
        self.event = event
        self.count = 1


class RunLog:
    """A listener for one run; then read :attr:`events`, :attr:`updates` and :meth:`records`."""

    def __init__(self) -> None:
        self.events = 0
        """Every event the run emitted."""
        self.updates = 0
        """Of them, ``message_update`` events (one per streamed chunk)."""
        self._entries: list[Any] = []
        self._deltas: _Deltas | None = None
        self._tool_updates: _ToolUpdates | None = None

    def __call__(self, event: AgentEvent, signal: Any = None) -> None:
        self.events += 1
        match event:
            case MessageUpdateEvent():  # first: the per-token case
                self.updates += 1
                entry = self._update(event)
                if entry is None:
                    return
            case ToolExecutionUpdateEvent():
                updates = self._tool_updates
                if updates is not None and updates.event.tool_call_id == event.tool_call_id:
                    updates.count += 1
                    updates.event = event
                    return
                self._tool_updates = _ToolUpdates(event)
                self._deltas = None
                self._entries.append(self._tool_updates)
                return
            case _:
                entry = event
        self._deltas = None
        self._tool_updates = None
        self._entries.append(entry)

    def _update(self, event: MessageUpdateEvent) -> Any:
        """A streamed chunk: joined into the current run of deltas (None), or the entry to
        keep for it."""
        sub = event.assistant_message_event
        sub_kind = sub.type  # the stream event's kind is data here: it names the record
        if sub_kind in _DELTAS:
            deltas = self._deltas
            index = sub.content_index  # type: ignore[union-attr]
            if deltas is not None and deltas.kind == sub_kind and deltas.index == index:
                text = deltas.text.pop(0)
                text += sub.delta  # type: ignore[union-attr]
                deltas.text[0] = text
                deltas.count += 1
                return None
            self._deltas = _Deltas(sub_kind, index, sub.delta)  # type: ignore[union-attr]
            self._tool_updates = None
            self._entries.append(self._deltas)
            return None
        deltas = self._deltas
        index = getattr(sub, "content_index", None)
        content = getattr(sub, "content", None)
        if (
            sub_kind in _ENDS
            and deltas is not None
            and deltas.index == index
            and deltas.kind == _ENDS[sub_kind]
            and deltas.text[0] == content
        ):
            deltas.text[0] = content  # the message's own string: no second copy kept
        return ("message_update", sub_kind, index)

    def records(self) -> list[dict[str, Any]]:
        """The run as dicts (in order), redacted; each message dumped once, at its end."""
        return [redact_data(_record(entry)) for entry in self._entries]


def _record(entry: Any) -> dict[str, Any]:
    if isinstance(entry, _Deltas):
        return {
            "type": "message_update",
            "update": entry.kind,
            "content_index": entry.index,
            "deltas": entry.count,
            "delta": entry.text[0],
        }
    if isinstance(entry, tuple):
        kind, sub_kind, index = entry
        return {"type": kind, "update": sub_kind, "content_index": index}
    if isinstance(entry, _ToolUpdates):
        event = entry.event
        return {
            "type": "tool_execution_update",
            "tool_call_id": event.tool_call_id,
            "tool_name": event.tool_name,
            "updates": entry.count,
        }
    record: dict[str, Any] = {"type": entry.type}
    match entry:
        case MessageStartEvent() | MessageEndEvent():
            record["role"] = getattr(entry.message, "role", None)
            if isinstance(entry, MessageEndEvent):
                record["message"] = _dump(entry.message)
        case ToolExecutionStartEvent():
            record["tool_call_id"] = entry.tool_call_id
            record["tool_name"] = entry.tool_name
            record["args"] = entry.args
        case ToolExecutionEndEvent():
            record["tool_call_id"] = entry.tool_call_id
            record["tool_name"] = entry.tool_name
            record["is_error"] = bool(entry.is_error)
        case TurnEndEvent():
            record["tool_results"] = len(entry.tool_results or [])
        case AgentEndEvent():
            record["messages"] = len(entry.messages or [])
        case _:
            pass
    return record


def _dump(message: Any) -> Any:
    dump = getattr(message, "to_json_dict", None)
    return dump() if callable(dump) else repr(message)


__all__ = ["RunLog"]
