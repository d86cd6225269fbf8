"""Step mode's part of the panel state, set by the widget rather than by events: the hold
(``step``: the point held at, its words, the count; the run's clock stops while held and the
status line says so) and the context box (``context``: what the model is, or was, sent).

Any op may cut a frame, so a new hold is published last (after its count and words) and a
release first: a frame never shows a hold with another hold's count or words. This module must
stay pure.
"""

from __future__ import annotations

from typing import Any

from .contract import PanelData
from .ops import OpSink, copy_value
from .status_line import RunClock, StatusLine
from .timeline import RunTimeline


class StepBar:
    """The ``step`` and ``context`` parts of ``data`` and the ops that change them."""

    __slots__ = ("clock", "data", "sink", "status", "timeline")

    def __init__(
        self,
        data: PanelData,
        sink: OpSink,
        clock: RunClock,
        status: StatusLine,
        timeline: RunTimeline,
    ) -> None:
        self.data = data
        self.sink = sink
        self.clock = clock
        self.status = status
        self.timeline = timeline

    def hold(self, point: str | None, words: tuple[str, str] | None = None) -> None:
        """A hold starts at ``point`` (with what is held and what comes next in words) or ends
        (``None``); the time held is kept apart from the nodes' durations."""
        self.clock.hold(point is not None)
        what, following = words if words is not None else (None, None)
        step = self.data["step"]
        self.timeline.hold(what or point)
        if point is None:
            self.status.set("held_ms", round(self.clock.held(), 1))
        self.status.set("held", what or point)
        if point is None:
            step["held"] = None
            self.sink.set(["step", "held"], None)
        else:
            step["count"] += 1
            self.sink.set(["step", "count"], step["count"])
        step["what"], step["next"] = what, following
        self.sink.set(["step", "what"], what)
        self.sink.set(["step", "next"], following)
        if point is not None:
            step["held"] = point
            self.sink.set(["step", "held"], point)

    def enable(self, enabled: bool) -> None:
        self.data["step"]["enabled"] = enabled
        self.sink.set(["step", "enabled"], enabled)

    def set_context(self, context: dict[str, Any] | None) -> None:
        """What the model is (about to be) sent: the latest request's readable view."""
        self.data["context"] = context
        self.sink.set(["context"], copy_value(context))

    def set_context_held(self, held: bool) -> None:
        context = self.data["context"]
        if context is not None and context["held"] != held:
            context["held"] = held
            self.sink.set(["context", "held"], held)

    def set_context_json(self, text: str) -> None:
        context = self.data["context"]
        if context is not None:
            context["json"] = text
            self.sink.set(["context", "json"], text)


__all__ = ["StepBar"]
