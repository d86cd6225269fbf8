"""The words of a conversation's settings: the approval policies and how they read.

A conversation (:class:`~.conversation.Conversation`) keeps its tools on its Agent
(``agent.state.tools``) and its approval policy (``--approve writes|all|none``) as its own
attribute. Both stay for every later cell (also through ``--new``, which copies them, and
``%agent reset``, which clears only the messages) until a cell changes them, so a policy can
never lapse while the tools it guards are still there. The tools answered *Always allow* in an
approval are the conversation's too, but shorter-lived: ``%agent reset``, ``--new`` and a cell's
``--approve`` (which states the policy afresh) forget them.

This module must never run a tool, ask for an approval or touch the notebook namespace.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from ..agent import AgentTool
from ..tools import tool_mark

ApprovalPolicy: TypeAlias = Literal["none", "writes", "all"]
POLICIES: tuple[ApprovalPolicy, ...] = ("none", "writes", "all")

POLICY_TEXT: dict[str, str] = {
    "none": "none (tools run without asking)",
    "writes": "writes (asks before a tool writes variables or runs code)",
    "all": "all (asks before every tool call)",
}


def as_policy(text: str) -> ApprovalPolicy:
    """``--approve``'s value as a policy; ValueError for anything else."""
    for policy in POLICIES:
        if text == policy:
            return policy
    raise ValueError(f"approval policy must be one of {', '.join(POLICIES)}, got {text!r}")


def approvals_text(policy: str, always_allowed: set[str]) -> str:
    """The approvals line of ``%agent status``: the policy, and the tools always allowed."""
    text = POLICY_TEXT[policy]
    if always_allowed:
        names = ", ".join(sorted(always_allowed))
        text += f"; always allowed: {names} (until %agent reset or --approve)"
    return text


def tools_text(tools: list[AgentTool]) -> str:
    """The tools line of ``%agent status``: names, an MCP tool's with its server."""
    return ", ".join(tool_mark(t) for t in tools) if tools else "none"


__all__ = [
    "POLICIES",
    "POLICY_TEXT",
    "ApprovalPolicy",
    "approvals_text",
    "as_policy",
    "tools_text",
]
