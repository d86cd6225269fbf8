"""The ``%agent COMMAND [TEXT]`` line commands, as one table ``{name: handler}``.

Each handler takes a :class:`Call` (the shell, the session, the command's name and the rest of
the line) and returns what the line command returns (a value only for ``events`` and
``last``); :data:`COMMANDS` is the table and the order ``%agent`` lists them in. The
conversation a command acts on is the last ``%%agent`` cell's or replay's (``session.target``),
except ``undo``, which acts on the last ``%%agent`` cell's. Usage mistakes are ``UsageError``:
one readable line.
"""

from __future__ import annotations

import asyncio
import shlex
from argparse import ArgumentTypeError
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from ..agent import AgentBusyError, format_usd
from ..ai import AssistantMessage, message_text, redact
from ..settings import status_lines
from ..tools import close_mcp_servers_soon, mcp_status_lines
from ..tools import undo as undo_tools
from . import code_cell
from .context_command import context_of
from .conversation import PANEL_VARIABLE, Conversation, plain_mode
from .conversation_settings import approvals_text, tools_text
from .conversations import ConversationError, get_conversations, key_of
from .limits import output_limit
from .models import ModelError, model_from_name
from .options import AgentOptions, format_help, line_commands_text, positive_usd
from .render import render_transcript
from .resume_checks import COUNT_COST
from .run_mode import run_mode
from .running import (
    expanded,
    launch_background,
    named_conversation,
    prepare_replay,
    run_prepared,
    show_text,
)
from .session import NotebookSession, get_session
from .system_prompt import system_prompt_text


@dataclass(slots=True)
class Call:
    """One ``%agent`` line: who runs it and what it says."""

    shell: InteractiveShell
    session: NotebookSession
    command: str
    rest: str

    @property
    def namespace(self) -> dict[str, Any]:
        namespace: dict[str, Any] = self.shell.user_ns
        return namespace

    def target(self) -> Conversation:
        try:
            return self.session.target(self.namespace)
        except ModelError as exc:
            raise UsageError(f"%agent: {exc}") from None


Handler = Callable[[Call], Any]


# -- what the last run left ----------------------------------------------------------------------


def _last(call: Call) -> Any:
    return redact(call.session.last_reply)


def _events(call: Call) -> Any:
    return call.session.last_events


def _context(call: Call) -> None:
    """``%agent context [TURN] [--json|--diff]``: what the current conversation's last run's
    request of that turn sent, or what changed since the turn before."""
    conversation = call.session.conversation
    print(context_of(conversation.last_requests if conversation is not None else [], call.rest))


#: What ``%agent timeline`` says when no run was shown in a panel.
NO_TIMELINE = "no timeline: no %%agent run was shown in a panel yet (plain mode keeps none)"


def _timeline(call: Call) -> None:
    """``%agent timeline``: the last panel's run as rows (the static picture's text form)."""
    panel = call.namespace.get(PANEL_VARIABLE)
    text = getattr(panel, "timeline_text", None)
    print(text if isinstance(text, str) else NO_TIMELINE)


# -- running ------------------------------------------------------------------------------------


def _replay(call: Call) -> None:
    prepared = prepare_replay(call.rest)
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # plain IPython without autoawait: no loop to share, so block
        asyncio.run(run_prepared(prepared, show_text))
        return
    launch_background(prepared, forced=True)


def _undo(call: Call) -> None:
    """The undo journal of the last ``%%agent`` cell's conversation (never a replay's);
    ``--all`` also removes the modules its imports bound."""
    if call.rest not in ("", "--all"):
        raise UsageError(f"%agent undo: unknown option {call.rest!r}; expected --all or nothing")
    session = call.session
    conversation = session.last_cell
    if conversation is not None and conversation.agent.is_running:
        raise UsageError("%agent undo: a run is active; %agent abort first")
    journal = conversation.undo_journal(call.namespace) if conversation is not None else None
    report = undo_tools(call.namespace, journal, include_imports=call.rest == "--all")
    if conversation is not None:
        left = bool(report.kept or report.not_restored)  # a kept import leaves no code behind
        conversation.code.after_undo(report.restored, [*report.removed, *report.kept_imports], left)
    print(report.text())


def _code(call: Call) -> None:
    """The last run's code: printed, or offered as the next cell."""
    session = call.session
    conversation = session.conversation
    if conversation is None:
        conversation = session.conversations.get("default")
    try:
        text = code_cell.code_command(call.shell, conversation, call.rest)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if text:
        print(text, end="" if text.endswith("\n") else "\n")


def _reset(call: Call) -> None:
    rest = call.rest
    if rest not in ("", "--mcp"):
        raise UsageError(f"%agent reset: unknown option {rest!r}; expected --mcp or nothing")
    conversation = call.target()
    agent = conversation.agent
    if agent.is_running:
        raise UsageError("%agent reset: a run is active; %agent abort first")
    agent.reset()
    conversation.budget_baseline = 0.0
    conversation.always_allowed.clear()  # "Always allow" answers are the conversation's
    conversation.notebook_context.forget()  # the model no longer has what it was shown
    call.session.last_run = None
    conversation.last_requests = []
    conversation.last_run = None
    print("conversation reset")
    if rest == "--mcp":
        closing = close_mcp_servers_soon()
        print(f"closing {closing} MCP server connection(s); they reconnect on the next call")


def _notebook_context(call: Call) -> None:
    conversation = call.target()
    try:  # on or off for this conversation (over PI_NOTEBOOK_CONTEXT), or shown
        print(conversation.notebook_context.command(call.rest, conversation.agent.state.messages))
    except ValueError as exc:
        raise UsageError(f"%agent notebook-context: {exc}") from None


def _queue(call: Call) -> None:
    agent = call.target().agent
    text = expanded(call.rest, call.namespace, f"%agent {call.command}")
    if not text:
        raise UsageError(f"%agent {call.command}: needs TEXT")
    if call.command == "steer":
        agent.steer(text)
        print("steering message queued (delivered before the next model call)")
    else:
        agent.follow_up(text)
        print("follow-up queued (delivered when the agent would otherwise stop)")


def _abort(call: Call) -> None:
    agent = call.target().agent
    if agent.is_running:
        agent.abort()
        print("abort requested")
    else:
        print("no run is active")


def _history(call: Call) -> None:
    print(render_transcript(call.target().agent.state.messages))


def _model(call: Call) -> None:
    conversation = call.target()
    if call.rest:
        try:
            model = model_from_name(call.rest, call.namespace)
            call.session.set_model(conversation.agent, model, "%agent model")
        except ModelError as exc:
            raise UsageError(f"%agent model: {exc}") from None
    model = conversation.agent.state.model
    print(f"model: {model.provider}/{model.id} (from {conversation.source})")


def _budget(call: Call) -> None:
    """``%agent budget`` shows the budget, ``%agent budget USD`` sets it, ``off`` clears it."""
    conversation = call.target()
    rest = call.rest
    if rest.lower() in ("off", "none"):
        conversation.budget = None
    elif rest:
        try:
            conversation.budget = positive_usd(rest)
        except ArgumentTypeError as exc:
            raise UsageError(f"%agent budget: {exc}, or 'off'") from None
    budget = "off" if conversation.budget is None else format_usd(conversation.budget)
    spent = format_usd(conversation.budget_spent)
    print(f"conversation budget: {budget}, spent: {spent}{conversation.uncounted()}")


def _compact(call: Call) -> None:
    """``%agent compact`` outside the input transformer (autoawait off): block where no loop
    runs, else say how to run it."""
    if call.rest:
        raise UsageError(f"%agent compact: takes no argument, got {call.rest!r}")
    conversation = call.target()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(compact(conversation))
        return
    raise UsageError("%agent compact: needs autoawait (%autoawait on), to wait for the model")


async def compact(conversation: Conversation) -> None:
    """Summarise the older messages of the conversation now."""
    agent = conversation.agent
    try:
        done = await agent.compact()
    except AgentBusyError:
        raise UsageError("%agent compact: a run is active; %agent abort first") from None
    compactor = agent.compaction
    if done is not None:
        print(f"{done.note}: about {done.tokens_before} -> {done.tokens_after} tokens")
    elif compactor.last_failure is not None:
        failure = compactor.last_failure
        print(redact(f"compaction failed: {failure.error_message or failure.stop_reason}"))
        compactor.last_failure = None
    else:
        print("nothing to compact: the conversation is only its last turn")


# -- status ----------------------------------------------------------------------------------------


def _status(call: Call) -> None:
    print(status(call.session, call.target()))


def status(session: NotebookSession, conversation: Conversation) -> str:
    from IPython import get_ipython

    agent = conversation.agent
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
    if conversation.budget is not None:
        cost += f" spent / {format_usd(conversation.budget)} budget"
        if conversation.budget_baseline > 0:
            counted = format_usd(conversation.budget_spent)
            cost += f"; the budget counts {counted}{conversation.uncounted()}"
    last_run = conversation.last_run
    # Only a run that had limits, or did not end by itself, gets a line of its own.
    last = [last_run.text()] if last_run is not None and last_run.noteworthy else []
    text = "\n".join(
        [
            f"model: {model.provider}/{model.id} (from {conversation.source})",
            f"running: {'yes' if agent.is_running else 'no'}",
            f"messages: {len(agent.state.messages)}, turns: {len(assistants)}",
            f"system prompt: {system_prompt_text(agent.state.system_prompt)}",
            f"tokens: {tokens_in} in, {tokens_out} out",
            cost,
            *last,
            *context,
            f"tools: {tools_text(agent.state.tools)}",
            conversation.notebook_context.status_line(agent.state.messages),
            f"output limit: {output_limit(agent).text()}",
            f"approvals: {approvals_text(conversation.policy, conversation.always_allowed)}",
            f"queued: {len(agent.steering_queue)} steering, {len(agent.follow_up_queue)} follow-up",
            *_queued_lines(conversation),
            f"run mode: {run_mode(get_ipython(), plain=plain_mode(AgentOptions())).why}",
            *mcp_status_lines(),
            *status_lines(),
        ]
    )
    return redact(text)


def _queued_lines(conversation: Conversation) -> list[str]:
    """Each queued message and where it will land (the next %%agent cell delivers them)."""
    agent = conversation.agent
    lines = [f"  steer: {_one_line(m)}" for m in agent.steering_queue]
    lines += [f"  follow-up: {_one_line(m)}" for m in agent.follow_up_queue]
    if lines and not agent.is_running:
        lines.append(
            "  (the next %%agent cell delivers them: steering with its prompt, follow-ups "
            "after its answer; %agent reset drops them)"
        )
    return lines


def _one_line(message: Any, limit: int = 80) -> str:
    return message_text(message, images=False, separator=" ", one_line=True, limit=limit)


# -- saved conversations -------------------------------------------------------------------------


def _conversation_command(call: Call) -> None:
    """``%agent resume [NAME]`` / ``save PATH`` / ``load PATH`` (see :mod:`.conversations`)."""
    command, session, namespace = call.command, call.session, call.namespace
    conversations = get_conversations()
    try:
        args = shlex.split(call.rest)
    except ValueError as exc:
        raise UsageError(f"%agent {command}: {exc}") from None
    count_cost = COUNT_COST in args and command != "save"
    args = [arg for arg in args if not (count_cost and arg == COUNT_COST)]
    try:
        if command == "resume":
            if len(args) > 1 or (args and not args[0].isidentifier()):
                raise UsageError(f"%agent resume: usage: %agent resume [NAME] [{COUNT_COST}]")
            name = args[0] if args and args[0] != "default" else None
            if name is None:
                conversation = session.default_conversation(namespace)
            else:
                conversation = named_conversation(
                    session, namespace, name, "%agent resume", new=False
                )
            agent = conversation.agent
            if agent.is_running:
                raise UsageError("%agent resume: a run is active; %agent abort first")
            print(
                conversations.resume(
                    key_of(name), conversation, session, namespace, _note, count_cost=count_cost
                )
            )
            conversation.saver = conversations.track(conversation.key, agent, namespace, _note)
            session.conversation = conversation
            session.last_cell = conversation
            return
        if len(args) != 1:
            flag = f" [{COUNT_COST}]" if command == "load" else ""
            raise UsageError(f"%agent {command}: usage: %agent {command} PATH{flag}")
        path = Path(args[0]).expanduser()
        conversation = call.target()
        agent = conversation.agent
        if command == "save":
            key = conversation.key if conversation.saver is not None else key_of(None)
            count = conversations.save_to(path, agent, key, namespace)
            print(f"saved {count} message{'' if count == 1 else 's'} to {path}")
            return
        if agent.is_running:
            raise UsageError("%agent load: a run is active; %agent abort first")
        saves = conversation.key if conversation.saver is not None else None
        print(
            conversations.load(path, conversation, session, namespace, saves, count_cost=count_cost)
        )
    except (ConversationError, ModelError) as exc:
        raise UsageError(str(exc)) from None


def _note(text: str) -> None:
    print(text)


def _help(call: Call) -> None:
    print(format_help(usages()), end="")


@dataclass(slots=True, frozen=True)
class Command:
    """One line command: what runs it, and its arguments as the help spells them."""

    handler: Handler
    args: str = ""


COMMANDS: dict[str, Command] = {
    "reset": Command(_reset, "[--mcp]"),
    "steer": Command(_queue, "TEXT"),
    "followup": Command(_queue, "TEXT"),
    "abort": Command(_abort),
    "status": Command(_status),
    "history": Command(_history),
    "events": Command(_events),
    "model": Command(_model, "NAME"),
    "last": Command(_last),
    "undo": Command(_undo, "[--all]"),
    "budget": Command(_budget, "[USD|off]"),
    "compact": Command(_compact),
    "context": Command(_context, "[TURN] [--json|--diff]"),
    "notebook-context": Command(_notebook_context, "[on|off]"),
    "timeline": Command(_timeline),
    "replay": Command(_replay, "PATH [--step [lifecycle|all|tools]] [--plain]"),
    "code": Command(_code, "[--cell|--answer]"),
    "resume": Command(_conversation_command, "[NAME] [--count-cost]"),
    "save": Command(_conversation_command, "PATH"),
    "load": Command(_conversation_command, "PATH [--count-cost]"),
    "help": Command(_help),
}
"""Every line command, in the order ``%agent`` and its help list them."""

LINE_COMMANDS = tuple(COMMANDS)


def usages() -> tuple[str, ...]:
    """Each command as the help lists it (``"save PATH"``), from :data:`COMMANDS`."""
    return tuple(f"{name} {command.args}".rstrip() for name, command in COMMANDS.items())


def commands_help() -> str:
    """The help's ``line commands:`` paragraph, from :data:`COMMANDS`."""
    return line_commands_text(usages())


def line_command(line: str, shell: InteractiveShell) -> Any:
    """``%agent COMMAND [TEXT]``; returns a value only for ``events`` and ``last``."""
    command, _, rest = line.strip().partition(" ")
    if command in ("", "-h", "--help"):
        command = "help"
    found = COMMANDS.get(command)
    if found is None:
        raise UsageError(
            f"%agent: unknown command {command!r}; expected one of: {', '.join(COMMANDS)}"
        )
    return found.handler(Call(shell, get_session(), command, rest.strip()))


__all__ = [
    "COMMANDS",
    "LINE_COMMANDS",
    "Call",
    "Command",
    "commands_help",
    "compact",
    "context_of",
    "line_command",
    "status",
    "usages",
]
