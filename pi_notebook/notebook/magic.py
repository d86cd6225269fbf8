"""The ``%%agent`` cell magic, the ``%agent`` line commands and the input transformer.

``load_ipython_extension`` registers the magics and a cleanup-stage input transformer that
rewrites a cell starting with ``%%agent`` into a top-level ``await`` of :func:`run_cell`, so
ipykernel runs the agent as a coroutine on its own event loop (autoawait): widget and comm
messages keep flowing during the run, the cell stays busy until the run ends, and a kernel
interrupt cancels the run's task (the agent aborts, closes its events and re-raises). The plain
cell magic is the fallback where there is no autoawait: ``asyncio.run`` when no loop is
running, otherwise a background run. Before ipykernel 7.4, which reads widget messages only
between cells, a run that shows the panel goes to the background too (see ``run_mode``).

This module must never use nest_asyncio or block the kernel's loop, never turn a cancellation
into KeyboardInterrupt, and never print an API key or a traceback wall for a user mistake
(usage and model errors are ``UsageError``: one readable line).
"""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
from argparse import ArgumentTypeError
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from ..agent import Agent, AgentBusyError, AgentTool, BudgetExceededError, Compaction, format_usd
from ..ai import AgentMessage, AssistantMessage, redact
from ..ai.replay import ReplayDivergence, check_replay, forget
from ..settings import UI, status_lines
from ..tools import (
    BUILTIN_COLLECTIONS,
    ApprovalMode,
    ToolNameClash,
    approval_hook,
    begin_run,
    builtin_tools,
    cell_log,
    close_mcp_servers_soon,
    mcp_status_lines,
    preferring_programmatic,
    refresh_tools,
    tool_source,
    unique_tools,
)
from ..tools import undo as undo_tools
from . import code_cell
from .context_view import (
    PURPOSE_WORDS,
    RequestTap,
    context_json,
    context_text,
    turn_count,
    turn_request,
)
from .conversation_settings import (
    POLICY_TEXT,
    approval_policy,
    as_policy,
    notebook_context,
    notebook_context_text,
    set_approval_policy,
    tools_text,
)
from .conversations import ConversationError, get_conversations, key_of
from .expansion import ExpansionError, expand
from .limits import apply_limit, output_limit
from .models import ModelError, model_from_name
from .notebook_context import with_context, with_notebook_context
from .options import (
    AgentOptions,
    OptionsError,
    format_help,
    magic_doc,
    parse_options,
    parse_replay_options,
    positive_usd,
)
from .render import final_text, render_transcript
from .replay_run import ReplayDriver, ReplayError, plan_replay, record_tools
from .run_log import RunLog
from .run_mode import run_mode
from .session import NotebookSession, get_session
from .system_prompt import DEFAULT_SYSTEM_PROMPT, system_prompt_line

if TYPE_CHECKING:
    from .panel import AgentPanel

REPLY_VARIABLE = "_agent_reply"
PANEL_VARIABLE = "_agent_panel"
INTERRUPTED = "[interrupted: the run was cancelled and aborted; the conversation stays usable]"
LINE_COMMANDS = (
    "reset",
    "steer",
    "followup",
    "abort",
    "status",
    "history",
    "events",
    "model",
    "last",
    "undo",
    "budget",
    "compact",
    "context",
    "notebook-context",
    "replay",
    "code",
    "resume",
    "save",
    "load",
    "help",
)


def _shell() -> InteractiveShell:
    from IPython import get_ipython

    ip = get_ipython()
    if ip is None:
        raise RuntimeError("pi_notebook.notebook needs a running IPython shell")
    shell: InteractiveShell = ip
    return shell


def _shell_or_none() -> InteractiveShell | None:
    from IPython import get_ipython

    shell: InteractiveShell | None = get_ipython()
    return shell


def _expanded(text: str, namespace: dict[str, Any], command: str) -> str:
    """:func:`expand`, a failure as a one-line ``UsageError`` naming the expression."""
    try:
        return expand(text, namespace)
    except ExpansionError as exc:
        raise UsageError(f"{command}: {exc}") from None


def plain_mode(options: AgentOptions) -> bool:
    return options.plain or UI.value() == "plain"


# -- choosing the agent ------------------------------------------------------------------------


def _resolve_tools(names: list[str], namespace: dict[str, Any]) -> list[AgentTool]:
    """Tools by name: the notebook's own variables first, then the built-in collections."""
    tools: list[tuple[AgentTool, str]] = []
    for name in names:
        value = namespace.get(name) if name.isidentifier() else None
        builtin = None if value is not None else builtin_tools(name, namespace)
        if isinstance(value, AgentTool):
            tools.append((value, tool_source(value, f"variable {name!r}")))
        elif (
            isinstance(value, list | tuple)
            and value
            and all(isinstance(t, AgentTool) for t in value)
        ):
            tools.extend((t, tool_source(t, f"variable {name!r}")) for t in value)
        elif builtin is not None:
            tools.extend((t, tool_source(t)) for t in builtin)
        else:
            raise UsageError(
                f"%%agent: unknown tool {name!r}: expected the name of an AgentTool "
                "(or a list of them) in the notebook namespace, or a built-in collection "
                f"({', '.join(BUILTIN_COLLECTIONS)}) or one of its tools"
            )
    try:  # one tool per name; of one source (a @tool defined again) the later one wins
        return unique_tools(tools)
    except ToolNameClash as exc:
        raise UsageError(f"%%agent: {exc}") from None


def _prepare_agent(
    session: NotebookSession, options: AgentOptions, namespace: dict[str, Any]
) -> Agent:
    try:
        if options.agent is not None:
            if not options.agent.isidentifier():
                raise UsageError(f"%%agent: --agent needs a variable name, got {options.agent!r}")
            existing = namespace.get(options.agent)
            if isinstance(existing, Agent) and not options.new:
                agent = existing
            elif existing is not None and not isinstance(existing, Agent):
                raise UsageError(
                    f"%%agent: {options.agent!r} is a {type(existing).__name__}, not an Agent"
                )
            else:
                agent = Agent(system_prompt=DEFAULT_SYSTEM_PROMPT)
                namespace[options.agent] = agent
        else:
            agent = session.default_agent(namespace)
            if options.new:
                if agent.is_running:
                    raise UsageError("%%agent: --new while a run is active; %agent abort first")
                agent = session.new_default(namespace)
        if options.model is not None:
            session.set_model(agent, model_from_name(options.model, namespace), "--model")
        else:
            session.ensure_usable(agent, namespace)
    except ModelError as exc:
        raise UsageError(f"%%agent: {exc}") from None
    if options.system is not None:
        agent.state.system_prompt = options.system
    if options.thinking is not None:
        agent.state.thinking_level = options.thinking  # type: ignore[assignment]
    if options.no_tools:
        agent.state.tools = []
    elif options.tools:  # exactly these, from now on
        agent.state.tools = _resolve_tools(options.tools, namespace)
    else:  # re-running the cell that defines a @tool replaces it
        agent.state.tools = refresh_tools(agent.state.tools)
    if options.approve is not None:  # the conversation's policy from now on
        set_approval_policy(agent, as_policy(options.approve))
    session.current = agent
    return agent


# -- running -----------------------------------------------------------------------------------


def _check_budget(agent: Agent, command: str) -> None:
    """A spent conversation budget is a usage error: nothing runs (the prompt stays in the
    cell), and the message says how to go on."""
    if agent.budget is not None and agent.spent >= agent.budget:
        raise UsageError(f"{command}: {_budget_refusal(agent)}")


def _budget_refusal(agent: Agent) -> str:
    budget = format_usd(agent.budget or 0.0)
    return (
        f"conversation budget of {budget} reached: {format_usd(agent.spent)} spent; "
        "raise it with %agent budget USD or clear it with %agent budget off"
    )


def _install_tool_hooks(
    agent: Agent, options: AgentOptions, namespace: dict[str, Any], panel: AgentPanel | None
) -> Callable[[], None]:
    """Start this run's undo step (in the agent's own undo record) and install the
    conversation's approval policy for the run; returns what ends both."""
    end_undo_step = begin_run(namespace, agent)
    policy = approval_policy(agent)
    if policy == "none":
        return end_undo_step
    previous = agent.before_tool_call
    approver = preferring_programmatic(panel.request_approval if panel is not None else None)
    mode: ApprovalMode = "all" if policy == "all" else "writes"
    agent.before_tool_call = approval_hook(mode, approver, previous)

    def restore() -> None:
        agent.before_tool_call = previous
        end_undo_step()

    return restore


async def execute(
    agent: Agent,
    prompt: str | list[AgentMessage],
    options: AgentOptions,
    session: NotebookSession,
    namespace: dict[str, Any],
    show: Callable[[str], None],
    listeners: Sequence[Callable[[Any], Any]] = (),
    *,
    background: bool = False,
    saved: bool = True,
) -> None:
    """Run one prompt (after any active run of ``agent``) and show its transcript once; offer
    the code the agent ran as the next cell (see :mod:`.code_cell`). ``listeners`` follow the
    run after the panel; ``saved`` False keeps the conversation out of the saved files (a
    replay: it is the recording's run, not this notebook's conversation)."""
    while agent.is_running:  # a cell queued behind a background run waits for it
        await agent.wait_for_idle()
    # What ran in the notebook since this conversation's last run goes before the prompt.
    prompt = with_context(
        prompt, notebook_context(agent), _shell_or_none(), skip=options.no_context
    )
    agent.convert_to_llm = with_notebook_context(agent.convert_to_llm)
    log = RunLog()  # counts, lifecycle and coalesced deltas: never an object per token
    start = len(agent.state.messages)
    recorder = code_cell.CodeRecorder(agent, namespace)
    unsubscribers = [agent.subscribe(log), agent.subscribe(recorder)]
    if saved:
        get_conversations().track(key_of(options.agent), agent, namespace, _note)  # at ends
    # Interactive UI: the live panel (plain mode: the transcript printed once, below).
    opened = None if plain_mode(options) else _open_panel(agent, options, namespace)
    panel = opened[0] if opened is not None else None
    tools_recorder = record_tools(agent)  # a run on a record() model: its tools go in the file
    followers: list[Callable[[Any], Any]] = list(listeners)
    if tools_recorder is not None:
        followers.append(tools_recorder)
    for listener in followers:
        unsubscribers.append(agent.subscribe(listener))
    # Every request is kept for %agent context (and shown / held by the panel first).
    tap = RequestTap(before=panel.before_request if panel is not None else None)
    session.last_requests = tap.requests
    restore_stream = tap.install(agent)
    previous_limits = agent.max_turns, agent.max_cost, agent.compaction.enabled
    agent.max_turns, agent.max_cost = options.max_turns, options.max_cost  # this run's
    if options.no_compact:
        agent.compaction.enabled = False
    markers: dict[int, list[str]] = {}

    def on_compaction(compaction: Compaction) -> None:
        markers.setdefault(len(agent.state.messages) - start, []).append(compaction.note)

    unsubscribe_compaction = agent.compaction.subscribe(on_compaction)
    restore_tool_hooks = _install_tool_hooks(agent, options, namespace, panel)
    reply_limit = output_limit(agent, options.max_tokens)
    restore_limit = apply_limit(agent, reply_limit)
    if panel is not None:
        panel.set_max_tokens(reply_limit.tokens)
    interrupted = False
    refused = None
    try:
        await agent.prompt(prompt)
        # Interrupt & send: the aborted run has closed; the message is the next prompt, now,
        # in the same panel.
        while panel is not None and (text := panel.take_interrupt()) is not None:
            await agent.prompt(text)
    except BudgetExceededError:  # spent while this cell waited behind another run
        refused = _budget_refusal(agent)
    except asyncio.CancelledError:
        interrupted = True
        raise
    finally:
        for unsubscribe in unsubscribers:
            unsubscribe()
        unsubscribe_compaction()
        restore_stream()
        agent.max_turns, agent.max_cost, agent.compaction.enabled = previous_limits
        restore_tool_hooks()
        restore_limit()
        limit = None if interrupted else refused or agent.limit_note
        new_messages = agent.state.messages[start:]
        session.last_run = log
        session.last_reply = final_text(new_messages)
        namespace[REPLY_VARIABLE] = session.last_reply
        if opened is None:  # plain mode: the final transcript, printed once
            text = render_transcript(new_messages, markers)
            line = INTERRUPTED if interrupted else f"[{limit}]" if limit else None
            if line is not None:
                text = f"{text}\n{line}" if text else line
            show(text)
        else:
            await _close_panel(agent, *opened, interrupted, limit)
        off = code_cell.off_reason(
            no_code_cell=options.no_code_cell, plain=opened is None, background=background
        )
        code_cell.finish_run(_shell_or_none(), agent, recorder, off)
    if refused is not None:
        raise UsageError(f"%%agent: {refused}")
    check_replay(new_messages)  # a replay that diverged from its recording fails the cell


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


@dataclass
class PreparedCell:
    agent: Agent
    prompt: str | list[AgentMessage]
    options: AgentOptions
    session: NotebookSession
    namespace: dict[str, Any]
    listeners: list[Callable[[Any], Any]] = field(default_factory=list)
    after: Callable[[bool], None] | None = None
    """Called when the run is over (True when it completed without an exception)."""
    saved: bool = True
    """False for a replay: its run is not saved as this notebook's conversation."""


async def run_prepared(
    p: PreparedCell, show: Callable[[str], None], *, background: bool = False
) -> None:
    ok = False
    try:
        await execute(
            p.agent,
            p.prompt,
            p.options,
            p.session,
            p.namespace,
            show,
            p.listeners,
            background=background,
            saved=p.saved,
        )
        ok = True
    finally:
        if p.after is not None:
            p.after(ok)


def prepare_cell(line: str, cell: str) -> PreparedCell | None:
    """Parse, expand and pick the agent (synchronously); None when only ``--help`` was asked.

    Raises ``UsageError`` for bad options, an empty prompt, or an unusable model: nothing runs.
    """
    ip = _shell()
    try:
        options = parse_options(line)
    except OptionsError as exc:
        if exc.is_help:
            print(str(exc), end="")
            return None
        raise UsageError(str(exc)) from None
    namespace: dict[str, Any] = ip.user_ns
    prompt = _expanded(cell, namespace, "%%agent").strip()
    if not prompt:
        raise UsageError("%%agent: empty prompt: write it in the cell body, under the %%agent line")
    session = get_session()
    agent = _prepare_agent(session, options, namespace)
    if not agent.is_running:  # a cell queued behind a run is checked when it starts
        _check_budget(agent, "%%agent")
    if options.step and plain_mode(options):
        print("(--step needs the panel: plain mode runs without pauses)")
    return PreparedCell(agent, prompt, options, session, namespace)


async def run_cell(line: str, cell: str) -> None:
    """The ``%%agent`` runner (what the input transformer awaits)."""
    prepared = prepare_cell(line, cell)
    if prepared is None:
        return
    if prepared.options.background:
        _launch_background(prepared, forced=False)
        return
    mode = run_mode(_shell(), plain=plain_mode(prepared.options))
    if not mode.awaits:  # this ipykernel cannot deliver the panel's messages during a cell
        _launch_background(prepared, forced=True, note=mode.note)
        return
    await run_prepared(prepared, _print)


# -- replay ------------------------------------------------------------------------------------


def prepare_replay(line: str) -> PreparedCell:
    """``%agent replay PATH ...``: a fresh agent on the recording's replay model, its stand-in
    tools and driver; it becomes the target of the line commands. Raises ``UsageError``."""
    ip = _shell()
    try:
        options = parse_replay_options(line)
    except OptionsError as exc:
        raise UsageError(str(exc)) from None
    path = str(options.model)
    options.model = None
    try:
        plan = plan_replay(path)
    except ReplayError as exc:
        raise UsageError(f"%agent replay: {exc}") from None
    session = get_session()
    agent = Agent(
        model=plan.model,
        system_prompt=plan.system_prompt,
        tools=plan.tools,
        messages=plan.history,
    )
    session.model_source[id(agent)] = f"replay of {plan.path.name}"
    session.current = agent
    driver = ReplayDriver(plan, agent)
    driver.install()
    if options.step and plain_mode(options):
        print("(--step needs the panel: plain mode runs without pauses)")

    def after(ok: bool) -> None:
        driver.uninstall()
        remaining = plan.player.remaining
        forget(plan.model)
        last = agent.state.messages[-1] if agent.state.messages else None
        if ok and remaining and getattr(last, "stop_reason", None) != "aborted":
            raise ReplayDivergence(
                f"replay of {plan.path.name}: {remaining} recorded call(s) were never requested"
            )

    return PreparedCell(
        agent, plan.prompts, options, session, ip.user_ns, [driver], after, saved=False
    )


async def run_replay(line: str) -> None:
    """The awaited ``%agent replay`` (what the input transformer rewrites the line into)."""
    prepared = prepare_replay(line)
    mode = run_mode(_shell(), plain=plain_mode(prepared.options))
    if not mode.awaits:
        _launch_background(prepared, forced=True, note=mode.note)
        return
    await run_prepared(prepared, _print)


def _note(text: str) -> None:
    print(text)


def _print(text: str) -> None:
    if text:
        print(text)
    sys.stdout.flush()


def _launch_background(p: PreparedCell, *, forced: bool, note: str | None = None) -> None:
    from IPython.display import DisplayHandle, display

    if forced:
        note = note or "autoawait is off, so this cell cannot wait for the run"
    note = "running in the background" + (f" ({note})" if note else "")
    handle = display(  # type: ignore[no-untyped-call]
        {"text/plain": f"[{note}; %agent status / steer / abort work meanwhile]"},
        raw=True,
        display_id=True,
    )

    def show(text: str) -> None:
        if isinstance(handle, DisplayHandle):
            handle.update({"text/plain": text or "[no output]"}, raw=True)  # type: ignore[no-untyped-call]

    async def run() -> None:
        try:
            await run_prepared(p, show, background=True)
        except asyncio.CancelledError:
            pass

    p.session.background = asyncio.ensure_future(run())


async def wait() -> None:
    """Wait for the background run (``await pi_notebook.notebook.wait()`` in a cell)."""
    task = get_session().background
    if task is not None:
        await asyncio.shield(task)


# -- line commands -------------------------------------------------------------------------------


def _status(session: NotebookSession, agent: Agent) -> str:
    from IPython import get_ipython

    model = agent.state.model
    assistants = [m for m in agent.state.messages if isinstance(m, AssistantMessage)]
    tokens_in = sum(m.usage.input + m.usage.cache_read + m.usage.cache_write for m in assistants)
    tokens_out = sum(m.usage.output for m in assistants)
    cost = f"cost: ${agent.spent:.4f}"
    compactor = agent.compaction
    context = []  # only once there is something to say (a summary, or compaction off)
    if compactor.compacted or not compactor.enabled:
        line = f"context: about {compactor.estimate(agent.state.messages)} tokens"
        if model.context_window:
            line += f" of {model.context_window}"
        if compactor.compacted:
            line += f", the first {compactor.compacted} messages as a summary"
        if not compactor.enabled:
            line += " (compaction off)"
        context.append(line)
    if agent.budget is not None:
        cost += f" spent / {format_usd(agent.budget)} budget"
    text = "\n".join(
        [
            f"model: {model.provider}/{model.id} (from {session.source_of(agent)})",
            f"running: {'yes' if agent.is_running else 'no'}",
            f"messages: {len(agent.state.messages)}, turns: {len(assistants)}",
            f"tokens: {tokens_in} in, {tokens_out} out",
            cost,
            *context,
            system_prompt_line(agent.state.system_prompt),
            f"tools: {tools_text(agent.state.tools)}",
            notebook_context_text(agent),
            f"output limit: {output_limit(agent).text()}",
            f"approvals: {POLICY_TEXT[approval_policy(agent)]}",
            f"queued: {len(agent.steering_queue)} steering, {len(agent.follow_up_queue)} follow-up",
            *_queued_lines(agent),
            f"run mode: {run_mode(get_ipython(), plain=plain_mode(AgentOptions())).why}",
            *mcp_status_lines(),
            *status_lines(),
        ]
    )
    return redact(text)


def _queued_lines(agent: Agent) -> list[str]:
    """Each queued message and where it will land (the next %%agent cell delivers them)."""
    lines = [f"  steer: {_one_line(m)}" for m in agent.steering_queue]
    lines += [f"  follow-up: {_one_line(m)}" for m in agent.follow_up_queue]
    if lines and not agent.is_running:
        lines.append(
            "  (the next %%agent cell delivers them: steering with its prompt, follow-ups "
            "after its answer; %agent reset drops them)"
        )
    return lines


def _one_line(message: Any, limit: int = 80) -> str:
    content = getattr(message, "content", "")
    if not isinstance(content, str):
        content = " ".join(getattr(b, "text", "") for b in content if b.type == "text")
    text = " ".join(content.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _context(session: NotebookSession, rest: str) -> str:
    """``%agent context [TURN] [--json]``: what the last run's request of that turn sent."""
    words = rest.split()
    as_json = "--json" in words
    numbers = [w for w in words if w != "--json"]
    requests = session.last_requests
    if not requests:
        raise UsageError("%agent context: the last run made no model request")
    if len(numbers) > 1 or (numbers and not numbers[0].isdigit()):
        raise UsageError(f"%agent context: expected a turn number, got {rest!r}")
    turns = turn_count(requests)
    turn = int(numbers[0]) if numbers else max(r.turn for r in requests)
    request = turn_request(requests, turn)
    if request is None:
        which = f"{turns} turns (1 to {turns})" if turns != 1 else "1 turn"
        raise UsageError(f"%agent context: turn {turn}: the last run had {which}")
    if as_json:
        return context_json(request)
    others = [r for r in requests if r.turn == turn and r is not request]
    text = context_text(request)
    if others:  # a compaction summary, or the refused request a retry replaced
        also = "; ".join(
            PURPOSE_WORDS.get(r.purpose, "a request refused for context overflow") for r in others
        )
        text += f"\n(turn {turn} also sent: {also})"
    return text


def line_command(line: str) -> Any:
    """``%agent COMMAND [TEXT]``; returns a value only for ``events`` and ``last``."""
    ip = _shell()
    namespace: dict[str, Any] = ip.user_ns
    command, _, rest = line.strip().partition(" ")
    rest = rest.strip()
    session = get_session()
    if command in ("", "help", "-h", "--help"):
        print(format_help(), end="")
        return None
    if command not in LINE_COMMANDS:
        raise UsageError(
            f"%agent: unknown command {command!r}; expected one of: {', '.join(LINE_COMMANDS)}"
        )
    if command == "last":
        return redact(session.last_reply)
    if command == "events":
        return session.last_events
    if command == "context":
        print(_context(session, rest))
        return None
    if command == "replay":
        prepared = prepare_replay(rest)
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # plain IPython without autoawait: no loop to share, so block
            asyncio.run(run_prepared(prepared, _print))
            return None
        _launch_background(prepared, forced=True)
        return None
    if command == "undo":  # the undo record of the last %%agent cell's conversation
        if session.current is not None and session.current.is_running:
            raise UsageError("%agent undo: a run is active; %agent abort first")
        report = undo_tools(namespace, session.current)
        left = bool(report.kept or report.not_restored)
        code_cell.after_undo(session.current, report.restored, report.removed, left)
        print(report.text())
        return None
    if command == "code":  # the last run's code: printed, or offered as the next cell
        agent_or_none = session.current if session.current is not None else session.default
        try:
            text = code_cell.code_command(ip, agent_or_none, rest)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if text:
            print(text, end="" if text.endswith("\n") else "\n")
        return None
    if command in ("resume", "save", "load"):
        return _conversation_command(command, rest, session, namespace)
    try:
        agent = session.target(namespace)
    except ModelError as exc:
        raise UsageError(f"%agent: {exc}") from None
    if command == "reset":
        if rest not in ("", "--mcp"):
            raise UsageError(f"%agent reset: unknown option {rest!r}; expected --mcp or nothing")
        if agent.is_running:
            raise UsageError("%agent reset: a run is active; %agent abort first")
        agent.reset()
        notebook_context(agent).forget()
        session.last_run = None
        session.last_requests = []
        print("conversation reset")
        if rest == "--mcp":
            closing = close_mcp_servers_soon()
            print(f"closing {closing} MCP server connection(s); they reconnect on the next call")
    elif command in ("steer", "followup"):
        text = _expanded(rest, namespace, f"%agent {command}")
        if not text:
            raise UsageError(f"%agent {command}: needs TEXT")
        if command == "steer":
            agent.steer(text)
            print("steering message queued (delivered before the next model call)")
        else:
            agent.follow_up(text)
            print("follow-up queued (delivered when the agent would otherwise stop)")
    elif command == "abort":
        if agent.is_running:
            agent.abort()
            print("abort requested")
        else:
            print("no run is active")
    elif command == "status":
        print(_status(session, agent))
    elif command == "notebook-context":
        _notebook_context_command(agent, rest)
    elif command == "history":
        print(render_transcript(agent.state.messages))
    elif command == "budget":
        _budget_command(agent, rest)
    elif command == "compact":
        _compact_command(agent, rest)
    elif command == "model":
        if rest:
            try:
                session.set_model(agent, model_from_name(rest, namespace), "%agent model")
            except ModelError as exc:
                raise UsageError(f"%agent model: {exc}") from None
        model = agent.state.model
        print(f"model: {model.provider}/{model.id} (from {session.source_of(agent)})")
    return None


def _notebook_context_command(agent: Agent, rest: str) -> None:
    """``%agent notebook-context [on|off]``: show or set whether the conversation's runs send
    the cells run since its last run (``--no-context`` leaves them out for one cell)."""
    word = rest.lower()
    if word not in ("", "on", "off"):
        raise UsageError(f"%agent notebook-context: expected on or off, got {rest!r}")
    if word:
        notebook_context(agent).enabled = word == "on"  # over PI_NOTEBOOK_CONTEXT
    print(notebook_context_text(agent))


def _budget_command(agent: Agent, rest: str) -> None:
    """``%agent budget`` shows the budget, ``%agent budget USD`` sets it, ``off`` clears it."""
    if rest.lower() in ("off", "none"):
        agent.budget = None
    elif rest:
        try:
            agent.budget = positive_usd(rest)
        except ArgumentTypeError as exc:
            raise UsageError(f"%agent budget: {exc}, or 'off'") from None
    budget = "off" if agent.budget is None else format_usd(agent.budget)
    print(f"conversation budget: {budget}, spent: {format_usd(agent.spent)}")


def _compact_command(agent: Agent, rest: str) -> None:
    """``%agent compact`` outside the input transformer (autoawait off): block where no loop
    runs, else say how to run it."""
    if rest:
        raise UsageError(f"%agent compact: takes no argument, got {rest!r}")
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(compact_now(agent))
        return
    raise UsageError("%agent compact: needs autoawait (%autoawait on), to wait for the model")


async def compact_now(agent: Agent | None = None) -> None:
    """``%agent compact``: summarise the older messages of the conversation now (what the
    input transformer awaits)."""
    if agent is None:
        try:
            agent = get_session().target(_shell().user_ns)
        except ModelError as exc:
            raise UsageError(f"%agent: {exc}") from None
    try:
        done = await agent.compact()
    except AgentBusyError:
        raise UsageError("%agent compact: a run is active; %agent abort first") from None
    if done is not None:
        print(f"{done.note}: about {done.tokens_before} -> {done.tokens_after} tokens")
    elif agent.compaction.last_failure is not None:
        failure = agent.compaction.last_failure
        print(redact(f"compaction failed: {failure.error_message or failure.stop_reason}"))
        agent.compaction.last_failure = None
    else:
        print("nothing to compact: the conversation is only its last turn")


def _conversation_command(
    command: str, rest: str, session: NotebookSession, namespace: dict[str, Any]
) -> None:
    """``%agent resume [NAME]`` / ``save PATH`` / ``load PATH`` (see :mod:`.conversations`)."""
    conversations = get_conversations()
    try:
        args = shlex.split(rest)
    except ValueError as exc:
        raise UsageError(f"%agent {command}: {exc}") from None
    try:
        if command == "resume":
            if len(args) > 1 or (args and not args[0].isidentifier()):
                raise UsageError("%agent resume: usage: %agent resume [NAME]")
            name = args[0] if args and args[0] != "default" else None
            agent = _conversation_agent(session, namespace, name)
            if agent.is_running:
                raise UsageError("%agent resume: a run is active; %agent abort first")
            print(conversations.resume(key_of(name), agent, session, namespace, _note))
            session.current = agent
            return
        if len(args) != 1:
            raise UsageError(f"%agent {command}: usage: %agent {command} PATH")
        path = Path(args[0]).expanduser()
        agent = session.target(namespace)
        if command == "save":
            key = conversations.key_of_agent(agent) or key_of(None)
            count = conversations.save_to(path, agent, key, namespace)
            print(f"saved {count} message{'' if count == 1 else 's'} to {path}")
            return
        if agent.is_running:
            raise UsageError("%agent load: a run is active; %agent abort first")
        print(conversations.load(path, agent, session, namespace))
    except (ConversationError, ModelError) as exc:
        raise UsageError(str(exc)) from None


def _conversation_agent(
    session: NotebookSession, namespace: dict[str, Any], name: str | None
) -> Agent:
    """The agent ``%agent resume [NAME]`` restores into (created as ``--agent NAME`` would)."""
    if name is None:
        return session.default_agent(namespace)
    existing = namespace.get(name)
    if isinstance(existing, Agent):
        return existing
    if existing is not None:
        raise UsageError(f"%agent resume: {name!r} is a {type(existing).__name__}, not an Agent")
    agent = Agent()
    namespace[name] = agent
    return agent


# -- IPython wiring ------------------------------------------------------------------------------


@magics_class
class AgentMagics(Magics):
    @no_var_expand  # the magic expands {expr} itself, once (IPython's pass would run it twice)
    @line_cell_magic
    def agent(self, line: str, cell: str | None = None) -> Any:
        """%agent COMMAND (see ``%agent help``) or %%agent [options] + prompt in the body."""
        if cell is None:
            return line_command(line)
        # Fallback: the input transformer did not apply (autoawait off, or called directly).
        p = prepare_cell(line, cell)
        if p is None:
            return None
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # plain IPython without autoawait: no loop to share, so block
            asyncio.run(execute(p.agent, p.prompt, p.options, p.session, p.namespace, _print))
            return None
        _launch_background(p, forced=True)  # a loop runs but this cell cannot await it
        return None


# ``%%agent?`` and Shift-Tab show the magic's docstring: make it the full option list.
AgentMagics.agent.__doc__ = magic_doc()


def transform_agent_cell(lines: list[str]) -> list[str]:
    """Cleanup-stage transformer: ``%%agent ...`` cell -> ``await run_cell(line, body)``."""
    if not lines:
        return lines
    first = lines[0]
    if not first.startswith("%%agent") or (len(first) > 7 and not first[7].isspace()):
        return _transform_compact_lines(lines)
    from IPython import get_ipython

    ip = get_ipython()
    if ip is None or not getattr(ip, "autoawait", False):
        return lines
    line = first[len("%%agent") :].strip()
    body = "".join(lines[1:])
    call = f"__import__('pi_notebook.notebook.magic', fromlist=['_']).run_cell({line!r}, {body!r})"
    return [f"await {call}\n"]


def transform_replay_lines(lines: list[str]) -> list[str]:
    """Cleanup-stage transformer: a top-level ``%agent replay ...`` line -> ``await
    run_replay(...)``, so the cell waits for the replayed run like an ``%%agent`` cell."""
    if not any(line.startswith("%agent replay") for line in lines):
        return lines
    from IPython import get_ipython

    ip = get_ipython()
    if ip is None or not getattr(ip, "autoawait", False):
        return lines
    out = []
    for line in lines:
        head, _, rest = line.partition("%agent replay")
        if head == "" and (not rest or rest[0].isspace()):
            call = "__import__('pi_notebook.notebook.magic', fromlist=['_'])"
            line = f"await {call}.run_replay({rest.strip()!r})\n"
        out.append(line)
    return out


_COMPACT_LINE = re.compile(r"%agent[ \t]+compact[ \t]*(?:#.*)?\n?")


def _transform_compact_lines(lines: list[str]) -> list[str]:
    """``%agent compact`` on a line of its own -> an ``await`` of :func:`compact_now`, so the
    cell waits for the summary request on the kernel's loop (autoawait)."""
    if not any(_COMPACT_LINE.fullmatch(line) for line in lines):
        return lines
    from IPython import get_ipython

    ip = get_ipython()
    if ip is None or not getattr(ip, "autoawait", False):
        return lines
    call = "await __import__('pi_notebook.notebook.magic', fromlist=['_']).compact_now()\n"
    return [call if _COMPACT_LINE.fullmatch(line) else line for line in lines]


def load_ipython_extension(ip: InteractiveShell) -> None:
    from . import interrupts

    ip.register_magics(AgentMagics)
    cell_log().install(ip)  # each failing cell's error, for the notebook context
    interrupts.install()  # the stop button reaches a run that awaits a worker thread at once
    cleanup = ip.input_transformers_cleanup
    for transform in (transform_agent_cell, transform_replay_lines):
        if transform not in cleanup:
            cleanup.append(transform)
    saved = get_conversations().summary(ip.user_ns)  # after a restart: what %agent resume has
    if saved is not None:
        print(saved)


def unload_ipython_extension(ip: InteractiveShell) -> None:
    from . import interrupts

    interrupts.uninstall()
    cell_log().uninstall(ip)
    cleanup = ip.input_transformers_cleanup
    for transform in (transform_agent_cell, transform_replay_lines):
        while transform in cleanup:
            cleanup.remove(transform)
    for kind in ("line", "cell"):
        ip.magics_manager.magics[kind].pop("agent", None)


__all__ = [
    "AgentMagics",
    "compact_now",
    "expand",
    "line_command",
    "load_ipython_extension",
    "run_cell",
    "run_replay",
    "transform_agent_cell",
    "transform_replay_lines",
    "unload_ipython_extension",
    "wait",
]
