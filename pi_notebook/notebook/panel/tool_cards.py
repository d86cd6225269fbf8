"""The panel's tool cards (``tools`` of the state): one per tool call, keyed by its id.

A card is made when the model starts the call (or, for a provider that sends no updates, when
the final message or the execution names it), shows the arguments as they stream and then as the
final JSON, and follows the execution: status, start, duration (step-mode holds left out), the
result's redacted text and images, its rich displays as sanitised HTML (:mod:`.rich_html`), the
namespace diff, and why a malformed call was not run (a replayed call's duration is the
recorded one, as its stand-in runs nothing). A
call is ``prepared`` from its ``tool_execution_start`` until its execution begins (the reducer
says when: a parallel batch runs only once every call is prepared), and a call the run's abort
stopped before that reads ``aborted`` ("not run (aborted)"); a call whose reply ended in an
error never ran (``reply-failed``, with the reason from :mod:`..failed_calls`). Every write
names its key (typed through overloads), so mypy checks what goes where. This module must stay
pure.
"""

from __future__ import annotations

from typing import Any, Literal, overload

from ...agent import OPERATION_ABORTED
from ...ai import redact
from ..render import PREVIEW_CHARS
from .contract import Image, NamespaceDiff, ToolCard, ToolStatus
from .entries import content_parts, namespace_diff, new_card, not_run_reason, without_diff_line
from .ops import OpSink, copy_value
from .rich_html import displays_html, without_shown_notes
from .status_line import RunClock

#: The statuses of a card whose call has not finished (an ended run marks them failed).
OPEN_STATUSES = frozenset(("pending", "prepared", "running", "awaiting-approval", "progress"))
#: The statuses of a card whose tool has not begun to run.
NOT_STARTED = frozenset(("pending", "prepared"))
#: Why a call the run's abort stopped before its tool ran did not run (its card's ``not_run``).
ABORTED_BEFORE = "the run was aborted before the tool ran"


class ToolCards:
    """The ``tools`` dict of the state and the ops that change it."""

    __slots__ = ("clock", "marks", "recorded", "sink", "tools")

    def __init__(self, tools: dict[str, ToolCard], sink: OpSink, clock: RunClock) -> None:
        self.tools = tools
        self.sink = sink
        self.clock = clock
        self.marks: dict[str, str] = {}
        """Tool name -> the name its card shows (an MCP tool's with its server; the widget)."""
        self.recorded: dict[str, float] = {}
        """Tool call id -> milliseconds it ran when recorded: a replay's card shows that, not
        the time its stand-in took (the widget's ``replay_durations``)."""

    def __contains__(self, tool_id: str) -> bool:
        return tool_id in self.tools

    def new(self, tool_id: str, name: str, arguments: str) -> None:
        """A card for a call (nothing if it has one)."""
        if tool_id in self.tools:
            return
        card = new_card(tool_id, self.marks.get(name, name), arguments)
        self.tools[tool_id] = card
        self.sink.set(["tools", tool_id], copy_value(card))

    @overload
    def set(self, tool_id: str, key: Literal["status"], value: ToolStatus) -> None: ...
    @overload
    def set(self, tool_id: str, key: Literal["args_text", "result_text"], value: str) -> None: ...
    @overload
    def set(
        self, tool_id: str, key: Literal["start", "duration_ms"], value: float | None
    ) -> None: ...
    @overload
    def set(self, tool_id: str, key: Literal["images"], value: list[Image]) -> None: ...
    @overload
    def set(self, tool_id: str, key: Literal["displays"], value: list[str]) -> None: ...
    @overload
    def set(self, tool_id: str, key: Literal["is_error"], value: bool) -> None: ...
    @overload
    def set(self, tool_id: str, key: Literal["diff"], value: NamespaceDiff | None) -> None: ...
    @overload
    def set(self, tool_id: str, key: Literal["not_run", "approval"], value: str | None) -> None: ...
    @overload
    def set(self, tool_id: str, key: Literal["label"], value: str) -> None: ...

    def set(self, tool_id: str, key: str, value: Any) -> None:
        """Set one field of a card (typed by its key through the overloads)."""
        card: dict[str, Any] = self.tools[tool_id]  # type: ignore[assignment]
        card[key] = value
        self.sink.set(["tools", tool_id, key], copy_value(value))

    def label(self, tool_id: str, label: str) -> None:
        if tool_id in self.tools and self.tools[tool_id]["label"] != label:
            self.set(tool_id, "label", label)

    def prepared(self, tool_id: str) -> None:
        """``tool_execution_start``: announced, not running yet."""
        if self.tools[tool_id]["status"] == "pending":
            self.set(tool_id, "status", "prepared")

    def started(self, tool_id: str) -> bool:
        """The call's execution has begun (False if it is not waiting to run)."""
        card = self.tools.get(tool_id)
        if card is None or card["status"] != "prepared":
            return False
        self.clock.tool_started(tool_id)
        self.set(tool_id, "status", "running")
        self.set(tool_id, "start", self.clock.now())
        return True

    def progress(self, tool_id: str, partial: Any) -> None:
        self.set(tool_id, "status", "progress")
        self.result(tool_id, partial)

    def result(self, tool_id: str, result: Any) -> None:
        """The card shows ``result`` (a partial or the final one): text, images, rich displays,
        diff."""
        text, images = content_parts(getattr(result, "content", []), PREVIEW_CHARS)
        text = redact(text)  # the card keeps the redacted text: compare with that
        details = getattr(result, "details", None)
        diff = namespace_diff(details)
        displays = displays_html(details)
        if diff is not None:  # the card shows the diff in its own line: not twice
            text = without_diff_line(text)
        if displays:  # and a DataFrame as its table, not as its text form too
            text = without_shown_notes(text, details)
        card = self.tools[tool_id]
        if card["result_text"] != text:
            self.set(tool_id, "result_text", text)
        if card["images"] != images:
            self.set(tool_id, "images", images)
        if displays and card["displays"] != displays:
            self.set(tool_id, "displays", displays)
        if diff is not None and card["diff"] != diff:
            self.set(tool_id, "diff", diff)

    def ended(self, tool_id: str, tool_name: str, result: Any, is_error: bool) -> None:
        card = self.tools[tool_id]
        never_ran = card["status"] in NOT_STARTED
        self.result(tool_id, result)
        ran = self.clock.tool_duration(tool_id)
        self.set(
            tool_id, "duration_ms", self.recorded.get(tool_id, ran) if ran is not None else None
        )
        self.set(tool_id, "is_error", is_error)
        reason = not_run_reason(tool_name, card["result_text"]) if is_error else None
        status: ToolStatus = "rejected" if reason is not None else "error" if is_error else "done"
        if is_error and reason is None and never_ran and card["result_text"] == OPERATION_ABORTED:
            reason, status = ABORTED_BEFORE, "aborted"
        if reason is not None:
            self.set(tool_id, "not_run", reason)
        self.set(tool_id, "status", status)

    def never_ran(self, tool_id: str, reason: str) -> None:
        """The reply carrying the call failed (the server could not parse it, say): the tool
        never ran, whatever streamed of its arguments."""
        if tool_id in self.tools and self.tools[tool_id]["status"] in NOT_STARTED:
            self.set(tool_id, "not_run", reason)
            self.set(tool_id, "status", "reply-failed")

    def fail_open(self, aborted: bool = False) -> None:
        """The run ended: a card whose call did not finish failed; one whose tool never began
        to run, in an aborted run, was not run (aborted)."""
        for tool_id, card in list(self.tools.items()):
            if card["status"] in OPEN_STATUSES:
                if aborted and card["status"] in NOT_STARTED:
                    self.set(tool_id, "not_run", ABORTED_BEFORE)
                    self.set(tool_id, "status", "aborted")
                else:
                    self.set(tool_id, "status", "error")

    def set_status(self, tool_id: str, status: ToolStatus, *, only: str | None = None) -> None:
        """A card's status set from outside the events (approvals); with ``only``, just when
        it is that status now."""
        card = self.tools.get(tool_id)
        if card is None or (only is not None and card["status"] != only):
            return
        if card["status"] != status:
            self.set(tool_id, "status", status)


__all__ = ["ABORTED_BEFORE", "NOT_STARTED", "OPEN_STATUSES", "ToolCards"]
