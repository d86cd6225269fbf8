"""The panel's reducer: agent events -> the view state (:class:`~.contract.PanelData`) and ops.

:class:`PanelState` keeps ``data`` (what a snapshot sends: status line, transcript, tool cards,
lifecycle tree, queue, step and approval state) and writes, for every change, an op to its
:class:`~.ops.OpSink`, so a view can follow along with ``apply_ops``. The state is typed with
the contract's TypedDicts: every write names its key, so mypy checks what the reducer puts
where. The transport pulls the ops (:meth:`PanelState.take_ops`, which renders the text
streamed since the last frame first); the reducer never calls the transport.

Its parts, each in its module: the streaming Markdown text (:mod:`.streaming_text`), the
status line and the run's clock (:mod:`.status_line`), the lifecycle tree (:mod:`.lifecycle`),
the tool cards (:mod:`.tool_cards`), the run's timeline (:mod:`.timeline`) and the entries and
cards built from one message (:mod:`.entries`).

Step mode must tell the truth, so the reducer is told (:meth:`PanelState.passed`) when the loop
went on past an event: a call announced by ``tool_execution_start`` is ``prepared`` until then
(a parallel batch runs only once every call is prepared), and it learns from the widget
whether a request went out (:meth:`PanelState.request_sent`), so a reply aborted before any
request says that no request was made.

The per-token path is lean: a text delta is appended to a list of parts and its block marked
for the next frame; nothing copies the message or the transcript per token, and the state keeps
per-run counts, not a record per token. Structural values put into ops are copies, so later
changes to ``data`` never leak into ops still waiting to be sent. This module must stay pure:
no I/O, no widgets, no event loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal, assert_never

from ...agent import (
    OPERATION_ABORTED,
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
from ...ai import (
    AssistantMessage,
    message_text,
)
from ..call_labels import call_labels
from ..failed_calls import UNPARSED, never_ran_reason, unparsed
from .contract import (
    ApprovalCard,
    PanelData,
    QueueItem,
    ToolStatus,
    UserEntry,
)
from .entries import (
    args_text,
    compaction_entry,
    content_parts,
    initial_state,
    plain_entry,
)
from .event_log import EventLog
from .lifecycle import Lifecycle
from .ops import Op, OpBuffer, OpSink, copy_value
from .reply import StreamingReply, assistant_entry
from .status_line import RunClock, StatusLine
from .step_bar import StepBar
from .streaming_text import OpenText
from .timeline import RunTimeline
from .tool_cards import ToolCards

#: What an assistant entry aborted before its request went out says (no request was made).
NO_REQUEST = "no request was made: the run was aborted before it was sent"

BlockKey = tuple[Literal["text", "thinking", "toolCall"], str]


class PanelState:
    """Reduces agent events into ``data``, writing ops to ``sink`` (see the module docstring).

    ``take_ops()`` renders the text streamed since the last call and hands over the ops written
    since; ``materialize()`` renders and returns ``data`` whole (for a snapshot).
    """

    def __init__(
        self,
        sink: OpSink | None = None,
        *,
        model: str = "",
        step: bool = False,
        granularity: str = "",
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.sink: OpSink = sink if sink is not None else OpBuffer()
        self.data: PanelData = initial_state(model, step, granularity)
        self.clock = RunClock(clock or (lambda: time.time() * 1000.0))
        self.status = StatusLine(self.data["status"], self.sink, self.clock)
        self.lifecycle = Lifecycle(self.data["lifecycle"], self.sink, self.clock)
        self.cards = ToolCards(self.data["tools"], self.sink, self.clock)
        self.log = EventLog(self.clock)
        self.timeline = RunTimeline(self.data["timeline"], self.sink, self.clock)
        self.step = StepBar(self.data, self.sink, self.clock, self.status, self.timeline)
        """Holds and the context box (set by the widget)."""
        self._reply: StreamingReply | None = None
        """The assistant message being streamed."""
        self._dirty: list[OpenText] = []
        """Texts that streamed since the last frame (rendered once per frame)."""
        self._run_node: int | None = None
        self._turn_node: int | None = None
        self._message_node: int | None = None
        self._tool_nodes: dict[str, int] = {}
        self._batch: list[str] = []
        """The tool call ids of the last reply, in source order (the batch to run)."""
        self._announced: list[str] = []
        """Calls of the batch whose ``tool_execution_start`` came (prepared, in order)."""
        self.sequential = False
        """The batch runs one call at a time (the widget sets it from the agent)."""
        self._replied = False
        self._last_turn_tools = 0
        self._request_sent = False
        self._unpassed: ToolExecutionStartEvent | None = None
        """The last ``tool_execution_start``, until the loop is known to have gone past it."""
        self._tapped = False
        """A request tap reports the requests (else nothing tells whether one went out)."""
        self.ended = False
        self.aborted = False
        """Set (by the widget, from the run's signal) before an aborted run's ``agent_end``."""

    @property
    def tool_marks(self) -> dict[str, str]:
        """Tool name -> the name its card shows (an MCP tool's with its server; the widget)."""
        return self.cards.marks

    @tool_marks.setter
    def tool_marks(self, marks: dict[str, str]) -> None:
        self.cards.marks = marks

    @property
    def events(self) -> list[dict[str, Any]]:
        """One record per event, except that a message's updates share one counting record."""
        return self.log.events

    @property
    def counts(self) -> dict[str, int]:
        """How many events of each type the run had."""
        return self.log.counts

    # -- what the transport and snapshots read -----------------------------------------------

    def render(self) -> None:
        """Write the ops of the text streamed since the last call (finished blocks, tails), and
        the token estimate of the reply being streamed (once per frame, not per token)."""
        dirty = self._dirty
        for open_text in dirty:
            open_text.render(self.sink)
        dirty.clear()
        if self._reply is not None or self.status.waiting:
            self.status.render_estimate()

    def take_ops(self) -> list[Op]:
        """The next frame's ops: the streamed text rendered, then every op written since."""
        self.render()
        return self.sink.take()

    def drop_ops(self) -> None:
        """Forget the ops written so far (nobody follows them: a snapshot will carry them)."""
        self.sink.take()

    def materialize(self) -> PanelData:
        """Render what is pending, fold buffered parts into ``data`` and return it."""
        self.render()
        if self._reply is not None:
            self._reply.materialize()
        if self.clock.t0 is not None and not self.ended:
            self.data["status"]["elapsed_ms"] = self.clock.elapsed()
            self.data["status"]["held_ms"] = round(self.clock.held(), 1)
        return self.data

    # -- the reducer -----------------------------------------------------------------------

    def apply(self, event: AgentEvent) -> None:
        if isinstance(event, MessageUpdateEvent):  # the per-token path: first, and alone
            self.update(event)
            return
        self.log.record(event)
        if self._unpassed is not None:
            self._catch_up(event)
        match event:
            case AgentStartEvent():
                self._on_agent_start()
            case TurnStartEvent():
                self._on_turn_start()
            case TurnEndEvent():
                self.lifecycle.close(self._turn_node)
                self._turn_node = None
                self._last_turn_tools = len(event.tool_results or [])
                self.status.tick()
            case MessageStartEvent():
                self._on_message_start(event)
            case MessageEndEvent():
                self._on_message_end(event)
            case ToolExecutionStartEvent():
                self._on_tool_execution_start(event)
            case ToolExecutionUpdateEvent():
                self._on_tool_execution_update(event)
            case ToolExecutionEndEvent():
                self._on_tool_execution_end(event)
            case AgentEndEvent():
                self._on_agent_end(event)
            case _:  # pragma: no cover (every event class has its case)
                assert_never(event)
        self.timeline.apply(event)

    def passed(self, event: AgentEvent) -> None:
        """The loop went on past ``event`` (its listeners returned; a hold there ended): a
        call's execution begins after its ``tool_execution_start`` -- at once when the batch
        runs one call at a time, else once every call of the batch is prepared."""
        if not isinstance(event, ToolExecutionStartEvent):
            return
        self._unpassed = None
        tool_id = event.tool_call_id
        if self.sequential or tool_id not in self._batch:
            self._run(tool_id)
        elif all(call in self._announced for call in self._batch):
            for call in self._batch:
                self._run(call)

    def _catch_up(self, event: AgentEvent) -> None:
        """An event after a ``tool_execution_start`` nobody reported passed: the loop did go
        past it (unless this is the aborted batch's "not run" end)."""
        start, self._unpassed = self._unpassed, None
        if start is None:
            return
        if isinstance(event, ToolExecutionEndEvent) and event.is_error:
            text, _ = content_parts(getattr(event.result, "content", []))
            if text == OPERATION_ABORTED:
                return
        self.passed(start)

    def _run(self, tool_id: str) -> None:
        if self.cards.started(tool_id):
            self.timeline.running(tool_id)
            if self.data["status"]["state"] not in ("aborted", "error", "done"):
                self.status.set("state", "running-tools")

    def request_sent(self, sent: bool) -> None:
        """The request tap let a request go to the model (``sent``), or the run was aborted
        before it went."""
        self._request_sent = sent
        self._tapped = True
        if sent:
            self.timeline.request(self.data["status"]["turn"])

    def _on_agent_start(self) -> None:
        self.ended = False
        self.aborted = False
        self.status.waiting_for_model()
        self.status.set("error", None)
        self._replied = False
        self._last_turn_tools = 0
        self._request_sent = False
        self._unpassed = None
        self._run_node = self.lifecycle.open("run", "Agent Run", None)

    def _on_turn_start(self) -> None:
        turn = self.data["status"]["turn"] + 1
        self.status.set("turn", turn)
        self.status.waiting_for_model()
        self._turn_node = self.lifecycle.open("turn", f"Turn {turn}", self._run_node)

    def _on_message_start(self, event: MessageStartEvent) -> None:
        message = event.message
        role = getattr(message, "role", "custom")
        parent = self._turn_node if self._turn_node is not None else self._run_node
        index = len(self.data["messages"])
        self._message_node = self.lifecycle.open(
            "message", "Message", parent, role, {"message": index}
        )
        self.log.message_started()
        if role == "assistant":
            self._replied = True
            entry = assistant_entry()
            self._reply = StreamingReply(
                entry, index, sink=self.sink, cards=self.cards, status=self.status,
                dirty=self._dirty,
            )  # fmt: skip
            self.status.chars = 0
            self.status.partial = message
            self.status.waiting_for_model()  # until its first token
            self.data["messages"].append(entry)
            self.sink.push(["messages"], copy_value(entry))
        else:
            plain = plain_entry(message)
            self._reply = None
            if plain["role"] == "user" and self._replied:
                self._mark_queued(plain, message, self._message_node)
            self.data["messages"].append(plain)
            self.sink.push(["messages"], copy_value(plain))

    def _mark_queued(self, entry: UserEntry, message: Any, node: int | None) -> None:
        """A user message delivered during the run came from a queue: say which and where
        it entered (the queue shown before it was drained tells steer from follow-up)."""
        text = message_text(message, images=False)
        kinds = [item["kind"] for item in self.data["queue"] if item["text"] == text]
        kind: Literal["steer", "followup"]
        if "steer" in kinds or "followup" in kinds:
            kind = "steer" if "steer" in kinds else "followup"
        else:
            kind = "steer" if self._last_turn_tools else "followup"
        turn = self.data["status"]["turn"] - 1
        entered = f"after turn {turn}'s tools" if self._last_turn_tools else f"after turn {turn}"
        entry["queued"] = kind
        entry["entered"] = entered
        self.timeline.delivered(kind, text)
        if node is not None:
            word = "steer" if kind == "steer" else "follow-up"
            self.lifecycle.set_detail(node, f"{word}, {entered}")

    def update(self, event: MessageUpdateEvent) -> None:
        """One message update: the per-token path (the widget calls it without ``apply``)."""
        sub = event.assistant_message_event
        self.log.update(sub.type)
        status = self.status
        status.partial = event.message
        if status.waiting:
            status.first_token()
            self.timeline.first_token()
        reply = self._reply
        if reply is not None:
            reply.update(sub)

    def _on_message_end(self, event: MessageEndEvent) -> None:
        message = event.message
        self.lifecycle.close(self._message_node, updates=self.log.message_ended())
        self._message_node = None
        reply, self._reply = self._reply, None
        if not isinstance(message, AssistantMessage) or reply is None:
            return
        calls = [(b.id, b.name, b.arguments) for b in message.content if b.type == "toolCall"]
        self._batch = [call_id for call_id, _, _ in calls]
        self._announced = []
        for call_id, label in call_labels(calls).items():
            self.cards.label(call_id, label)
        reply.end(message)
        if message.stop_reason == "error" and calls:
            self._never_ran([call_id for call_id, _, _ in calls], message.error_message)
        unsent = self._tapped and not self._request_sent
        if message.stop_reason == "aborted" and not message.content and unsent:
            reply.entry["error"] = None
            reply.entry["note"] = NO_REQUEST
            self.sink.set(["messages", reply.index, "error"], None)
            self.sink.set(["messages", reply.index, "note"], NO_REQUEST)
            self.status.set("error", None)
        self._request_sent = False
        # What the provider reported, else the estimate (an abort often comes before usage).
        self.status.reply_ended(message)
        self._dirty[:] = [t for t in self._dirty if t.stream is not None and t.dirty]

    def _never_ran(self, call_ids: list[str], error: str | None) -> None:
        """The reply ended in an error: its calls never ran. When the server could not parse
        the model's tool call, the status line says that in short: the server's own message
        is shown once, as the message's error."""
        reason = never_ran_reason(error)
        for call_id in call_ids:
            self.cards.never_ran(call_id, reason)
        if unparsed(error):
            self.status.set("error", UNPARSED)

    def _on_tool_execution_start(self, event: ToolExecutionStartEvent) -> None:
        tool_id = event.tool_call_id
        self.cards.new(tool_id, event.tool_name, args_text(event.args))
        self.cards.prepared(tool_id)
        self._announced.append(tool_id)
        self._unpassed = event
        label = self.cards.tools[tool_id]["label"]
        parent = self._turn_node if self._turn_node is not None else self._run_node
        self._tool_nodes[tool_id] = self.lifecycle.open(
            "tool", "Tool Execution", parent, label, {"tool": tool_id}
        )
        self.timeline.label(tool_id, label)

    def _on_tool_execution_update(self, event: ToolExecutionUpdateEvent) -> None:
        tool_id = event.tool_call_id
        if tool_id not in self.cards:
            return
        self.cards.progress(tool_id, event.partial_result)
        node = self._tool_nodes.get(tool_id)
        if node is not None:
            self.lifecycle.count_update(node)

    def _on_tool_execution_end(self, event: ToolExecutionEndEvent) -> None:
        tool_id = event.tool_call_id
        self.cards.new(tool_id, event.tool_name, args_text({}))
        self.cards.ended(tool_id, event.tool_name, event.result, bool(event.is_error))
        self.lifecycle.close(self._tool_nodes.pop(tool_id, None))

    def _on_agent_end(self, event: AgentEndEvent) -> None:
        final: Literal["done", "aborted", "error"] = "done"
        for message in reversed(event.messages or []):
            if isinstance(message, AssistantMessage):
                if message.stop_reason == "aborted":
                    final = "aborted"
                elif message.stop_reason == "error":
                    final = "error"
                break
        if self.aborted and final == "done":  # aborted during tools: the answer had finished
            final = "aborted"
        self.cards.fail_open(aborted=final == "aborted")
        self.lifecycle.close(self._turn_node)
        self._turn_node = None
        self.lifecycle.close(self._run_node)
        self.status.set("state", final)
        self.status.tick()
        self.ended = True

    # -- state set from the widget (not from events) ---------------------------------------

    def set_queue(self, queue: list[QueueItem]) -> None:
        if self.data["queue"] != queue:
            self.data["queue"] = queue
            self.sink.set(["queue"], copy_value(queue))
            self.timeline.queue(queue)

    def set_note(self, note: str | None) -> None:
        self.status.set("note", note)

    def set_context_estimate(self, tokens: int) -> None:
        """The estimated size of the request being sent (the widget computes it per request)."""
        self.status.context_estimate = tokens

    def set_max_tokens(self, limit: int | None) -> None:
        """The output limit of this cell's requests (the magic sets it)."""
        self.status.set("max_tokens", limit)

    def add_compaction(self, count: int) -> None:
        """A one-line marker in the transcript: the model now sees a summary in place of the
        conversation's first ``count`` messages."""
        entry = compaction_entry(count)
        self.data["messages"].append(entry)
        self.sink.push(["messages"], dict(entry))

    def set_approvals(self, approvals: list[ApprovalCard]) -> None:
        self.data["approvals"] = approvals
        self.sink.set(["approvals"], copy_value(approvals))
        state = self.data["status"]["state"]
        if approvals and state not in ("aborted", "error", "done"):
            self.status.set("state", "awaiting-approval")
        elif not approvals and state == "awaiting-approval":
            self.status.set("state", "running-tools")

    def no_request_made(self, message: Any) -> bool:
        """Whether ``message`` (just ended) is a reply the run was aborted before sending."""
        entries = self.data["messages"]
        last = entries[-1] if entries else None
        return (
            isinstance(message, AssistantMessage)
            and last is not None
            and last["role"] == "assistant"
            and last["note"] == NO_REQUEST
        )

    def approval_answered(self, tool_id: str) -> None:
        """An approval was answered: the card is running again if its execution had begun,
        else prepared."""
        card = self.cards.tools.get(tool_id)
        if card is not None and card["status"] == "awaiting-approval":
            self.cards.set_status(tool_id, "running" if card["start"] is not None else "prepared")

    def set_tool_status(self, tool_id: str, status: ToolStatus, *, only: str | None = None) -> None:
        """A card's status set from outside the events (approvals); with ``only``, just when
        it is that status now."""
        self.cards.set_status(tool_id, status, only=only)


__all__ = ["PanelState"]
