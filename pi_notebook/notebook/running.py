"""Preparing and running an ``%%agent`` cell or an ``%agent replay``: options to a conversation.

:func:`prepare_cell` parses the ``%%agent`` line, expands the prompt and picks the conversation
(the default one, ``--agent NAME``'s, or a fresh one for ``--new``), setting its model, system
prompt, thinking level, tools and approval policy as the options say; :func:`prepare_replay`
builds a replay's own conversation (a new Agent made with the recording's settings, never the
notebook's saved conversation, ``_agent_reply`` or ``%agent undo``'s target). Both return a
:class:`PreparedCell`, which :func:`run_prepared` runs (awaited, or in the background with
:func:`launch_background`). Usage mistakes are ``UsageError``: one readable line, nothing runs.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from ..agent import Agent, AgentEvent, AgentTool
from ..ai import AgentMessage
from ..ai.replay import ReplayDivergence, forget
from ..tools import (
    BUILTIN_COLLECTIONS,
    ToolNameClash,
    builtin_tools,
    refresh_tools,
    tool_source,
    unique_tools,
)
from .conversation import Conversation, plain_mode
from .conversation_settings import as_policy
from .expansion import ExpansionError, expand
from .hints import SETUP_HINT
from .models import ModelError, model_from_name
from .options import AgentOptions, OptionsError, parse_options, parse_replay_options
from .replay_run import ReplayDriver, ReplayError, plan_replay
from .session import NotebookSession, get_session
from .system_prompt import DEFAULT_SYSTEM_PROMPT


def shell() -> InteractiveShell:
    from IPython import get_ipython

    ip = get_ipython()
    if ip is None:
        raise RuntimeError("pi_notebook.notebook needs a running IPython shell")
    found: InteractiveShell = ip
    return found


def expanded(text: str, namespace: dict[str, Any], command: str) -> str:
    """:func:`expand`, a failure as a one-line ``UsageError`` naming the expression."""
    try:
        return expand(text, namespace)
    except ExpansionError as exc:
        raise UsageError(f"{command}: {exc}") from None


def show_text(text: str) -> None:
    if text:
        print(text)
    sys.stdout.flush()


# -- choosing the conversation ------------------------------------------------------------------


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
                f"({', '.join(BUILTIN_COLLECTIONS)}) or one of its tools ({SETUP_HINT})"
            )
    try:  # one tool per name; of one source (a @tool defined again) the later one wins
        return unique_tools(tools)
    except ToolNameClash as exc:
        raise UsageError(f"%%agent: {exc}") from None


def named_conversation(
    session: NotebookSession, namespace: dict[str, Any], name: str, command: str, *, new: bool
) -> Conversation:
    """``--agent NAME``'s conversation: the Agent in the variable (made when there is none, or
    for ``new``)."""
    if not name.isidentifier():
        raise UsageError(f"{command}: --agent needs a variable name, got {name!r}")
    existing = namespace.get(name)
    if existing is not None and not isinstance(existing, Agent):
        raise UsageError(f"{command}: {name!r} is a {type(existing).__name__}, not an Agent")
    if existing is None or new:
        existing = Agent(system_prompt=DEFAULT_SYSTEM_PROMPT)
        namespace[name] = existing
    return session.named(name, existing)


def _prepare_conversation(
    session: NotebookSession, options: AgentOptions, namespace: dict[str, Any]
) -> Conversation:
    try:
        if options.agent is not None:
            conversation = named_conversation(
                session, namespace, options.agent, "%%agent", new=options.new
            )
        else:
            conversation = session.default_conversation(namespace)
            if options.new:
                if conversation.agent.is_running:
                    raise UsageError("%%agent: --new while a run is active; %agent abort first")
                conversation = session.new_default(namespace)
        agent = conversation.agent
        if options.model is not None:
            session.set_model(agent, model_from_name(options.model, namespace), "--model")
        else:
            session.ensure_usable(agent, namespace)
    except ModelError as exc:
        raise UsageError(f"%%agent: {exc}") from None
    state = agent.state
    if options.system is not None:
        state.system_prompt = options.system
    if options.thinking is not None:
        state.thinking_level = options.thinking  # type: ignore[assignment]
    if options.no_tools:
        state.tools = []
    elif options.tools:  # exactly these, from now on
        state.tools = _resolve_tools(options.tools, namespace)
    else:  # re-running the cell that defines a @tool replaces it
        state.tools = refresh_tools(state.tools)
    if options.approve is not None:  # the conversation's policy from now on
        conversation.policy = as_policy(options.approve)
    session.conversation = conversation
    session.last_cell = conversation
    return conversation


# -- running -----------------------------------------------------------------------------------


@dataclass
class PreparedCell:
    conversation: Conversation
    prompt: str | list[AgentMessage]
    options: AgentOptions
    session: NotebookSession
    namespace: dict[str, Any]
    listeners: list[Callable[[AgentEvent], Any]] = field(default_factory=list)
    after: Callable[[bool], None] | None = None
    """Called when the run is over (True when it completed without an exception)."""

    @property
    def agent(self) -> Agent:
        return self.conversation.agent


async def run_prepared(
    p: PreparedCell, show: Callable[[str], None], *, background: bool = False
) -> None:
    ok = False
    try:
        await p.conversation.run(
            p.prompt,
            p.options,
            p.session,
            p.namespace,
            show,
            p.listeners,
            background=background,
        )
        ok = True
    finally:
        if p.after is not None:
            p.after(ok)


def prepare_cell(line: str, cell: str) -> PreparedCell | None:
    """Parse, expand and pick the conversation (synchronously); None when only ``--help`` was
    asked. Raises ``UsageError`` for bad options, an empty prompt, or an unusable model: nothing
    runs."""
    from .line_commands import usages  # the help lists the line-command table's commands

    ip = shell()
    try:
        options = parse_options(line, usages())
    except OptionsError as exc:
        if exc.is_help:
            print(str(exc), end="")
            return None
        raise UsageError(str(exc)) from None
    namespace: dict[str, Any] = ip.user_ns
    prompt = expanded(cell, namespace, "%%agent").strip()
    if not prompt:
        raise UsageError("%%agent: empty prompt: write it in the cell body, under the %%agent line")
    session = get_session()
    conversation = _prepare_conversation(session, options, namespace)
    if not conversation.agent.is_running:  # a cell queued behind a run is checked when it starts
        conversation.check_budget("%%agent")
    if options.step and plain_mode(options):
        print("(--step needs the panel: plain mode runs without pauses)")
    return PreparedCell(conversation, prompt, options, session, namespace)


def prepare_replay(line: str) -> PreparedCell:
    """``%agent replay PATH ...``: a conversation of its own on a fresh Agent made with the
    recording's replay model, stand-in tools and driver; it becomes the target of the line
    commands (not of ``%agent undo``). Raises ``UsageError``."""
    ip = shell()
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
    driver = ReplayDriver(plan)
    agent = Agent(
        model=plan.model,
        system_prompt=plan.system_prompt,
        tools=plan.tools,
        messages=plan.history,
        **driver.agent_options(),
    )
    driver.install(agent)
    conversation = Conversation(agent, source=f"replay of {plan.path.name}", saved=False)
    session.conversation = conversation
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

    return PreparedCell(conversation, plan.prompts, options, session, ip.user_ns, [driver], after)


def launch_background(p: PreparedCell, *, forced: bool, note: str | None = None) -> None:
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


__all__ = [
    "PreparedCell",
    "expanded",
    "launch_background",
    "named_conversation",
    "prepare_cell",
    "prepare_replay",
    "run_prepared",
    "shell",
    "show_text",
    "wait",
]
