"""The code blocks of the agent's answer as a cell: ``%agent code --answer``.

jupyter-ai's ``-f code`` puts a whole reply in a cell; here the fenced code blocks of the
conversation's last answer become the next cell (IPython's ``set_next_input``, as ``%agent
code --cell`` offers the run's code), and the panel offers each block on its own ("insert as
cell", ``js/answer_cells.js``, with the same header and the same rules).

Which blocks: those the panel's Markdown parser reads as fenced code (the same parser, so the
blocks are the ones the panel shows), labelled Python (``python``, ``py``, ``ipython``...)
or unlabelled when they parse as Python. Blocks in other languages (``bash``, ``sql``, an
output sample) are left out, and the cell's first comment counts them by language. The trust
rules of the offered cell (:mod:`.offered_cell`) hold: the code is redacted (the cell goes
into the saved notebook), a comment says so when that changed it, comments never echo model
text except a language name that is a plain one-line word, and a block holding a line break
that Python and the editor read differently (``\\r``, ``\\u2028``...) is left out with a
comment, so the cell shows the code that would run. Nothing here runs the code: the cell says
that it has not run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..ai import redact
from .code_cell import REDACTED, offer
from .offered_cell import one_line, parses
from .panel.markdown import MARKDOWN

ANSWER_HEADER = "# Code from the agent's last answer (it has not run): read it, then run it."
"""The cell's first line (js/answer_cells.js writes the same for one block)."""
BLOCK_HEADER = "# Code from the agent's answer (it has not run): read it, then run it."
"""The first line of the cell the panel's "insert as cell" makes of one block (js/answer_cells.js
writes it; a test checks the two agree)."""
PYTHON_LANGUAGES = frozenset(("python", "py", "python3", "py3", "ipython", "ipython3"))
#: Line breaks other than ``\n`` that Python or an editor breaks a line at (see offered_cell).
_ODD_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,20}")
ODD_BREAK = "left out: it holds a line break Python and the editor read differently"


@dataclass(frozen=True, slots=True)
class Fence:
    """One fenced code block of an answer: its language (``""`` when unlabelled), its code."""

    language: str
    code: str

    @property
    def python(self) -> bool:
        if self.language.lower() in PYTHON_LANGUAGES:
            return True
        return not self.language and parses(self.code)


def fences(text: str) -> list[Fence]:
    """The fenced code blocks of the Markdown ``text``, in order (as the panel renders it)."""
    found: list[Fence] = []
    for token in MARKDOWN.parse(text):
        if token.type == "fence":
            info = token.info.strip()
            found.append(Fence(info.split(maxsplit=1)[0] if info else "", token.content))
    return found


def last_answer(messages: Sequence[Any]) -> str | None:
    """The text of the last assistant message that has any (``None``: no answer yet)."""
    for message in reversed(messages):
        if getattr(message, "role", None) != "assistant":
            continue
        parts = [b.text for b in message.content if b.type == "text" and b.text.strip()]
        if parts:
            return "\n\n".join(parts)
    return None


def _language_name(language: str) -> str:
    return language if _LANGUAGE.fullmatch(language) and one_line(language) else "unnamed"


def _left_out(others: Sequence[Fence]) -> str:
    """``# left out: 2 bash blocks, 1 sql block`` (counted by language)."""
    counts: dict[str, int] = {}
    for fence in others:
        name = _language_name(fence.language) if fence.language else "unlabelled non-Python"
        counts[name] = counts.get(name, 0) + 1
    bits = [f"{n} {name} block{'' if n == 1 else 's'}" for name, n in counts.items()]
    return f"# left out: {', '.join(bits)}"


def block_text(code: str) -> str:
    """One block's code as it goes into the cell: redacted, with a comment when that changed
    it; left out (a comment) when it holds an odd line break."""
    if _ODD_BREAKS.search(code):
        return f"# {ODD_BREAK}"
    body = code.rstrip("\n")
    shown = redact(body)
    if shown != body:
        return f"# {REDACTED}\n{shown}"
    return shown


def answer_cell(text: str) -> tuple[str, str | None]:
    """The cell for an answer's ``text``: (cell, None), or ("", why there is none)."""
    blocks = fences(text)
    if not blocks:
        return "", "no code: the last answer has no fenced code block"
    python = [fence for fence in blocks if fence.python]
    others = [fence for fence in blocks if not fence.python]
    if not python:
        names = _left_out(others).removeprefix("# left out: ")
        return "", f"no code: the last answer's code blocks are not Python ({names})"
    parts = [ANSWER_HEADER]
    if others:
        parts[0] += "\n" + _left_out(others)
    numbered = len(python) > 1
    for n, fence in enumerate(python, 1):
        body = block_text(fence.code)
        parts.append(f"# block {n}\n{body}" if numbered else body)
    return "\n\n".join(parts) + "\n", None


def answer_command(shell: Any, agent: Any) -> str:
    """``%agent code --answer``: offer the last answer's Python code blocks as the next cell
    (then nothing to print), or say why there are none. ``agent``: the conversation's."""
    messages = getattr(getattr(agent, "state", None), "messages", None) or []
    text = last_answer(messages)
    if text is None:
        return "no code: no answer yet in this conversation"
    cell, why = answer_cell(text)
    if why is not None:
        return why
    if offer(shell, cell):
        return ""
    return f"(this shell cannot offer a cell; the code:)\n{cell}"


__all__ = [
    "ANSWER_HEADER",
    "BLOCK_HEADER",
    "PYTHON_LANGUAGES",
    "Fence",
    "answer_cell",
    "answer_command",
    "block_text",
    "fences",
    "last_answer",
]
