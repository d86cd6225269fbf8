"""``Conversation``: one notebook conversation and everything that belongs to it.

A conversation is an :class:`~pi_notebook.agent.Agent` (the default one, one named with
``--agent NAME``, or a replay's) plus what the notebook keeps for it between cells: where its
model came from, its approval policy (``--approve``), its budget (``%agent budget``), its undo
journal (``%agent undo``), the code of its last run (``%agent code``), whether it is saved as
the notebook's conversation (a replay's is not), and what its last run did (turns, the limits in
force, what stopped it) and sent (``%agent context``), and what of the notebook it has been
sent (:class:`~.notebook_context.NotebookContext`: each run starts with the cells run since the
previous one).

The budget counts :attr:`Conversation.budget_spent`: what the Agent has spent, less the
``budget_baseline`` a resumed or loaded file came with (its recorded cost, unless
``--count-cost``). The Agent knows only its own ``spent``, so the run's ``RunConfig.budget`` is
the budget plus that baseline (the same stopping point), and a note the Agent ends the run with
is said again in the budget's own figures.

:meth:`Conversation.run` runs one prompt: it builds the run's settings as one
:class:`~pi_notebook.agent.RunConfig` (limits, output limit, approval hook, listeners, the
notebook context's ``convert_to_llm``, the
request tap) and calls the Agent with it. It never writes an attribute of the Agent: the
Agent's own settings are what a run without ``%%agent`` options uses.

This module must never print (it shows through the ``show`` it is given), never block the
kernel's loop and never let an API key into what it shows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..agent import (
    KEEP,
    Agent,
    AgentEvent,
    BudgetExceededError,
    Compaction,
    RunConfig,
    budget_note,
    format_usd,
)
from ..ai import AgentMessage, AssistantMessage, Model
from ..ai.replay import check_replay
from ..settings import UI
from ..tools import (
    ApprovalMode,
    UndoJournal,
    approval_hook,
    begin_run,
    preferring_programmatic,
    workspace,
)
from . import code_cell
from .context_view import RequestTap, SentRequest
from .conversation_settings import ApprovalPolicy
from .conversations import DEFAULT, Saver, get_conversations, key_of
from .hints import missing_replies_hint
from .limits import output_limit, run_max_tokens
from .notebook_context import NotebookContext, with_context, with_notebook_context
from .options import AgentOptions
from .render import final_text, render_transcript
from .replay_run import record_tools
from .run_log import RunLog

if TYPE_CHECKING:
    from .panel import AgentPanel
    from .session import NotebookSession

REPLY_VARIABLE = "_agent_reply"
PANEL_VARIABLE = "_agent_panel"
INTERRUPTED = "[interrupted: the run was cancelled and aborted; the conversation stays usable]"

Listener = Callable[[AgentEvent], Any]


def plain_mode(options: AgentOptions) -> bool:
    return options.plain or UI.value() == "plain"


@dataclass(slots=True)
class RunSummary:
    """What a conversation's last run did: its turns, the limits in force, what stopped it."""

    turns: int
    limits: list[str]
    stopped: str | None
    """``stopped by --max-cost $0.01: $0.0123 spent``, ``interrupted``...; None: it ended by
    itself."""

    @property
    def noteworthy(self) -> bool:
        """It had limits, or something stopped it (``%agent status`` says so)."""
        return bool(self.limits) or self.stopped is not None

    def text(self) -> str:
        turns = f"{self.turns} turn{'' if self.turns == 1 else 's'}"
        limits = f"limits: {', '.join(self.limits)}" if self.limits else "no limits"
        end = self.stopped or "ended by itself"
        return f"last run: {turns}, {limits}; {end}"


@dataclass(slots=True)
class RunResult:
    """What :meth:`Conversation.run` leaves: the run's new messages and how it ended."""

    messages: list[AgentMessage]
    reply: str
    log: RunLog
    summary: RunSummary
    interrupted: bool = False
    limit: str | None = None
    """The note the run ended with (a limit, or a refusal), as shown under the transcript."""


class Conversation:
    """One conversation of the notebook (see the module docstring)."""

    def __init__(
        self,
        agent: Agent,
        *,
        name: str | None = None,
        source: str = "given",
        saved: bool = True,
    ) -> None:
        self.agent = agent
        self.name = name
        """``None`` for the default conversation (and a replay's), else the ``--agent`` name."""
        self.key = key_of(name) if name is not None or saved else "replay"
        self.source = source
        """Why its model was chosen (``%agent model`` says)."""
        self.policy: ApprovalPolicy = "none"
        self.budget: float | None = agent.budget
        """USD the whole conversation may spend (``%agent budget``)."""
        self.budget_baseline = 0.0
        """USD of the Agent's ``spent`` the budget does not count: what a conversation resumed
        or loaded from a file had cost before (``%agent resume`` / ``load`` set it, ``%agent
        reset`` clears it)."""
        self.code = code_cell.CodeRecord()
        self.journal: UndoJournal | None = None
        """The undo record of its runs (from its first run, in the run's workspace)."""
        self.saved = saved
        """False for a replay: never saved as the notebook's conversation, never the source of
        ``_agent_reply``."""
        self.last_run: RunSummary | None = None
        self.last_requests: list[SentRequest] = []
        """What each model request of its last run was sent (``%agent context TURN``)."""
        self.saver: Saver | None = None
        """What writes it to its file after each run (from its first run or resume on)."""
        self.panel: AgentPanel | None = None
        """The live panel of the run in progress, if it shows one."""
        self.notebook_context = NotebookContext()
        """What of the notebook its runs have been sent (``--no-context``, ``%agent
        notebook-context``)."""

    def __repr__(self) -> str:
        return f"Conversation({self.key}, {self.agent!r})"

    # -- settings ----------------------------------------------------------------------------

    def set_model(self, model: Model, source: str) -> None:
        self.agent.state.model = model
        self.source = source

    def fresh(self) -> Conversation:
        """``--new``: a new conversation on a new Agent that keeps this one's model, system
        prompt, thinking level, tools and approval policy (not its messages or budget)."""
        old = self.agent.state
        agent = Agent(
            model=old.model,
            system_prompt=old.system_prompt,
            thinking_level=old.thinking_level,
            tools=old.tools,
        )
        made = Conversation(agent, name=self.name, source=self.source, saved=self.saved)
        made.policy = self.policy
        made.notebook_context.enabled = self.notebook_context.enabled
        return made

    @property
    def budget_spent(self) -> float:
        """What the budget counts: the Agent's ``spent`` less :attr:`budget_baseline`."""
        return max(0.0, self.agent.spent - self.budget_baseline)

    def uncounted(self) -> str:
        """What the budget leaves out (a loaded file's cost), as a clause; ``""`` when
        nothing."""
        if self.budget_baseline <= 0:
            return ""
        return f" (plus {format_usd(self.budget_baseline)} from the loaded file, not counted)"

    def _run_budget(self) -> float | None:
        """The run's ``RunConfig.budget``: the Agent compares its whole ``spent`` with it."""
        return None if self.budget is None else self.budget + self.budget_baseline

    def _limit_note(self) -> str | None:
        """The Agent's note on what ended its last run, a conversation budget's in the
        budget's own figures (the Agent's count includes the baseline)."""
        note = self.agent.limit_note
        if note is None or self.budget is None or self.budget_baseline <= 0:
            return note
        if note.startswith("conversation budget of"):
            return budget_note(self.budget, self.budget_spent, scope="conversation")
        return note

    def budget_refusal(self) -> str:
        return (
            f"conversation budget of {format_usd(self.budget or 0.0)} reached: "
            f"{format_usd(self.budget_spent)} spent; "
            "raise it with %agent budget USD or clear it with %agent budget off"
        )

    def check_budget(self, command: str) -> None:
        """A spent budget is a usage error: nothing runs (the prompt stays in the cell)."""
        if self.budget is not None and self.budget_spent >= self.budget:
            raise UsageError(f"{command}: {self.budget_refusal()}")

    def undo_journal(self, namespace: dict[str, Any]) -> UndoJournal:
        """The undo record of its runs: the workspace's record of its Agent, so that the
        tools' own ``undo(conversation=agent)`` finds it too."""
        if self.journal is None:
            self.journal = workspace(namespace).record(self.agent)
        return self.journal

    # -- a run -------------------------------------------------------------------------------

    def _approval(self, panel: AgentPanel | None) -> Callable[..., Any] | None:
        """The run's ``before_tool_call``: the policy's approval hook before the Agent's own."""
        policy = self.policy
        if policy == "none":
            return None
        approver = preferring_programmatic(panel.request_approval if panel is not None else None)
        mode: ApprovalMode = "all" if policy == "all" else "writes"
        return approval_hook(mode, approver, self.agent.before_tool_call)

    async def run(
        self,
        prompt: str | list[AgentMessage],
        options: AgentOptions,
        session: NotebookSession,
        namespace: dict[str, Any],
        show: Callable[[str], None],
        listeners: Sequence[Listener] = (),
        *,
        background: bool = False,
    ) -> RunResult:
        """Run one prompt (after any active run of the Agent) and show its transcript once;
        offer the code the agent ran as the next cell (see :mod:`.code_cell`). ``listeners``
        follow the run after the panel."""
        agent = self.agent
        if agent.is_running:  # a cell queued behind a background run waits for it
            held = self.panel is not None and self.panel.step_held is not None
            if held:  # say so now: nothing moves until someone presses a button
                show(
                    f"waiting for conversation {self.key}, held in step mode: "
                    "press Next / Run to end, or Abort"
                )
            while agent.is_running:
                await agent.wait_for_idle()
        # What ran in the notebook since this conversation's last run goes before the prompt.
        prompt = with_context(
            prompt, self.notebook_context, _shell_or_none(), skip=options.no_context
        )
        log = RunLog()  # counts, lifecycle and coalesced deltas: never an object per token
        start = len(agent.state.messages)
        recorder = code_cell.CodeRecorder(agent, namespace)
        if self.saved:
            self.saver = get_conversations().track(self.key, agent, namespace, _note)
        # Interactive UI: the live panel (plain mode: the transcript printed once, below).
        opened = None if plain_mode(options) else _open_panel(agent, options, namespace)
        panel = self.panel = opened[0] if opened is not None else None
        followers: list[Listener] = [log, recorder, *listeners]
        tools_recorder = record_tools(agent)  # a run on a record() model: its tools go in it
        if tools_recorder is not None:
            followers.append(tools_recorder)
        # Every request is kept for %agent context (and shown / held by the panel first).
        tap = RequestTap(before=panel.before_request if panel is not None else None)
        self.last_requests = tap.requests
        markers: dict[int, list[str]] = {}

        def on_compaction(compaction: Compaction) -> None:
            markers.setdefault(len(agent.state.messages) - start, []).append(compaction.note)

        unsubscribe_compaction = agent.compaction.subscribe(on_compaction)
        end_undo_step = begin_run(namespace, self.undo_journal(namespace))
        reply_limit = output_limit(agent, options.max_tokens)
        if panel is not None:
            panel.set_max_tokens(reply_limit.tokens)
        approval = self._approval(panel)
        config = RunConfig(
            max_turns=options.max_turns,
            max_cost=options.max_cost,
            budget=self._run_budget(),
            max_tokens=run_max_tokens(reply_limit),
            compaction=False if options.no_compact else KEEP,
            before_tool_call=approval if approval is not None else KEEP,
            listeners=followers,
            on_request=tap,
            convert_to_llm=with_notebook_context(agent.convert_to_llm),
        )
        spent_before = agent.spent
        interrupted = False
        refused = None
        try:
            await agent.prompt(prompt, run=config)
            # Interrupt & send: the aborted run has closed; the message is the next prompt, now,
            # in the same panel.
            while panel is not None and (text := panel.take_interrupt()) is not None:
                tap.next_prompt()
                await agent.prompt(text, run=config)
        except BudgetExceededError:  # spent while this cell waited behind another run
            refused = self.budget_refusal()
        except asyncio.CancelledError:
            interrupted = True
            raise
        finally:
            self.panel = None
            unsubscribe_compaction()
            end_undo_step()
            limit = None if interrupted else refused or self._limit_note()
            new_messages = agent.state.messages[start:]
            summary = self._summary(options, new_messages, spent_before, interrupted, refused)
            self.last_run = summary
            session.last_run = log
            reply = final_text(new_messages)
            if self.saved:  # a replay's reply is the recording's, not this notebook's
                session.last_reply = reply
                namespace[REPLY_VARIABLE] = reply
            hint = missing_replies_hint(new_messages)  # a scripted cell run on its own
            if opened is None:  # plain mode: the final transcript, printed once
                text = render_transcript(new_messages, markers, context=True)
                line = INTERRUPTED if interrupted else f"[{limit}]" if limit else None
                for extra in (line, f"[{hint}]" if hint else None):
                    if extra is not None:
                        text = f"{text}\n{extra}" if text else extra
                show(text)
            else:
                await _close_panel(agent, *opened, interrupted, limit)
                if hint is not None:
                    print(f"[{hint}]")
            off = code_cell.off_reason(
                no_code_cell=options.no_code_cell, plain=opened is None, background=background
            )
            code_cell.finish_run(_shell_or_none(), self.code, recorder, off)
        if refused is not None:
            raise UsageError(f"%%agent: {refused}")
        check_replay(new_messages)  # a replay that diverged from its recording fails the cell
        return RunResult(new_messages, reply, log, summary, interrupted, limit)

    def _summary(
        self,
        options: AgentOptions,
        messages: list[AgentMessage],
        spent_before: float,
        interrupted: bool,
        refused: str | None,
    ) -> RunSummary:
        turns = sum(1 for m in messages if isinstance(m, AssistantMessage))
        limits = []
        if options.max_turns is not None:
            limits.append(f"--max-turns {options.max_turns}")
        if options.max_cost is not None:
            limits.append(f"--max-cost {format_usd(options.max_cost)}")
        if self.budget is not None:
            limits.append(f"conversation budget {format_usd(self.budget)}")
        note = self._limit_note()
        stopped: str | None = None
        if interrupted:
            stopped = "interrupted"
        elif refused is not None:
            stopped = f"refused: {refused}"
        elif note is not None:
            stopped = _stopped_by(note, options, turns, self.agent.spent - spent_before)
        return RunSummary(turns, limits, stopped)


def _stopped_by(note: str, options: AgentOptions, turns: int, run_spent: float) -> str:
    """The Agent's limit note in the words of the option that set the limit."""
    if note.startswith("turn limit") and options.max_turns is not None:
        return f"stopped by --max-turns {options.max_turns}: {turns} turns run"
    if note.startswith("budget of") and options.max_cost is not None:
        return f"stopped by --max-cost {format_usd(options.max_cost)}: ${run_spent:.4f} spent"
    return f"stopped by the {note}"


def _note(text: str) -> None:
    print(text)


def _shell_or_none() -> Any:
    from IPython import get_ipython

    return get_ipython()


def _open_panel(
    agent: Agent, options: AgentOptions, namespace: dict[str, Any]
) -> tuple[AgentPanel, Any]:
    """Display a live :class:`AgentPanel` following ``agent``; (panel, display handle)."""
    from IPython.display import display

    from .panel import AgentPanel

    panel = AgentPanel(step=options.step or False)
    panel.attach(agent)
    namespace[PANEL_VARIABLE] = panel
    handle = display(panel, display_id=True)  # type: ignore[no-untyped-call]
    return panel, handle


async def _close_panel(
    agent: Agent, panel: AgentPanel, handle: Any, interrupted: bool, limit: str | None
) -> None:
    """End of run: the unsent draft in the panel's box becomes a follow-up the next cell
    delivers, the last frame goes out (with a note: interrupted, or the limit that stopped the
    run, which the plain text ends with too, as in plain mode), then the output becomes the
    static transcript (no widget view left, so a saved notebook reads everywhere) and the
    widget is closed (no comm or state kept alive per finished cell)."""
    from IPython.display import DisplayHandle

    # An interrupted (cancelled) cell must not wait: it keeps the draft the view last sent.
    draft = panel.take_draft() if interrupted else await panel.collect_draft()
    notes = ["interrupted"] if interrupted else [limit] if limit else []
    if draft:
        agent.follow_up(draft)
        notes.append("your unsent text is queued as a follow-up for the next %%agent cell")
    panel.refresh_queue()  # what the run left queued (the static transcript lists it)
    note = "; ".join(notes) or None
    if not isinstance(handle, DisplayHandle):  # nowhere to put the transcript: stay live
        panel.finish(note=note)
        return
    panel.finish(note=note, sync=False)
    bundle = panel.static_bundle()
    if limit:  # the line plain mode prints
        bundle["text/plain"] += f"\n[{limit}]"
    handle.update(bundle, raw=True)  # type: ignore[no-untyped-call]
    panel.close()


__all__ = [
    "DEFAULT",
    "INTERRUPTED",
    "PANEL_VARIABLE",
    "REPLY_VARIABLE",
    "Conversation",
    "RunResult",
    "RunSummary",
    "key_of",
    "plain_mode",
]
