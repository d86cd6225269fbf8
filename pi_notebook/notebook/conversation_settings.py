"""What a conversation keeps between ``%%agent`` cells besides its Agent's own state.

A conversation is an :class:`~pi_notebook.agent.Agent` (the default one, or one named with
``--agent NAME``). Its tools live on the Agent (``agent.state.tools``); its approval policy
(``--approve writes|all|none``) lives here, one per Agent, weakly keyed so a dropped Agent takes
its policy along. Both stay for every later cell (also through ``--new``, which copies them,
and ``%agent reset``, which clears only the messages) until a cell changes them, so a policy
can never lapse while the tools it guards are still there.

This module must never run a tool, ask for an approval or touch the notebook namespace.
"""

from __future__ import annotations

import weakref
from typing import Literal, TypeAlias

from ..agent import Agent, AgentTool
from ..settings import CONTEXT_CHARS
from ..tools import tool_mark
from .notebook_context import NotebookContext, describe, is_notebook_context

ApprovalPolicy: TypeAlias = Literal["none", "writes", "all"]
POLICIES: tuple[ApprovalPolicy, ...] = ("none", "writes", "all")

POLICY_TEXT: dict[str, str] = {
    "none": "none (tools run without asking)",
    "writes": "writes (asks before a tool writes variables or runs code)",
    "all": "all (asks before every tool call)",
}

_policies: weakref.WeakKeyDictionary[Agent, ApprovalPolicy] = weakref.WeakKeyDictionary()
_contexts: weakref.WeakKeyDictionary[Agent, NotebookContext] = weakref.WeakKeyDictionary()


def notebook_context(agent: Agent) -> NotebookContext:
    """The conversation's notebook context: on or off, and the cells it has passed."""
    found = _contexts.get(agent)
    if found is None:
        found = _contexts[agent] = NotebookContext()
    return found


def notebook_context_text(agent: Agent) -> str:
    """The notebook-context line of ``%agent status``."""
    context = notebook_context(agent)
    if not context.on:
        return "notebook context: off (%agent notebook-context on turns it on)"
    line = f"notebook context: on, up to {CONTEXT_CHARS.value()} characters a run"
    last = next((m for m in reversed(agent.state.messages) if is_notebook_context(m)), None)
    if last is not None:
        line += f"; last sent: {describe(last).removeprefix('notebook context: ')}"
    return line


def approval_policy(agent: Agent) -> ApprovalPolicy:
    """The conversation's approval policy (``"none"`` until a cell set one)."""
    return _policies.get(agent, "none")


def as_policy(text: str) -> ApprovalPolicy:
    """``--approve``'s value as a policy; ValueError for anything else."""
    for policy in POLICIES:
        if text == policy:
            return policy
    raise ValueError(f"approval policy must be one of {', '.join(POLICIES)}, got {text!r}")


def set_approval_policy(agent: Agent, policy: ApprovalPolicy) -> None:
    if policy == "none":
        _policies.pop(agent, None)
    else:
        _policies[agent] = policy


def copy_settings(old: Agent, new: Agent) -> None:
    """``--new``: the fresh conversation keeps the old one's tools and approval policy."""
    new.state.tools = old.state.tools
    set_approval_policy(new, approval_policy(old))
    notebook_context(new).enabled = notebook_context(old).enabled


def tools_text(tools: list[AgentTool]) -> str:
    """The tools line of ``%agent status``: names, an MCP tool's with its server."""
    return ", ".join(tool_mark(t) for t in tools) if tools else "none"


__all__ = [
    "POLICIES",
    "POLICY_TEXT",
    "ApprovalPolicy",
    "approval_policy",
    "as_policy",
    "copy_settings",
    "notebook_context",
    "notebook_context_text",
    "set_approval_policy",
    "tools_text",
]
