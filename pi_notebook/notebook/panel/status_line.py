"""The panel's status line and clock: run state, tokens (reported or estimated), time.

:class:`RunClock` says how long the run has been going and keeps the time held in step mode
apart (a node's or tool card's duration leaves the holds out, and so does the status line's
elapsed time: the run's own time, which never runs backwards and stands still while held).
:class:`StatusLine` owns the ``status`` part of the state: each write is typed by its key (so
mypy checks what the reducer puts there) and becomes an op only when the value changed. While a
reply streams, its token counts are the provider's when it reported them, else Pi's estimate (4
characters a token), updated once per frame (:meth:`StatusLine.render_estimate`), not per token.
This module must stay pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, overload

from ..estimate import tokens_of_chars
from .contract import RunState, Status
from .ops import OpSink

IntKey = Literal["turn", "tokens_in", "tokens_out", "est_in", "est_out"]
OptionalText = Literal["error", "note", "held"]
#: Keys whose change does not move the clock shown with them.
_CLOCK_KEYS = frozenset(("elapsed_ms", "held_ms"))


def initial_status(model: str = "") -> Status:
    return {
        "state": "idle",
        "model": model,
        "turn": 0,
        "tokens_in": 0,
        "tokens_out": 0,
        "cost": 0.0,
        "elapsed_ms": 0,
        "error": None,
        "note": None,
        "waiting_since": None,
        "est_in": 0,
        "est_out": 0,
        "estimated": False,
        "max_tokens": None,
        "held": None,
        "held_ms": 0.0,
    }


class RunClock:
    """Milliseconds since the run started, with the time held in step mode kept apart."""

    __slots__ = ("_clock", "_held_at_start", "_held_ms", "_held_since", "_tool_started", "t0")

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.t0: float | None = None
        self._held_ms = 0.0  # time held in step mode so far (ms)
        self._held_since: float | None = None
        self._held_at_start: dict[int, float] = {}  # open node -> held time when it started
        self._tool_started: dict[str, float] = {}

    def start(self) -> None:
        """The run's first event: time counts from here."""
        if self.t0 is None:
            self.t0 = self._clock()

    def now(self) -> float:
        """Milliseconds since the run started (0 before it did)."""
        now = self._clock()
        if self.t0 is None:
            return 0.0
        return round(now - self.t0, 1)

    def run_ms(self) -> float:
        """The run's own milliseconds: since it started, step-mode holds left out. It never
        runs backwards and stands still while held (the status line's clock)."""
        if self.t0 is None:
            return 0.0
        return round(self._clock() - self.t0 - self.held(), 1)

    def elapsed(self) -> int:
        """The status line's figure: :meth:`run_ms` in whole milliseconds."""
        return int(self.run_ms())

    def held(self) -> float:
        """Milliseconds held in step mode so far, the current hold included."""
        if self._held_since is None:
            return self._held_ms
        return self._held_ms + self._clock() - self._held_since

    def hold(self, holding: bool) -> None:
        """A step-mode hold starts (``holding``) or the current one ends."""
        now = self._clock()
        if self._held_since is not None:
            self._held_ms += now - self._held_since
            self._held_since = None
        if holding:
            self._held_since = now

    def node_opened(self, node: int) -> None:
        self._held_at_start[node] = self.held()

    def node_held(self, node: int) -> float:
        """Time held while ``node`` was open (it closes now)."""
        now = self.held()
        return round(now - self._held_at_start.pop(node, now), 1)

    def tool_started(self, tool_id: str) -> None:
        self._tool_started[tool_id] = self._clock() - self.held()

    def tool_duration(self, tool_id: str) -> float | None:
        """Milliseconds the tool ran, holds left out (None if it never started)."""
        started = self._tool_started.pop(tool_id, None)
        if started is None:
            return None
        return round(self._clock() - self.held() - started, 1)


class StatusLine:
    """The ``status`` of the state, written through typed keys, plus the streaming estimate."""

    __slots__ = ("chars", "clock", "context_estimate", "partial", "sink", "status", "waiting")

    def __init__(self, status: Status, sink: OpSink, clock: RunClock) -> None:
        self.status = status
        self.sink = sink
        self.clock = clock
        self.chars = 0
        """Characters of the reply streamed so far (text, thinking, tool-call arguments)."""
        self.waiting = False
        """The request was sent and no token came back yet."""
        self.partial: Any = None
        """The latest partial reply (its reported usage, if any)."""
        self.context_estimate = 0
        """The estimated size of the request being sent (tokens)."""

    @overload
    def set(self, key: Literal["state"], value: RunState) -> None: ...
    @overload
    def set(self, key: Literal["model"], value: str) -> None: ...
    @overload
    def set(self, key: IntKey, value: int) -> None: ...
    @overload
    def set(self, key: Literal["cost", "elapsed_ms", "held_ms"], value: float) -> None: ...
    @overload
    def set(self, key: OptionalText, value: str | None) -> None: ...
    @overload
    def set(self, key: Literal["waiting_since"], value: float | None) -> None: ...
    @overload
    def set(self, key: Literal["estimated"], value: bool) -> None: ...
    @overload
    def set(self, key: Literal["max_tokens"], value: int | None) -> None: ...

    def set(self, key: str, value: Any) -> None:
        """Set one key (an op only when it changed). Any other change also brings the clock
        up to date, so a view that re-bases its ticking clock on the status never goes back."""
        status: dict[str, Any] = self.status  # type: ignore[assignment]
        if status.get(key) != value:
            status[key] = value
            self.sink.set(["status", key], value)
            if key not in _CLOCK_KEYS and self.clock.t0 is not None:
                self.tick()

    def tick(self) -> None:
        """The run's clock into the status line (holds left out: it stands still while held)."""
        self.set("elapsed_ms", self.clock.elapsed())

    # -- the request and the reply being streamed ------------------------------------------

    def waiting_for_model(self) -> None:
        if not self.waiting:
            self.waiting = True
            self.set("waiting_since", self.clock.run_ms())
        self.set("state", "waiting")

    def first_token(self) -> None:
        self.waiting = False
        self.set("waiting_since", None)
        self.set("state", "streaming")

    def live_estimate(self) -> tuple[int, int]:
        """(input, output) tokens of the reply being streamed: what the provider reported so
        far, else the estimate."""
        usage = getattr(self.partial, "usage", None)
        reported_in = usage.input + usage.cache_read + usage.cache_write if usage else 0
        reported_out = usage.output if usage else 0
        return (
            reported_in or self.context_estimate,
            reported_out or tokens_of_chars(self.chars),
        )

    def render_estimate(self) -> None:
        """The live estimate into the status line (once per frame)."""
        est_in, est_out = self.live_estimate()
        self.set("est_in", est_in)
        self.set("est_out", est_out)

    def reply_ended(self, message: Any) -> None:
        """A reply ended: add what the provider reported (else the estimate) to the run's
        counts, and start the next request's estimate from nothing."""
        self.partial = message
        tokens_in, tokens_out = self.live_estimate()
        usage = message.usage
        if tokens_in != usage.input + usage.cache_read + usage.cache_write or (
            tokens_out != usage.output
        ):
            self.set("estimated", True)
        status = self.status
        self.set("tokens_in", status["tokens_in"] + tokens_in)
        self.set("tokens_out", status["tokens_out"] + tokens_out)
        self.set("est_in", 0)
        self.set("est_out", 0)
        self.set("cost", round(status["cost"] + usage.cost.total, 6))
        self.set("elapsed_ms", self.clock.elapsed())
        self.partial = None
        self.chars = 0
        self.waiting = False
        self.set("waiting_since", None)

    def length_note(self) -> str:
        """What a reply cut off by the output limit says."""
        limit = self.status["max_tokens"]
        at = f" ({limit} tokens)" if limit else ""
        return (
            f"cut off: the reply reached the output limit{at}; raise it with %%agent --max-tokens N"
        )


__all__ = ["RunClock", "StatusLine", "initial_status"]
