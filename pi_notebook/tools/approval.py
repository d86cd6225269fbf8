"""Asking a person before the agent writes notebook variables or runs code.

:class:`ApprovalRequest` is what an approver sees; an :data:`Approver` answers it (``True``
approves). :func:`approval_hook` builds the ``before_tool_call`` hook the ``%%agent --approve``
option installs: in ``"writes"`` mode it asks before tools that write the namespace or run code,
in ``"all"`` mode before every tool. The ``%%agent`` magic asks the approver set with
:func:`set_approver` (programmatic, e.g. tests or a custom UI) if there is one, else the live
panel. With neither, a call that needs an approval is refused with a reason that says why. A
denial is the error result ``"denied by user"``. An approver may raise :class:`ApprovalTimeout`
(the panel does after :func:`approval_timeout` seconds, ``PI_NOTEBOOK_APPROVAL_TIMEOUT``,
default 10 minutes, so a run with no front end attached does not wait forever): the call is
refused with a reason saying nobody answered.

This module must never block the event loop while waiting for an answer and never approve on
its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ..agent import AgentTool, BeforeToolCallContext, BeforeToolCallResult, field_of
from ..ai import AbortSignal, maybe_await
from ..settings import APPROVAL_TIMEOUT
from .tool_names import builtin_writes, hidden_server

ApprovalMode: TypeAlias = Literal["writes", "all"]
APPROVAL_MODES: tuple[ApprovalMode, ...] = ("writes", "all")
DENIED = "denied by user"
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


Approver: TypeAlias = Callable[[ApprovalRequest, AbortSignal | None], Awaitable[bool]]
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


def approval_hook(
    mode: ApprovalMode,
    approver_getter: ApproverGetter = current_approver,
    previous: Callable[..., Any] | None = None,
) -> Callable[[BeforeToolCallContext, AbortSignal | None], Awaitable[Any]]:
    """A ``before_tool_call`` hook asking ``approver_getter()`` before the calls ``mode`` covers.

    ``previous`` (an existing hook) runs first; if it blocks, nobody is asked.
    """
    if mode not in APPROVAL_MODES:
        raise ValueError(f"approval mode must be one of {APPROVAL_MODES}, got {mode!r}")

    async def before_tool_call(context: BeforeToolCallContext, signal: AbortSignal | None) -> Any:
        if previous is not None:
            decision = await maybe_await(previous(context, signal))
            if field_of(decision, "block", False):
                return decision
        call = context.tool_call
        tool = next((t for t in context.context.tools if t.name == call.name), None)
        if mode == "writes" and (tool is None or not writes_namespace(tool)):
            return None
        approver = approver_getter()
        if approver is None:
            return BeforeToolCallResult(block=True, reason=no_approver_reason(mode))
        args = dict(call.arguments) if isinstance(call.arguments, dict) else {}
        summary = summarize(call.name, args)
        server = hidden_server(tool) if tool is not None else None
        if server is not None:  # an unprefixed MCP tool: never mistaken for a built-in
            summary = f"{summary} [MCP server {server!r}]"
        request = ApprovalRequest(call.id, call.name, args, summary)
        try:
            approved = await approver(request, signal)
        except ApprovalTimeout as exc:
            return BeforeToolCallResult(block=True, reason=timeout_reason(mode, exc.seconds))
        if approved is not True:
            return BeforeToolCallResult(block=True, reason=DENIED)
        return None

    return before_tool_call


__all__ = [
    "APPROVAL_MODES",
    "APPROVAL_TIMEOUT_ENV",
    "DEFAULT_APPROVAL_TIMEOUT",
    "DENIED",
    "ApprovalMode",
    "ApprovalRequest",
    "ApprovalTimeout",
    "Approver",
    "ApproverGetter",
    "approval_hook",
    "approval_timeout",
    "current_approver",
    "format_seconds",
    "no_approver_reason",
    "preferring_programmatic",
    "set_approver",
    "summarize",
    "timeout_reason",
    "writes_namespace",
]
