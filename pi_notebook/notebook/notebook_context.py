"""Notebook context: what happened in the notebook since a conversation's last run, for the model.

Each ``%%agent`` run starts with the cells run since the conversation's previous run (its first
run: the last :data:`FIRST_RUN_CELLS` cells): each cell's source (``In[n]``), a short repr of its
result (``Out[n]``) and its error (type, message, the cell's frame and the last ones), read
kernel-side by :mod:`pi_notebook.tools.cells`. ``%%agent`` cells and ``%agent`` lines are left
out; a cell the conversation was already shown is never shown again (:class:`NotebookContext`
keeps a cursor, the last cell number it passed). The whole is bounded by
``PI_NOTEBOOK_CONTEXT_CHARS`` (8,000 by default): newest cells first, older ones left out with a
line saying which, and each part cut with a marker, so a 1 MB error costs a few hundred
characters. It is redacted once, whole, through the one ``redact()``. Collecting walks back from
the running cell and stops at the cursor or the budget: it never walks the whole history.

Where it sits in the request: a message of its own in the transcript,
:class:`NotebookContextMessage` (role ``notebookContext``), just before the user's prompt, which
the run's ``convert_to_llm`` (:class:`WithNotebookContext`) turns into a user message of text.
This is how Pi's coding agent carries the output of a ``!command`` the user ran (its
``bashExecution`` message), and it was chosen over folding the text into the user's prompt
because the prompt stays the user's own words (``%agent history``, the transcript, replay and
the code cell see what was typed), the panel can show the context as an entry of its own, and a
transcript of a plain Agent simply drops it (Pi's default ``convert_to_llm``). Being in the
transcript, it is saved with the conversation (one line of the file, role and text) and takes
part in compaction like any message: an old one is summarised with the rest (the summariser
writes a custom message as ``[notebookContext]: text``), the recent ones stay as they were. It
is not put in the system prompt, which would change at every run and defeat prompt caching.

This module never prints, never writes the namespace and never sends the same cell twice to a
conversation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from ..ai import AgentMessage, CustomMessage, TextContent, UserMessage, now_ms, redact
from ..settings import CONTEXT_CHARS, NOTEBOOK_CONTEXT
from ..tools import Cell, CellLog, cell_at, cell_log, current_number, cut_text

ROLE = "notebookContext"
FIRST_RUN_CELLS = 5
"""A conversation's first run is shown this many of the last cells."""
MAX_VISITED = 2_000
"""At most this many cell numbers are looked at per run (``%%agent`` cells count, shown or
not): a bound on the walk even when every cell since the last run was an agent cell."""
FIRST_HEADER = "Notebook context: the last cells run in the user's notebook, oldest first."
LATER_HEADER = "Notebook context: the cells run since your last reply, oldest first."


class NotebookContextMessage(CustomMessage):
    """The notebook context sent with one run (a custom message: see the module docstring)."""

    role: Literal["notebookContext"] = ROLE  # type: ignore[assignment]
    content: str
    """The text the model gets, redacted."""
    cells: list[int] = Field(default_factory=list)
    """The numbers of the cells shown, oldest first."""
    errors: list[int] = Field(default_factory=list)
    """The numbers of the cells shown with an error."""
    left_out: tuple[int, int] | None = None
    """The range of cell numbers left out for the budget (first, last), if any."""


def is_notebook_context(message: Any) -> bool:
    return getattr(message, "role", None) == ROLE


def describe(message: Any) -> str:
    """One line naming what was sent: ``notebook context: In [3]–[5], an error in In [5]``."""
    cells: list[int] = list(getattr(message, "cells", None) or [])
    errors: list[int] = list(getattr(message, "errors", None) or [])
    if not cells:
        return "notebook context: no cells"
    shown = f"In [{cells[0]}]" if len(cells) == 1 else f"In [{cells[0]}]–[{cells[-1]}]"
    count = f"{len(cells)} cell{'' if len(cells) == 1 else 's'}"
    line = f"notebook context: {count} ({shown})"
    if errors:
        line += ", an error in " + ", ".join(f"In [{n}]" for n in errors)
    left_out = getattr(message, "left_out", None)
    if left_out:
        line += f"; In [{left_out[0]}]–[{left_out[1]}] left out"
    return line


def as_user_message(message: Any) -> UserMessage:
    """What the model gets for a notebook context message: a user message of its text."""
    return UserMessage(
        content=[TextContent(text=str(getattr(message, "content", "")))],
        timestamp=getattr(message, "timestamp", 0),
    )


class WithNotebookContext:
    """A ``convert_to_llm``: notebook context messages as user messages, then ``inner``."""

    def __init__(self, inner: Callable[[list[AgentMessage]], Any]) -> None:
        self.inner = inner

    def __call__(self, messages: list[AgentMessage]) -> Any:
        if any(is_notebook_context(m) for m in messages):
            messages = [as_user_message(m) if is_notebook_context(m) else m for m in messages]
        return self.inner(messages)


def with_notebook_context(
    convert: Callable[[list[AgentMessage]], Any],
) -> Callable[[list[AgentMessage]], Any]:
    """``convert`` that also turns notebook context into text (idempotent)."""
    return convert if isinstance(convert, WithNotebookContext) else WithNotebookContext(convert)


@dataclass(slots=True)
class NotebookContext:
    """One conversation's notebook context: on or off, and the last cell it has passed."""

    enabled: bool | None = None
    """On or off for this conversation (``%agent notebook-context``); ``None``: as
    ``PI_NOTEBOOK_CONTEXT`` says (on by default)."""
    seen: int | None = None
    """The number of the last cell before the one the conversation last ran in; ``None``
    before its first run
    (and after ``%agent reset``: the model no longer has what it was shown)."""

    @property
    def on(self) -> bool:
        return NOTEBOOK_CONTEXT.value() if self.enabled is None else self.enabled

    def status_line(self, messages: Sequence[Any]) -> str:
        """``%agent status``'s line: on or off, the budget, what the last context held."""
        if not self.on:
            return "notebook context: off (%agent notebook-context on turns it on)"
        line = f"notebook context: on, up to {CONTEXT_CHARS.value()} characters a run"
        last = next((m for m in reversed(messages) if is_notebook_context(m)), None)
        if last is not None:
            line += f"; last sent: {describe(last).removeprefix('notebook context: ')}"
        return line

    def command(self, word: str, messages: Sequence[Any]) -> str:
        """``%agent notebook-context [on|off]``: set it for the conversation (over
        ``PI_NOTEBOOK_CONTEXT``) or only show it; ValueError for another word."""
        word = word.strip().lower()
        if word not in ("", "on", "off"):
            raise ValueError(f"expected on or off, got {word!r}")
        if word:
            self.enabled = word == "on"
        return self.status_line(messages)

    def forget(self) -> None:
        """The conversation lost its messages: its next run is shown the last cells again."""
        self.seen = None

    def collect(
        self,
        shell: Any,
        *,
        budget: int | None = None,
        log: CellLog | None = None,
        skip: bool = False,
    ) -> NotebookContextMessage | None:
        """The context for a run starting now, or ``None`` (off, ``skip`` (``--no-context``),
        or no cell to show); moves
        the cursor past the cells before the running one either way, so what is skipped now is
        never sent. (The running cell itself comes up next time: an ``%%agent`` cell is left
        out then, a cell of code that started the run from Python is shown.)"""
        log = log or cell_log()
        now = current_number(shell, log)
        since = self.seen
        self.seen = now - 1
        if skip or not self.on:
            return None
        first = since is None or since >= now
        return gather(
            shell,
            now,
            0 if first else since or 0,
            first=first,
            budget=CONTEXT_CHARS.value() if budget is None else budget,
            log=log,
        )


def gather(
    shell: Any,
    now: int,
    after: int,
    *,
    first: bool,
    budget: int,
    log: CellLog,
) -> NotebookContextMessage | None:
    """The cells numbered above ``after`` and below ``now``, newest first until ``budget``
    (the first run: at most :data:`FIRST_RUN_CELLS` of them), as a message."""
    header = FIRST_HEADER if first else LATER_HEADER
    room = budget - len(header) - 80  # the line saying what was left out
    cells: list[Cell] = []
    texts: list[str] = []
    left_out: tuple[int, int] | None = None
    number = now - 1
    lowest = max(after, now - 1 - MAX_VISITED)
    while number > lowest:
        if first and len(cells) >= FIRST_RUN_CELLS:
            break
        cell = cell_at(shell, number, log)
        if cell is not None:
            text = cell.text()
            if len(text) > room:
                if cells:  # this cell and the older ones wait for notebook_cells
                    left_out = (after + 1, number)
                    break
                text = cut_text(text, max(room, 200))  # the newest cell is always there, cut
            cells.append(cell)
            texts.append(text)
            room -= len(text) + 2
        number -= 1
    if not cells:
        return None
    cells.reverse()
    texts.reverse()
    parts = [header]
    if left_out is not None:
        parts.append(
            f"(In [{left_out[0]}] to In [{left_out[1]}] left out to keep this short; "
            "ask the user, or read them with a tool if you have one.)"
        )
    parts.extend(texts)
    return NotebookContextMessage(
        content=redact("\n\n".join(parts)),
        cells=[c.number for c in cells],
        errors=[c.number for c in cells if c.error is not None],
        left_out=left_out,
    )


def with_context(
    prompt: str | list[AgentMessage],
    context: NotebookContext,
    shell: Any,
    *,
    skip: bool = False,
) -> str | list[AgentMessage]:
    """A run's prompt with the notebook context before it: ``[context, user message]`` (the
    user message as ``Agent.prompt`` builds it from text), or the prompt as it was (no context
    to send, no shell, or a list of messages: a replay's, which are the recording's)."""
    if not isinstance(prompt, str) or shell is None:
        return prompt
    message = context.collect(shell, skip=skip)
    if message is None:
        return prompt
    return [message, UserMessage(content=[TextContent(text=prompt)], timestamp=now_ms())]


def sent_cells(messages: Sequence[Any]) -> list[int]:
    """The cell numbers the notebook context messages of ``messages`` carried."""
    numbers: list[int] = []
    for message in messages:
        if is_notebook_context(message):
            numbers.extend(getattr(message, "cells", None) or [])
    return numbers


__all__ = [
    "FIRST_RUN_CELLS",
    "ROLE",
    "NotebookContext",
    "NotebookContextMessage",
    "WithNotebookContext",
    "as_user_message",
    "describe",
    "gather",
    "is_notebook_context",
    "sent_cells",
    "with_context",
    "with_notebook_context",
]
