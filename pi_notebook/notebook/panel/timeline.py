"""The run's time as swimlanes: the ``timeline`` part of the panel state.

The tree says what happened; a class also needs *when*: that a parallel batch's calls overlap,
that nothing runs while a call is only prepared, that a step-mode hold (or a slow listener) is
a barrier the whole loop waits at, that a steer waits in its queue until the turn's tools are
done. :class:`RunTimeline` keeps that picture from the same events the reducer sees (typed
``AgentEvent`` listeners, matched by class) plus what only the widget knows: a request passing
the request tap, a prepared batch starting to run, a hold starting and ending, the queues.

Lanes: ``model`` (each request: waiting for the first token, then streaming), one ``tool`` lane
per call (prepared, then running; its outcome when it failed or never ran), ``listeners``
(step-mode holds: the loop waits for its listeners), and ``steer`` / ``followup`` (a queued
message from entering its queue to leaving it). Turn starts are kept for vertical rules.
Times are the run clock's wall milliseconds (holds included: a hold is time on the picture).

It writes an op per change (a span opening or closing, a lane appearing), never per token, and
stays pure: no I/O, no widgets. :mod:`.timeline_render` draws it (SVG and text rows).
"""

from __future__ import annotations

from typing import Any, assert_never

from ...agent import (
    AgentEndEvent,
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
from .contract import (
    QueueItem,
    Timeline,
    TimelineLane,
    TimelineLaneKind,
    TimelineSpan,
    TimelineSpanKind,
)
from .ops import OpSink, copy_value
from .status_line import RunClock

MODEL_LANE = "model"
LISTENERS_LANE = "listeners"
#: Characters of a queued message's text used as its span's label.
QUEUE_LABEL = 40


def empty_timeline() -> Timeline:
    return {"lanes": [], "spans": [], "turns": []}


class RunTimeline:
    """Keeps ``timeline`` (see the module docstring) and writes its ops to ``sink``."""

    __slots__ = (
        "_hold",
        "_model",
        "_queued",
        "_requests",
        "_tools",
        "clock",
        "data",
        "recorded",
        "sink",
    )

    def __init__(self, data: Timeline, sink: OpSink, clock: RunClock) -> None:
        self.data = data
        self.sink = sink
        self.clock = clock
        self._model: int | None = None  # the open span of the model lane
        self._tools: dict[str, int] = {}  # tool call id -> its open span
        self._hold: int | None = None
        self._queued: dict[tuple[str, str], list[int]] = {}  # (kind, text) -> open spans
        self._requests = 0
        self.recorded: dict[str, float] = {}
        """Tool call id -> milliseconds it ran when recorded (a replay's; its span says so)."""

    # -- lanes and spans -------------------------------------------------------------------

    def _lane(self, lane_id: str, kind: TimelineLaneKind, label: str) -> None:
        lanes = self.data["lanes"]
        for lane in lanes:
            if lane["id"] == lane_id:
                if lane["label"] != label:
                    lane["label"] = label
                    self.sink.set(["timeline", "lanes", lanes.index(lane), "label"], label)
                return
        new: TimelineLane = {"id": lane_id, "kind": kind, "label": label}
        lanes.append(new)
        self.sink.push(["timeline", "lanes"], copy_value(new))

    def _open(self, lane: str, kind: TimelineSpanKind, label: str) -> int:
        spans = self.data["spans"]
        span: TimelineSpan = {
            "lane": lane,
            "kind": kind,
            "label": label,
            "start": self.clock.now(),
            "end": None,
            "outcome": "",
        }
        spans.append(span)
        self.sink.push(["timeline", "spans"], copy_value(span))
        return len(spans) - 1

    def _close(self, index: int | None, outcome: str = "") -> None:
        if index is None:
            return
        span = self.data["spans"][index]
        if span["end"] is not None:
            return
        span["end"] = end = self.clock.now()
        self.sink.set(["timeline", "spans", index, "end"], end)
        if outcome:
            span["outcome"] = outcome
            self.sink.set(["timeline", "spans", index, "outcome"], outcome)

    # -- the events ------------------------------------------------------------------------

    def apply(self, event: AgentEvent) -> None:
        match event:
            case AgentStartEvent():
                self._lane(MODEL_LANE, "model", "model requests")
            case TurnStartEvent():
                self.data["turns"].append(at := self.clock.now())
                self.sink.push(["timeline", "turns"], at)
            case MessageStartEvent():
                if getattr(event.message, "role", None) == "assistant" and self._model is None:
                    self.request()  # no request tap told us: the request went out about now
            case MessageEndEvent():
                if getattr(event.message, "role", None) == "assistant":
                    reason = getattr(event.message, "stop_reason", "")
                    outcome = str(reason) if reason in ("error", "aborted") else ""
                    self._close(self._model, outcome)
                    self._model = None
            case ToolExecutionStartEvent():
                lane_id = f"tool:{event.tool_call_id}"
                lane = lane_of(self.data, lane_id)
                if lane is None:
                    self._lane(lane_id, "tool", event.tool_name)
                label = lane["label"] if lane is not None else event.tool_name
                self._tools[event.tool_call_id] = self._open(lane_id, "prepared", label)
            case ToolExecutionEndEvent():
                index = self._tools.pop(event.tool_call_id, None)
                if index is not None:
                    ran = self.data["spans"][index]["kind"] == "running"
                    outcome = "" if not event.is_error else "error" if ran else "not run"
                    recorded = self.recorded.get(event.tool_call_id)
                    if ran and recorded is not None:  # a replay: the stand-in took no time
                        outcome = ", ".join(
                            filter(None, (outcome, f"ran {recorded / 1000:.2f}s when recorded"))
                        )
                    self._close(index, outcome)
            case AgentEndEvent():
                self._close(self._model)
                self._model = None
                for index in self._tools.values():
                    self._close(index, "not finished")
                self._tools.clear()
                for spans in self._queued.values():
                    for index in spans:
                        self._close(index, "left queued")
                self._queued.clear()
            case MessageUpdateEvent() | ToolExecutionUpdateEvent() | TurnEndEvent():
                pass
            case _:  # pragma: no cover (every event class has its case)
                assert_never(event)

    # -- what the widget and the reducer know beyond the events -----------------------------

    def request(self, turn: int | None = None) -> None:
        """A request went out to the model: it waits for the first token."""
        self._close(self._model)
        self._requests += 1
        which = f"request {self._requests}" + (f" (turn {turn})" if turn else "")
        self._model = self._open(MODEL_LANE, "waiting", which)

    def first_token(self) -> None:
        index = self._model
        if index is None or self.data["spans"][index]["kind"] != "waiting":
            return
        label = self.data["spans"][index]["label"]
        self._close(index)
        self._model = self._open(MODEL_LANE, "streaming", label)

    def label(self, tool_id: str, label: str) -> None:
        """A call's label (it tells same-named calls apart): its lane and spans read it."""
        self._lane(f"tool:{tool_id}", "tool", label)
        index = self._tools.get(tool_id)
        if index is not None and self.data["spans"][index]["label"] != label:
            self.data["spans"][index]["label"] = label
            self.sink.set(["timeline", "spans", index, "label"], label)

    def running(self, tool_id: str) -> None:
        """A prepared call's execution has begun."""
        index = self._tools.get(tool_id)
        if index is None or self.data["spans"][index]["kind"] != "prepared":
            return
        label = self.data["spans"][index]["label"]
        self._close(index)
        self._tools[tool_id] = self._open(f"tool:{tool_id}", "running", label)

    def hold(self, what: str | None) -> None:
        """A step-mode hold starts (``what`` is held) or ends (``None``)."""
        self._close(self._hold)
        self._hold = None
        if what is not None:
            self._lane(LISTENERS_LANE, "listeners", "listeners (holds)")
            self._hold = self._open(LISTENERS_LANE, "held", what)

    def queue(self, items: list[QueueItem]) -> None:
        """The queues as they are now: a new item's span opens, a gone item's span closes."""
        now: dict[tuple[str, str], int] = {}
        for item in items:
            if item["kind"] in ("steer", "followup"):
                key: tuple[str, str] = (item["kind"], item["text"])
                now[key] = now.get(key, 0) + 1
        for key, spans in list(self._queued.items()):
            while len(spans) > now.get(key, 0):
                self._close(spans.pop(0), "delivered or cleared")
            if not spans:
                del self._queued[key]
        for key, count in now.items():
            spans = self._queued.setdefault(key, [])
            kind, text = key
            lane_kind: TimelineLaneKind = "steer" if kind == "steer" else "followup"
            while len(spans) < count:
                title = "steering queue" if kind == "steer" else "follow-up queue"
                self._lane(kind, lane_kind, title)
                spans.append(self._open(kind, "queued", _short(text)))

    def delivered(self, kind: str, text: str) -> None:
        """A queued message entered the conversation."""
        spans = self._queued.get((kind, text))
        if spans:
            self._close(spans.pop(0), "delivered")
            if not spans:
                del self._queued[(kind, text)]


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= QUEUE_LABEL else line[: QUEUE_LABEL - 1] + "…"


def lane_of(data: Timeline, lane_id: str) -> TimelineLane | None:
    return next((lane for lane in data["lanes"] if lane["id"] == lane_id), None)


def spans_of(data: Timeline, lane_id: str) -> list[TimelineSpan]:
    return [span for span in data["spans"] if span["lane"] == lane_id]


def as_timeline(value: Any) -> Timeline:
    """A timeline from a saved state (an older state has none: an empty one)."""
    if isinstance(value, dict) and {"lanes", "spans", "turns"} <= value.keys():
        return value  # type: ignore[return-value]
    return empty_timeline()


__all__ = [
    "LISTENERS_LANE",
    "MODEL_LANE",
    "RunTimeline",
    "as_timeline",
    "empty_timeline",
    "lane_of",
    "spans_of",
]
