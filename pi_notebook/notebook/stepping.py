"""Step mode's granularity and its words: where a step holds, and what a hold means.

``--step`` (granularity ``lifecycle``) holds at the eight lifecycle events; ``--step all`` also
at every streamed ``message_update`` / ``tool_execution_update`` and before each model request;
``--step tools`` only before each tool execution and before each model request. The model
request is not an event of the loop: :data:`MODEL_REQUEST` names that point (the magic holds it
in the request tap, see ``context_view``).

:class:`StepNarrator` follows a run's events and says, in plain words, which point is held and
what the loop does next ("held before the model request of turn 2", "held after tool
`run_python` finished"). It is a pure reducer: it must never hold, wait, print or keep more
than a few counters and names (no message, no event).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from ..agent import (
    AGENT_EVENT_TYPES,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from ..ai import AssistantMessage, ToolCall, ToolResultMessage, redact
from .call_labels import call_labels

Granularity: TypeAlias = Literal["lifecycle", "all", "tools"]
GRANULARITIES: tuple[Granularity, ...] = ("lifecycle", "all", "tools")
DEFAULT_GRANULARITY: Granularity = "lifecycle"

MODEL_REQUEST = "model_request"
"""The hold point just before the loop sends a request to the model (not a loop event)."""

STREAMED_EVENTS = frozenset(("message_update", "tool_execution_update"))
LIFECYCLE_EVENTS = tuple(kind for kind in AGENT_EVENT_TYPES if kind not in STREAMED_EVENTS)
"""The eight events that open or close a part of the run (``--step`` holds at these)."""


def hold_points(granularity: Granularity | str) -> frozenset[str]:
    """The event types (and :data:`MODEL_REQUEST`) a granularity holds at."""
    if granularity == "lifecycle":
        return frozenset(LIFECYCLE_EVENTS)
    if granularity == "all":
        return frozenset((*AGENT_EVENT_TYPES, MODEL_REQUEST))
    if granularity == "tools":
        return frozenset(("tool_execution_start", MODEL_REQUEST))
    raise ValueError(
        f"unknown step granularity {granularity!r}: expected one of {', '.join(GRANULARITIES)}"
    )


def _code(name: str) -> str:
    return f"`{name}`"


def _names(names: list[str]) -> str:
    return ", ".join(_code(n) for n in names)


#: Characters of a held chunk shown in the step bar.
CHUNK_CHARS = 60


def _chunk(delta: str) -> str:
    """A streamed chunk as the step bar quotes it: redacted, one line, cut."""
    text = redact(delta).replace("\n", "⏎")
    if len(text) > CHUNK_CHARS:
        text = text[: CHUNK_CHARS - 1] + "…"
    return f"“{text}”"


class StepNarrator:
    """Plain words for the current hold: ``observe`` every event, then ``describe`` a point."""

    def __init__(self) -> None:
        self.sequential = False
        """The current batch runs one call at a time (the panel sets it from the agent)."""
        self._reset()

    def _reset(self) -> None:
        self.turn = 0
        self._replied = False  # an assistant message of this run has started
        self._calls: list[str] = []  # tool call labels of the current batch, in source order
        self._labels: dict[str, str] = {}  # tool call id -> its label
        self._announced = 0  # calls of the batch whose tool_execution_start came
        self._running: dict[str, str] = {}  # tool call id -> name, started and not ended
        self._results_left = 0  # tool result messages of the batch not yet added
        self._terminate: list[bool] = []  # per ended tool: did it ask to end the run
        self._last_results = 0  # tool results of the last turn

    def observe(self, event: AgentEvent) -> None:
        match event:
            case MessageUpdateEvent() | ToolExecutionUpdateEvent():  # streamed: nothing to note
                pass
            case AgentStartEvent():
                self._reset()
            case TurnStartEvent():
                self.turn += 1
            case MessageEndEvent(message=AssistantMessage() as message):
                calls = [b for b in message.content if isinstance(b, ToolCall)]
                self._labels = call_labels([(c.id, c.name, c.arguments) for c in calls])
                self._calls = [self._labels[c.id] for c in calls]
                self._announced = 0
                self._results_left = len(calls)
                self._terminate = []
            case MessageEndEvent(message=ToolResultMessage()):
                self._results_left = max(0, self._results_left - 1)
            case MessageStartEvent(message=AssistantMessage()):
                self._replied = True
            case ToolExecutionStartEvent():
                self._running[event.tool_call_id] = self._label(event)
                self._announced += 1
            case ToolExecutionEndEvent():
                self._running.pop(event.tool_call_id, None)
                self._terminate.append(bool(getattr(event.result, "terminate", False)))
            case TurnEndEvent():
                self._last_results = len(event.tool_results or [])
            case _:
                pass

    def describe(
        self,
        point: str,
        event: AgentEvent | None = None,
        *,
        queued: int = 0,
        request: Any = None,
    ) -> tuple[str, str]:
        """(what is held, what comes next) for a hold at ``point`` (an event type or
        :data:`MODEL_REQUEST`); ``queued`` is the number of steering / follow-up messages
        waiting, ``request`` the :class:`~.context_view.SentRequest` of a model request."""
        turn = self.turn
        if point == MODEL_REQUEST:
            what = "the request goes to the model"
            if request is not None:
                what = f"the request goes to {request.model}: {request.summary()}"
            return f"held before the model request of turn {turn}", what
        if point == "agent_start":
            return "held at the start of the run", "turn 1 starts"
        if point == "agent_end":
            return "held at the end of the run", "the run is over and the cell finishes"
        if point == "turn_start":
            if turn == 1:
                return "held at the start of turn 1", "the prompt enters the conversation"
            if self._last_results:
                return (
                    f"held at the start of turn {turn}",
                    f"the model request of turn {turn}: the model reads the tool results",
                )
            return f"held at the start of turn {turn}", "the queued message enters the conversation"
        if point == "turn_end":
            return f"held at the end of turn {turn}", self._after_turn(queued)
        if point in ("message_start", "message_end", "message_update"):
            return self._message(point, event)
        name = self._label(event)
        if point == "tool_execution_start":
            return self._before_tool(name)
        if point == "tool_execution_update":
            return f"held at a progress update of tool {_code(name)}", f"{_code(name)} goes on"
        if point == "tool_execution_end":
            failed = bool(getattr(event, "is_error", False))
            held = f"held after tool {_code(name)} {'failed' if failed else 'finished'}"
            others = list(self._running.values())
            if others:
                return held, f"the other tool calls finish ({_names(others)})"
            return held, "the tool results enter the conversation"
        return f"held at {point}", "the run goes on"

    def _label(self, event: AgentEvent | None) -> str:
        call_id = getattr(event, "tool_call_id", None)
        name = str(getattr(event, "tool_name", "") or "tool")
        return self._labels.get(call_id, name) if isinstance(call_id, str) else name

    def _before_tool(self, name: str) -> tuple[str, str]:
        """Held at a call's ``tool_execution_start``: announced, not running. A parallel batch
        prepares every call in source order, then runs them all; a sequential one runs each
        call as soon as it is prepared."""
        count, done = len(self._calls), self._announced
        code = _code(name)
        if count <= 1 or self.sequential:
            return (
                f"held before tool {code} runs (prepared, not running yet)",
                f"{code} is prepared and runs",
            )
        what = f"held before tool {code} runs (call {done} of {count}; prepared, not running yet)"
        if done < count:
            return what, f"{code} is prepared; the batch runs when all {count} are prepared"
        together = _names(self._calls)
        return what, f"{code} is prepared, then all {count} calls run together: {together}"

    def _message(self, point: str, event: AgentEvent | None) -> tuple[str, str]:
        message = getattr(event, "message", None)
        role = getattr(message, "role", "custom")
        turn = self.turn
        if point == "message_update":
            update = getattr(event, "assistant_message_event", None)
            sub = getattr(update, "type", "update")
            delta = getattr(update, "delta", None)
            chunk = f": {_chunk(delta)}" if isinstance(delta, str) and delta else ""
            return (
                f"held at a streamed chunk of the reply of turn {turn} ({sub}){chunk}",
                "the next chunk, or the end of the reply",
            )
        if role == "assistant":
            if point == "message_start":
                return f"held as the model's reply of turn {turn} starts", "the reply streams in"
            reason = getattr(message, "stop_reason", "stop")
            held = f"held after the model's reply of turn {turn} ended (stop reason {reason})"
            if reason in ("error", "aborted"):
                return held, f"turn {turn} ends, and with it the run"
            if self._calls:
                count = len(self._calls)
                calls = "its tool call runs" if count == 1 else f"its {count} tool calls run"
                return held, f"{calls}: {_names(self._calls)}"
            return held, f"turn {turn} ends"
        if role == "toolResult":
            name = _code(str(getattr(message, "tool_name", "tool")))
            if point == "message_start":
                return (
                    f"held as the result of {name} enters the conversation",
                    "it is added to the transcript",
                )
            more = "the next tool result" if self._results_left else f"turn {turn} ends"
            return f"held after the result of {name} was added", more
        who = "the prompt" if role == "user" and not self._replied else "a queued message"
        if role not in ("user", "assistant", "toolResult"):
            who = f"a {role} message"
        if point == "message_start":
            return f"held as {who} enters the conversation", "it is added to the transcript"
        return f"held after {who} was added", f"the model request of turn {turn}"

    def _after_turn(self, queued: int) -> str:
        turn = self.turn
        if self._last_results:
            if self._terminate and all(self._terminate):
                return "the run ends: every tool of the batch asked to terminate"
            extra = " and the queued message" if queued else ""
            return f"turn {turn + 1}: the model reads the tool results{extra}"
        if queued:
            return f"turn {turn + 1} starts with the queued message"
        return "the run ends, unless a steering or follow-up message is queued first"


__all__ = [
    "DEFAULT_GRANULARITY",
    "GRANULARITIES",
    "LIFECYCLE_EVENTS",
    "MODEL_REQUEST",
    "Granularity",
    "StepNarrator",
    "hold_points",
]
