"""What a saved conversation brings that is checked before it goes into a conversation.

A file given to ``%agent resume`` / ``%agent load`` may come from another kernel, another
version or another person, and its header sets things the user does not see in any cell:

- the system prompt: :func:`prompt_preview` shows its first characters on one line (the resume
  line and ``%agent status`` say which prompt is in force);
- the thinking level: :func:`thinking_level` takes one of Pi's levels only (anything else is
  left out, with a note, and the conversation keeps the level it has);
- the cost: a loaded transcript's replies have cost what they cost; :func:`uncounted_cost`
  says what the conversation's budget then leaves out (``Conversation.budget_baseline``),
  unless the user asked to count it (:data:`COUNT_COST`).

This module never prints and never changes an agent; :mod:`.conversations` applies it.
"""

from __future__ import annotations

from typing import cast, get_args

from ..ai import AgentThinkingLevel, redact

PREVIEW_CHARS = 80
COUNT_COST = "--count-cost"
"""The ``%agent resume`` / ``%agent load`` flag: the file's cost counts against the budget."""
LEVELS: tuple[str, ...] = get_args(AgentThinkingLevel)


def prompt_preview(prompt: str | None, limit: int = PREVIEW_CHARS) -> str:
    """``"You are a careful analyst…" (412 characters)``: the first ``limit`` characters on one
    line (every line break and control character shown as a space), redacted; ``none``."""
    if not prompt:
        return "none"
    flat = "".join(ch if ch.isprintable() else " " for ch in prompt[: limit + 1])
    shown = redact(flat[:limit])
    more = "…" if len(prompt) > limit else ""
    return f'"{shown}{more}" ({len(prompt)} characters)'


def thinking_level(value: str | None) -> tuple[AgentThinkingLevel | None, str | None]:
    """(the level to set, or ``None`` to keep the current one; a note when refused)."""
    if value is None:
        return None, None
    for level in LEVELS:
        if value == level:
            return cast(AgentThinkingLevel, level), None
    shown = prompt_preview(value, 20).rsplit(" (", 1)[0]
    return None, f"thinking level {shown} in the file is not one of {', '.join(LEVELS)}, so not set"


def uncounted_cost(spent: float, count_cost: bool) -> float:
    """The budget baseline after a load: the whole cost so far, or nothing when counted."""
    return 0.0 if count_cost else max(0.0, spent)


__all__ = [
    "COUNT_COST",
    "LEVELS",
    "PREVIEW_CHARS",
    "prompt_preview",
    "thinking_level",
    "uncounted_cost",
]
