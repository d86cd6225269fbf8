"""The ``%%agent`` cell magic, the ``%agent`` line commands and the input transformers.

``load_ipython_extension`` registers the magics and a cleanup-stage input transformer that
rewrites a cell starting with ``%%agent`` into a top-level ``await`` of :func:`run_cell`, so
ipykernel runs the agent as a coroutine on its own event loop (autoawait): widget and comm
messages keep flowing during the run, the cell stays busy until the run ends, and a kernel
interrupt cancels the run's task (the agent aborts, closes its events and re-raises). The plain
cell magic is the fallback where there is no autoawait: ``asyncio.run`` when no loop is
running, otherwise a background run. Before ipykernel 7.4, which reads widget messages only
between cells, a run that shows the panel goes to the background too (see ``run_mode``).

The cell's options become a conversation and a prepared run in :mod:`.running`; the run itself
is :meth:`.conversation.Conversation.run`; the line commands are the table in
:mod:`.line_commands`. This module keeps the entry points the transformers write into cells
(:func:`run_cell`, :func:`run_replay`, :func:`compact_now`).

This module must never use nest_asyncio or block the kernel's loop, never turn a cancellation
into KeyboardInterrupt, and never print an API key or a traceback wall for a user mistake
(usage and model errors are ``UsageError``: one readable line).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from typing import Any

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from ..agent import Agent, AgentEvent
from ..ai import AgentMessage
from ..tools import cell_log
from . import line_commands
from .conversation import REPLY_VARIABLE, plain_mode
from .conversations import get_conversations
from .expansion import expand
from .line_commands import LINE_COMMANDS, status
from .models import ModelError
from .options import AgentOptions, magic_doc
from .run_mode import run_mode
from .running import (
    launch_background,
    prepare_cell,
    prepare_replay,
    run_prepared,
    shell,
    show_text,
    wait,
)
from .session import NotebookSession, get_session


async def run_cell(line: str, cell: str) -> None:
    """The ``%%agent`` runner (what the input transformer awaits)."""
    prepared = prepare_cell(line, cell)
    if prepared is None:
        return
    if prepared.options.background:
        launch_background(prepared, forced=False)
        return
    mode = run_mode(shell(), plain=plain_mode(prepared.options))
    if not mode.awaits:  # this ipykernel cannot deliver the panel's messages during a cell
        launch_background(prepared, forced=True, note=mode.note)
        return
    await run_prepared(prepared, show_text)


async def run_replay(line: str) -> None:
    """The awaited ``%agent replay`` (what the input transformer rewrites the line into)."""
    prepared = prepare_replay(line)
    mode = run_mode(shell(), plain=plain_mode(prepared.options))
    if not mode.awaits:
        launch_background(prepared, forced=True, note=mode.note)
        return
    await run_prepared(prepared, show_text)


async def compact_now(agent: Agent | None = None) -> None:
    """``%agent compact``: summarise the older messages of the conversation now (what the
    input transformer awaits)."""
    session = get_session()
    if agent is None:
        try:
            conversation = session.target(shell().user_ns)
        except ModelError as exc:
            raise UsageError(f"%agent: {exc}") from None
    else:
        conversation = session.conversation_of(agent)
    await line_commands.compact(conversation)


def line_command(line: str) -> Any:
    """``%agent COMMAND [TEXT]``; returns a value only for ``events`` and ``last``."""
    return line_commands.line_command(line, shell())


async def execute(
    agent: Agent,
    prompt: str | list[AgentMessage],
    options: AgentOptions,
    session: NotebookSession,
    namespace: dict[str, Any],
    show: Callable[[str], None],
    listeners: Sequence[Callable[[AgentEvent], Any]] = (),
    *,
    background: bool = False,
) -> None:
    """Run one prompt on ``agent``'s conversation in ``session`` (see
    :meth:`.conversation.Conversation.run`)."""
    conversation = session.conversation_of(agent)
    await conversation.run(
        prompt, options, session, namespace, show, listeners, background=background
    )


def _status(session: NotebookSession, agent: Agent) -> str:
    """``%agent status`` of ``agent``'s conversation."""
    return status(session, session.conversation_of(agent))


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
            asyncio.run(run_prepared(p, show_text))
            return None
        launch_background(p, forced=True)  # a loop runs but this cell cannot await it
        return None


# ``%%agent?`` and Shift-Tab show the magic's docstring: make it the full option list.
AgentMagics.agent.__doc__ = magic_doc(line_commands.usages())


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
    from . import hints, interrupts

    ip.register_magics(AgentMagics)
    hints.install(ip)  # a cell run before the set-up cells: one line, not a traceback
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
    from . import hints, interrupts

    hints.uninstall(ip)
    interrupts.uninstall()
    cell_log().uninstall(ip)
    cleanup = ip.input_transformers_cleanup
    for transform in (transform_agent_cell, transform_replay_lines):
        while transform in cleanup:
            cleanup.remove(transform)
    for kind in ("line", "cell"):
        ip.magics_manager.magics[kind].pop("agent", None)


__all__ = [
    "LINE_COMMANDS",
    "REPLY_VARIABLE",
    "AgentMagics",
    "compact_now",
    "execute",
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
