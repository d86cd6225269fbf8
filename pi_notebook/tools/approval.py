"""Asking a person before the agent writes notebook variables or runs code.

:class:`ApprovalRequest` is what an approver sees; an :data:`Approver` answers it: ``True`` or
``"approve"`` approves this call, ``"always"`` approves it and every later call of that tool
name the gate sees (*Always allow*), ``"stop"`` denies it and ends the run at once (*Deny and
stop*), anything else denies it (the model may try again). :class:`ApprovalGate` is the
``before_tool_call`` hook the ``%%agent --approve`` option installs (with its ``listener``, which
stops the run): in ``"writes"`` mode it asks before tools that write the namespace or run code,
in ``"all"`` mode before every tool; :func:`approval_hook` is its hook alone. The ``%%agent``
magic asks the approver set with :func:`set_approver` (programmatic, e.g. tests or a custom UI)
if there is one, else the live panel. With neither, a call that needs an approval is refused
with a reason that says why. A denial is the error result ``"denied by user"``, a denial that
stops the run ``"denied and stopped by the user"``. An approver may raise
:class:`ApprovalTimeout` (the panel does after :func:`approval_timeout` seconds,
``PI_NOTEBOOK_APPROVAL_TIMEOUT``, default 10 minutes, so a run with no front end attached does
not wait forever): the call is refused with a reason saying nobody answered.

*Deny and stop* aborts the run when the denied call's ``tool_execution_end`` is emitted (its
``listener`` sees it), not inside the hook: Pi's loop replaces a blocked call's reason with
"Operation aborted" when the run is aborted during the hook, and the model should read on the
next request that the user denied the call. The abort ends the run as the Abort button does:
no other call of the batch runs, ``agent_end`` comes, queued messages stay queued.

This module must never block the event loop while waiting for an answer and never approve on
its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ..agent import (
    AgentEvent,
    AgentTool,
    BeforeToolCallContext,
    BeforeToolCallResult,
    ToolExecutionEndEvent,
    field_of,
)
from ..ai import AbortSignal, maybe_await
from ..settings import APPROVAL_TIMEOUT
from .tool_names import builtin_writes, hidden_server

ApprovalMode: TypeAlias = Literal["writes", "all"]
APPROVAL_MODES: tuple[ApprovalMode, ...] = ("writes", "all")
ApprovalAnswer: TypeAlias = Literal["approve", "always", "deny", "stop"]
APPROVAL_ANSWERS: tuple[ApprovalAnswer, ...] = ("approve", "always", "deny", "stop")
DENIED = "denied by user"
DENIED_AND_STOPPED = "denied and stopped by the user"
APPROVAL_TIMEOUT_ENV = APPROVAL_TIMEOUT.variable
DEFAULT_APPROVAL_TIMEOUT = APPROVAL_TIMEOUT.default
"""Seconds an approval asked in the panel waits for an answer before the call is refused."""


class ApprovalTimeout(Exception):
    """Nobody answered an approval in time; the call is refused (never approved)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no answer within {format_seconds(seconds)}")
        self.seconds = seconds


def approval_timeout() -> float:
    """``$PI_NOTEBOOK_APPROVAL_TIMEOUT`` (seconds, > 0), else :data:`DEFAULT_APPROVAL_TIMEOUT`."""
    return APPROVAL_TIMEOUT.value()


def format_seconds(seconds: float) -> str:
    if seconds >= 120:
        return f"{seconds / 60:g} minutes"
    return f"{seconds:g} second{'s' if seconds != 1 else ''}"


@dataclass(frozen=True)
class ApprovalRequest:
    """One tool call waiting for a yes or no."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    summary: str
    """One human line, e.g. ``"run_python: 3 lines of code"``."""


Approver: TypeAlias = Callable[
    [ApprovalRequest, AbortSignal | None], Awaitable[bool | ApprovalAnswer]
]
ApproverGetter: TypeAlias = Callable[[], Approver | None]

_programmatic: Approver | None = None


def set_approver(approver: Approver | None) -> None:
    """Answer approvals with ``approver`` (``None`` removes it); it wins over the panel."""
    global _programmatic
    _programmatic = approver


def current_approver() -> Approver | None:
    """The approver set with :func:`set_approver`, if any."""
    return _programmatic


def preferring_programmatic(fallback: Approver | None) -> ApproverGetter:
    """A getter for :func:`approval_hook`: the :func:`set_approver` one, else ``fallback``
    (the ``%%agent`` magic passes the live panel's ``request_approval``)."""

    def get() -> Approver | None:
        found = current_approver()
        return found if found is not None else fallback

    return get


def writes_namespace(tool: AgentTool) -> bool:
    """Whether ``tool`` writes notebook variables or runs code: its ``writes_namespace``, or a
    built-in tool of its name does (a server's ``readOnlyHint`` never loosens a built-in's
    policy: an MCP ``run_python`` is asked about as the built-in one is)."""
    return tool.writes_namespace or builtin_writes(tool.name)


def summarize(tool_name: str, args: dict[str, Any]) -> str:
    """One human line describing a call, e.g. ``run_python: 3 lines of code``."""
    if tool_name == "run_python" and isinstance(args.get("code"), str):
        lines = len(args["code"].strip().splitlines()) or 1
        first = args["code"].strip().splitlines()[0] if args["code"].strip() else ""
        first = first if len(first) <= 60 else first[:57] + "..."
        return f"run_python: {lines} line{'s' if lines != 1 else ''} of code ({first})"
    if tool_name == "set_variable" and "name" in args:
        expression = str(args.get("expression", ""))
        expression = expression if len(expression) <= 60 else expression[:57] + "..."
        return f"set_variable: {args['name']} = {expression}"
    parts = ", ".join(f"{key}={_short(value)}" for key, value in args.items())
    return f"{tool_name}({parts})"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def no_approver_reason(mode: ApprovalMode) -> str:
    return (
        f"approval required (--approve {mode}) but no approver is available: there is no "
        "live panel (plain mode) and none was set with pi_notebook.tools.set_approver(); "
        "the call was not run"
    )


def timeout_reason(mode: ApprovalMode, seconds: float) -> str:
    return (
        f"approval required (--approve {mode}) but nobody answered within "
        f"{format_seconds(seconds)} (no front end attached, or no one there; "
        f"{APPROVAL_TIMEOUT_ENV} sets the wait in seconds): the call was not run"
    )


def as_answer(value: object) -> ApprovalAnswer:
    """An approver's answer: ``True`` approves, one of :data:`APPROVAL_ANSWERS` is itself,
    anything else denies."""
    if value is True:
        return "approve"
    for answer in APPROVAL_ANSWERS:
        if value == answer:
            return answer
    return "deny"


def answer_line(answer: ApprovalAnswer, tool_name: str) -> str:
    """What an answer did to a call, as its tool card says it."""
    return {
        "approve": "approved by the user",
        "always": f"approved by the user: always allow {tool_name} (this conversation)",
        "deny": "denied by the user",
        "stop": DENIED_AND_STOPPED,
    }[answer]


def allowed_line(tool_name: str) -> str:
    """A call run without asking because its tool is always allowed."""
    return f"allowed (always allow {tool_name})"


class ApprovalGate:
    """One run's approvals: a ``before_tool_call`` hook asking ``approver_getter()`` before the
    calls ``mode`` covers, and a ``listener`` for the run that ends it after *Deny and stop*.

    ``previous`` (an existing hook) runs first; if it blocks, nobody is asked. ``allowed`` holds
    the tool names answered *Always allow* (pass a conversation's set to keep them across runs;
    the gate adds to it): their calls run without asking. ``stop`` ends the run (the Agent's
    ``abort``); without it *Deny and stop* is a plain denial. ``notify(tool_call_id, line)``
    hears what happened to each call the mode covers (:func:`answer_line`,
    :func:`allowed_line`), for its card.
    """

    __slots__ = (
        "_stopping",
        "allowed",
        "approver_getter",
        "mode",
        "notify",
        "previous",
        "stop",
        "stopped_on",
    )

    def __init__(
        self,
        mode: ApprovalMode,
        approver_getter: ApproverGetter = current_approver,
        previous: Callable[..., Any] | None = None,
        *,
        allowed: set[str] | None = None,
        stop: Callable[[], None] | None = None,
        notify: Callable[[str, str], None] | None = None,
    ) -> None:
        if mode not in APPROVAL_MODES:
            raise ValueError(f"approval mode must be one of {APPROVAL_MODES}, got {mode!r}")
        self.mode = mode
        self.approver_getter = approver_getter
        self.previous = previous
        self.allowed = allowed if allowed is not None else set()
        self.stop = stop
        self.notify = notify
        self._stopping: set[str] = set()
        """Calls denied with *Deny and stop* whose ``tool_execution_end`` has not come yet."""
        self.stopped_on: str | None = None
        """The tool whose call was answered *Deny and stop* (the run was stopped there)."""

    def _tell(self, tool_call_id: str, line: str) -> None:
        if self.notify is not None:
            self.notify(tool_call_id, line)

    async def before_tool_call(
        self, context: BeforeToolCallContext, signal: AbortSignal | None
    ) -> Any:
        if self.previous is not None:
            decision = await maybe_await(self.previous(context, signal))
            if field_of(decision, "block", False):
                return decision
        call = context.tool_call
        mode = self.mode
        tool = next((t for t in context.context.tools if t.name == call.name), None)
        if mode == "writes" and (tool is None or not writes_namespace(tool)):
            return None
        if call.name in self.allowed:
            self._tell(call.id, allowed_line(call.name))
            return None
        approver = self.approver_getter()
        if approver is None:
            return BeforeToolCallResult(block=True, reason=no_approver_reason(mode))
        args = dict(call.arguments) if isinstance(call.arguments, dict) else {}
        summary = summarize(call.name, args)
        server = hidden_server(tool) if tool is not None else None
        if server is not None:  # an unprefixed MCP tool: never mistaken for a built-in
            summary = f"{summary} [MCP server {server!r}]"
        request = ApprovalRequest(call.id, call.name, args, summary)
        try:
            answer = as_answer(await approver(request, signal))
        except ApprovalTimeout as exc:
            return BeforeToolCallResult(block=True, reason=timeout_reason(mode, exc.seconds))
        if answer == "stop" and self.stop is None:
            answer = "deny"  # nothing to stop the run with: a plain denial, said as one
        self._tell(call.id, answer_line(answer, call.name))
        if answer == "always":
            self.allowed.add(call.name)
        if answer == "stop":
            self._stopping.add(call.id)
            self.stopped_on = call.name
            return BeforeToolCallResult(block=True, reason=DENIED_AND_STOPPED)
        if answer == "deny":
            return BeforeToolCallResult(block=True, reason=DENIED)
        return None

    def listener(self, event: AgentEvent) -> None:
        """A run listener: the denied call's result is out, so *Deny and stop* ends the run."""
        if isinstance(event, ToolExecutionEndEvent) and event.tool_call_id in self._stopping:
            self._stopping.discard(event.tool_call_id)
            if self.stop is not None:
                self.stop()


def approval_hook(
    mode: ApprovalMode,
    approver_getter: ApproverGetter = current_approver,
    previous: Callable[..., Any] | None = None,
) -> Callable[[BeforeToolCallContext, AbortSignal | None], Awaitable[Any]]:
    """A ``before_tool_call`` hook asking ``approver_getter()`` before the calls ``mode`` covers
    (an :class:`ApprovalGate` without its listener: *Deny and stop* is a plain denial; *Always
    allow* lasts as long as the hook).

    ``previous`` (an existing hook) runs first; if it blocks, nobody is asked.
    """
    return ApprovalGate(mode, approver_getter, previous).before_tool_call


__all__ = [
    "APPROVAL_ANSWERS",
    "APPROVAL_MODES",
    "APPROVAL_TIMEOUT_ENV",
    "DEFAULT_APPROVAL_TIMEOUT",
    "DENIED",
    "DENIED_AND_STOPPED",
    "ApprovalAnswer",
    "ApprovalGate",
    "ApprovalMode",
    "ApprovalRequest",
    "ApprovalTimeout",
    "Approver",
    "ApproverGetter",
    "allowed_line",
    "answer_line",
    "approval_hook",
    "approval_timeout",
    "as_answer",
    "current_approver",
    "format_seconds",
    "no_approver_reason",
    "preferring_programmatic",
    "set_approver",
    "summarize",
    "timeout_reason",
    "writes_namespace",
]
