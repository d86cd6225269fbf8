"""``AgentPanel``: the anywidget that shows a run live and steers it.

The kernel side keeps the run's state (:class:`~.reducer.PanelState`), streams it to views as
numbered delta frames (:class:`~.transport.Transport`, at most ~30 a second, the Markdown
rendered to HTML once per frame) after each view's ``hello`` (the listener applies each event to
the reducer and pokes the transport, which pulls the reducer's ops when it cuts a frame), and
syncs the whole state into the ``state`` trait at a low rate (a notebook saved mid-run). When
the run ends, :meth:`AgentPanel.static_bundle` is the transcript as sanitised ``text/html`` plus
``text/plain``, with no widget view: the ``%%agent`` magic puts it in the cell's output and then
closes the widget, so a saved notebook reads everywhere without a widget manager and finished
panels hold no comm. A finished panel displayed again shows that bundle. Control messages from
the front end (abort, steer, follow-up, queue clearing, step, approvals, the raw JSON of the
request) may arrive on another thread (comms can be dispatched on kernel subshells), so the
handler only hands them to the agent's loop with ``call_soon_threadsafe``. The listener attached
to the agent is synchronous on the per-token path and returns an awaitable only to hold an event
in step mode; :meth:`AgentPanel.before_request` (called by the magic's request tap) shows what
the model is sent and holds there when the granularity says so.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from ...agent import (
    AgentEndEvent,
    AgentEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionStartEvent,
    TurnEndEvent,
)
from ...ai import AbortSignal, AssistantMessage, message_text
from ...tools import tool_marks
from ..context_view import JSON_CHARS, SentRequest, context_json, context_summary
from ..estimate import estimate_context_tokens, estimate_request_tokens
from ..render import render_transcript
from ..stepping import DEFAULT_GRANULARITY, MODEL_REQUEST, StepNarrator, hold_points
from .approvals import Approvals
from .assets import frontend
from .contract import QueueItem
from .entries import compaction_note
from .handover import FINAL_DRAFT_WAIT, Handover
from .ops import OpBuffer
from .reducer import NO_REQUEST, PanelState
from .static import render_static_html
from .step import StepGate
from .timeline_render import timeline_rows
from .transport import DEFAULT_RATE, Transport

if TYPE_CHECKING:
    from ...agent import Agent, Compaction

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: Least seconds between syncs of the full state into the ``state`` trait during a run (at a
#: turn's end; views follow the deltas meanwhile, so this only serves a notebook saved mid-run).
STATE_INTERVAL = 30.0
_ESM, _CSS = frontend()


class AgentPanel(anywidget.AnyWidget):
    """Live view and controls of one agent run (see the module docstring)."""

    _esm = _ESM
    _css = _CSS
    state = traitlets.Dict().tag(sync=True)
    key = traitlets.Unicode().tag(sync=True)  # unique: a view finds its cell by it (js/panel.js)

    def __init__(
        self,
        *,
        model: str = "",
        step: bool | str = False,
        step_events: Collection[str] | None = None,
        rate: float = DEFAULT_RATE,
        state_interval: float = STATE_INTERVAL,
        measure: bool = False,
        **kwargs: Any,
    ) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._agent: Agent | None = None
        self._unsubscribe: Callable[[], None] | None = None
        granularity = "" if not step else DEFAULT_GRANULARITY if step is True else str(step)
        points = hold_points(granularity) if granularity else frozenset()
        if step_events is not None:
            points = frozenset(step_events)
        self.granularity = granularity
        self._state = PanelState(OpBuffer(), model=model, step=bool(step), granularity=granularity)
        self.transport = Transport(self._send_message, self._state, rate=rate, measure=measure)
        self._step = StepGate(
            enabled=bool(step), points=points, on_hold=self._on_hold, on_no_view=self._no_view
        )
        self._narrator = StepNarrator()
        self._anchor = f"pi-{uuid.uuid4().hex[:10]}"  # the static transcript's ids
        self._request: SentRequest | None = None
        self._state_interval = state_interval
        self._last_sync = time.monotonic()
        self._approvals = Approvals(self._state, self.transport.flush)
        self._messages: list[Any] = []
        self._markers: dict[int, list[str]] = {}
        """Compaction markers by the index of the message they come before."""
        self._plain: str | None = None
        self._handover = Handover()
        self.finished = False
        super().__init__(state=self._state_for_sync(), key=self._anchor, **kwargs)
        self.on_msg(self._on_custom_msg)

    def __repr__(self) -> str:
        return "<pi_notebook agent panel>"

    # -- data ------------------------------------------------------------------------------

    @property
    def events(self) -> list[dict[str, Any]]:
        """The run's events as data: dicts with ``type`` and ``t`` (ms since the start); the
        updates of one message share one record with their ``count`` and ``kinds``."""
        return list(self._state.events)

    @property
    def counts(self) -> dict[str, int]:
        """How many events of each type the run had."""
        return dict(self._state.counts)

    @property
    def snapshot(self) -> dict[str, Any]:
        """The current full state (a copy), as a snapshot would carry it."""
        data: dict[str, Any] = json.loads(json.dumps(self._state.materialize()))
        return data

    @property
    def timeline(self) -> dict[str, Any]:
        """The run's timeline (a copy): lanes, spans and turn starts (``timeline.py``)."""
        data: dict[str, Any] = json.loads(json.dumps(self._state.data["timeline"]))
        return data

    @property
    def timeline_text(self) -> str:
        """The run's timeline as rows of text (``%agent timeline``)."""
        return timeline_rows(self._state.data["timeline"])

    @property
    def step_held(self) -> str | None:
        """The type of the event step mode is holding, or None."""
        return self._step.held

    # -- wiring ----------------------------------------------------------------------------

    def attach(self, agent: Agent) -> Callable[[], None]:
        """Follow ``agent``'s events (call on its loop); returns the unsubscriber."""
        self._agent = agent
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        self.transport.loop = self._loop
        model = agent.state.model
        self._state.data["status"]["model"] = f"{model.provider}/{model.id}"
        self._state.tool_marks = tool_marks(agent.state.tools)
        unsubscribe = agent.subscribe(self._listener)
        unsubscribe_compaction = agent.compaction.subscribe(self._on_compaction)

        def both() -> None:
            unsubscribe()
            unsubscribe_compaction()

        self._unsubscribe = both
        return self.detach

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _on_compaction(self, compaction: Compaction) -> None:
        self._state.add_compaction(compaction.count)
        self.transport.poke()
        self._markers.setdefault(len(self._messages), []).append(compaction_note(compaction.count))

    def _listener(self, event: AgentEvent, signal: AbortSignal) -> Awaitable[None] | None:
        state = self._state
        match event:
            case MessageUpdateEvent():  # the per-token path: the reducer, then maybe a frame
                state.update(event)
                self.transport.poke()
            case MessageStartEvent():
                self._narrator.observe(event)
                if signal.aborted and isinstance(event.message, AssistantMessage):
                    state.request_sent(False)  # the loop makes no request after an abort
                state.apply(event)
                self.refresh_queue()
                self.transport.poke()
            case MessageEndEvent():
                self._narrator.observe(event)
                if not isinstance(event.message, AssistantMessage):
                    self._estimate_request()  # the next request holds this message: its size
                else:
                    state.sequential = self._sequential(event.message)
                    self._narrator.sequential = state.sequential
                state.apply(event)
                if state.no_request_made(event.message):  # say so, not "Request was aborted"
                    self._markers.setdefault(len(self._messages), []).append(NO_REQUEST)
                else:
                    self._messages.append(event.message)
                self.transport.poke()
            case TurnEndEvent():
                self._narrator.observe(event)
                state.apply(event)
                if time.monotonic() - self._last_sync >= self._state_interval:
                    self._sync_state()
                self.transport.poke()
            case AgentEndEvent():
                self._narrator.observe(event)
                if signal.aborted:  # also when aborted during tools
                    state.aborted = True
                state.apply(event)
                self.refresh_queue()
                self.transport.flush()
            case _:
                self._narrator.observe(event)
                state.apply(event)
                self.transport.poke()
        point = event.type  # the hold points are named by the event types
        if self._step.should_hold(point) and not signal.aborted:
            self.transport.flush()
            return self._held(point, event, signal)
        if isinstance(event, ToolExecutionStartEvent):
            state.passed(event)
        return None

    async def _held(self, point: str, event: AgentEvent, signal: AbortSignal) -> None:
        """Hold at ``event``; once released the loop goes on past it (a call may run)."""
        try:
            await self._step.hold(point, signal, lambda: self._words(point, event))
        finally:
            if isinstance(event, ToolExecutionStartEvent) and not signal.aborted:
                self._state.passed(event)
                self.transport.flush()

    def _sequential(self, message: AssistantMessage) -> bool:
        """Whether the reply's tool calls run one at a time (as the agent's batch decides)."""
        agent = self._agent
        if agent is None:
            return False
        if agent.tool_execution == "sequential":
            return True
        modes = {tool.name: tool.execution_mode for tool in agent.state.tools}
        return any(
            modes.get(block.name) == "sequential"
            for block in message.content
            if block.type == "toolCall"
        )

    def _estimate_request(self) -> None:
        """The next request's size in tokens (Pi's 4 characters a token), estimated when a
        prompt, steering message or tool result joins the transcript (not per token), shown
        while the model thinks and until the provider reports usage."""
        agent = self._agent
        if agent is not None:
            state = agent.state
            tokens = estimate_context_tokens(state.messages, state.system_prompt, state.tools)
            self._state.set_context_estimate(tokens)

    def set_max_tokens(self, limit: int | None) -> None:
        """The output limit of the run's requests (named when a reply is cut by it)."""
        self._state.set_max_tokens(limit)
        self.transport.poke()

    def before_request(
        self, request: SentRequest, signal: AbortSignal | None
    ) -> Awaitable[None] | None:
        """The loop is about to send ``request``: show it, and hold here in step mode."""
        self._request = request
        # What was sent may be a compacted view of the transcript: its size is the estimate.
        sent = estimate_request_tokens(request.messages, request.system_prompt, request.tools)
        self._state.set_context_estimate(sent)
        aborted = signal is not None and signal.aborted
        hold = self._step.should_hold(MODEL_REQUEST) and not aborted
        self._state.step.set_context(context_summary(request, held=hold))
        if not hold:
            self._state.request_sent(not aborted)
            self.transport.flush()
            return None
        self.transport.flush()
        return self._held_request(request, signal)

    async def _held_request(self, request: SentRequest, signal: AbortSignal | None) -> None:
        try:
            await self._step.hold(
                MODEL_REQUEST, signal, lambda: self._words(MODEL_REQUEST, None, request)
            )
        finally:
            self._state.step.set_context_held(False)
            self._state.request_sent(not (signal is not None and signal.aborted))
            self.transport.flush()

    def _words(
        self, point: str, event: AgentEvent | None, request: SentRequest | None = None
    ) -> tuple[str, str]:
        agent = self._agent
        queued = len(agent.steering_queue) + len(agent.follow_up_queue) if agent else 0
        return self._narrator.describe(point, event, queued=queued, request=request)

    def finish(self, note: str | None = None, *, sync: bool = True) -> None:
        """End of the run: last frame, step gate open, approvals denied; with ``sync`` the full
        state goes into the trait (for a panel that stays live; the magic closes it instead)."""
        if note is not None:
            self._state.set_note(note)
        self._step.run_to_end()
        self.transport.close()
        self.detach()
        self._approvals.deny_all()
        self.finished = True
        self._plain = render_transcript(self._messages, self._markers, context=True) or repr(self)
        self._messages = []
        self._request = None
        self._markers = {}
        if sync:
            self._sync_state()

    def static_bundle(self) -> dict[str, Any]:
        """The run as a display bundle without a widget: sanitised HTML and the plain text."""
        plain = self._plain
        if plain is None:
            plain = render_transcript(self._messages, self._markers, context=True)
        return {
            "text/html": render_static_html(self._state.materialize(), _CSS, self._anchor),
            "text/plain": plain or repr(self),
        }

    def close(self) -> None:
        """Close the widget's comm (its views go) and drop what only a live run needs."""
        self.detach()
        self.transport.close()
        self._agent = None
        self._loop = None
        super().close()
        # ipywidgets blanks the display hook of a closed widget on the instance; a finished
        # panel must still display (as its transcript), through the class's method below.
        self.__dict__.pop("_repr_mimebundle_", None)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        if self.finished:  # the finished run reads as its transcript, live or not
            return self.static_bundle()
        return super()._repr_mimebundle_(**kwargs)

    def _state_for_sync(self) -> dict[str, Any]:
        state = self.snapshot
        state["seq"] = self.transport.seq
        state["finished"] = self.finished
        return state

    def _sync_state(self) -> None:
        self._last_sync = time.monotonic()
        self.state = self._state_for_sync()

    def _send_message(self, message: dict[str, Any]) -> None:
        self.send(message)

    # -- control messages ------------------------------------------------------------------

    def _on_custom_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """Runs on whatever thread the comm message arrived on: hand over, do nothing else."""
        if not isinstance(content, dict):
            return
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.handle_message, content)
        else:
            self.handle_message(content)

    def handle_message(self, content: dict[str, Any]) -> None:
        """Act on one front-end message (on the agent's loop thread)."""
        kind = content.get("type")
        agent = self._agent
        running = agent is not None and agent.is_running and not self.finished
        if kind in ("hello", "resync"):
            self._step.view_ready()
            self.transport.flush()
            known = content.get("seq")
            if kind == "hello" and self.finished and known == self.transport.seq:
                return  # a view of the finished run that already has its final synced state
            self.transport.snapshot(self._state.materialize())
        elif kind == "abort":
            if running and agent is not None:
                self._step.run_to_end()
                agent.abort()
                self._state.set_note("abort requested")
            else:
                self._state.set_note("no run is active")
        elif kind in ("steer", "followup", "interrupt_send"):
            text = str(content.get("text", "")).strip()
            self._handover.sent()
            if not text:
                self._state.set_note(f"{kind.replace('_', ' ')}: type a message first")
            elif agent is None:
                self._state.set_note("this panel's run is gone: write a new %%agent cell")
            elif kind == "interrupt_send" and running:
                self._handover.interrupt_with(text)
                self._step.run_to_end()
                agent.abort()
                self._state.set_note("interrupting: your message is sent when the stream stops")
            else:  # sent as the run ends: the next %%agent cell delivers it
                if kind == "followup":
                    agent.follow_up(text)
                else:
                    agent.steer(text)
                self._state.set_note(None if running else "queued for the next %%agent cell")
            self.refresh_queue()
        elif kind == "draft":
            self._handover.on_draft(str(content.get("text", "")), final=bool(content.get("final")))
        elif kind == "clear_queue":
            if agent is not None:
                agent.clear_all_queues()
            self.refresh_queue()
        elif kind == "next":
            self._step.next()
        elif kind == "run_to_end":
            self._step.run_to_end()
        elif kind == "approval":
            self._approvals.answer(str(content.get("tool_call_id", "")), content.get("approved"))
        elif kind == "context_json" and self._request is not None:
            self._state.step.set_context_json(context_json(self._request, JSON_CHARS))
        self.transport.flush()

    def refresh_queue(self) -> None:
        """Show the agent's queues (and a pending *Interrupt & send*) as they are now."""
        agent = self._agent
        if agent is None:
            return
        items = [QueueItem(kind="interrupt", text=t) for t in self._handover.interrupting]
        items += [QueueItem(kind="steer", text=_text(m)) for m in agent.steering_queue]
        items += [QueueItem(kind="followup", text=_text(m)) for m in agent.follow_up_queue]
        self._state.set_queue(items)
        self.transport.poke()

    # -- what must outlive the run (the draft, interrupt and send) ---------------------------

    def take_interrupt(self) -> str | None:
        """An *Interrupt & send* message to prompt with now that the stream stopped, or None."""
        text = self._handover.take_interrupt()
        if text is not None:
            self._state.set_note(None)
            self.refresh_queue()  # (it pokes the transport)
        return text

    async def collect_draft(self, timeout: float = FINAL_DRAFT_WAIT) -> str:
        """The unsent draft in the panel's box at the end of the run ("" for none): a
        connected view is asked for its final draft (so nothing typed up to now is lost),
        otherwise the latest draft a view sent is used."""
        if not self.transport.ready or self.finished:
            return self._handover.take_draft()

        def announce() -> None:
            self.transport.flush()
            self.send({"type": "closing"})

        return await self._handover.final_draft(announce, timeout)

    def take_draft(self) -> str:
        """The latest draft a view sent, without asking (an interrupted run cannot wait)."""
        return self._handover.take_draft()

    def _on_hold(self, point: str | None, words: tuple[str, str] | None) -> None:
        self._state.step.hold(point, words)
        self.transport.flush()

    def _no_view(self) -> None:
        self._state.step.enable(False)
        self._state.set_note("step mode off: no view of the panel showed its Next button")
        self.transport.flush()

    # -- approvals (used by the tools' approver) -------------------------------------------

    async def request_approval(self, request: Any, signal: AbortSignal | None = None) -> bool:
        """Show an approval card for ``request`` and wait for Approve / Deny (False on abort;
        see :class:`~.approvals.Approvals`)."""
        return await self._approvals.ask(request, signal)


def _text(message: Any) -> str:
    """A queued message's text, as its queue line shows it."""
    return message_text(message, images=False)


__all__ = ["WIDGET_MIME", "AgentPanel"]
