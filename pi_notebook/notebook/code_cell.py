"""The agent's namespace writes as code: the cell offered below a ``%%agent`` cell.

A :class:`CodeRecorder` listens to one run and keeps, in order, what each successful call of a
tool that writes the namespace did: the code of ``run_python``, an assignment for
``set_variable`` (see :func:`assignment`), and a comment for what cannot be code (another tool
that writes, a failed call that wrote before it failed). :class:`RunCode` turns that into the
cell text, redacted (``pi_notebook.ai.redact``: the text goes to the front end and into the
saved notebook) and leaves out what ``%agent undo`` took back (:meth:`RunCode.after_undo`).
The cell is the code that ran plus comments that cannot run: a comment names the tool and the
call's number in the run, never the provider's call id, and echoes model text only as one
printable line (:mod:`.offered_cell`).

:func:`offer` hands the text to the front end with IPython's ``set_next_input`` payload
(``replace=False``: a new cell below), which ipykernel sends in the cell's ``execute_reply``,
one per execution. :func:`headless_reason` says when not to: an execute request that allows no
input or keeps no history comes from nbclient, papermill or nbval (tested against what they
send), which run a notebook rather than edit it.

This module never runs the recorded code, never evaluates an expression (a literal is read
with ``ast.literal_eval`` only) and never keeps a value from the namespace after the call.
"""

from __future__ import annotations

import ast
import keyword
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..agent import Agent, AgentEvent, ToolExecutionEndEvent, ToolExecutionStartEvent
from ..ai import redact
from ..settings import CODE_CELL
from .config import settings
from .offered_cell import names_text, one_line, parses, redacted_names, tool_label

CELL_HEADER = "# The agent's code from the %%agent run above: run it to recreate its variables."
RUN_PYTHON = "run_python"
SET_VARIABLE = "set_variable"
LITERAL_CHARS = 2000
"""A value whose repr is longer is not written as a literal (the expression is used)."""
NOT_A_LITERAL = "not a literal value: the expression runs again and may give another value"
REDACTED = "a secret was redacted from this code"


@dataclass
class CodeBlock:
    """What one tool call contributes: code under a header comment, or a comment alone."""

    call_id: str
    tool: str
    code: str | None
    """``None``: the call's effect cannot be written as code (the note says why)."""
    note: str | None = None
    writes: frozenset[str] = frozenset()
    """The names the call created, changed or deleted."""
    undone: bool = False
    number: int | None = None
    """The call's place among the run's tool calls (1, 2, ...), as its cards are ordered."""

    def text(self, number: int | None = None) -> str:
        """The block under its comment; ``number``: the call's place in the run. Nothing a
        model or provider chose (the call's id, a name that is not an identifier, a line
        break) is written: the comment names the tool and the number only."""
        code = None if self.code is None else redact(self.code)
        note = self.note
        if code is not None and code != self.code:
            if not parses(code):  # a secret outside a string: the code would not run as shown
                code = None
                note = f"{REDACTED} where it cannot stay code; the code is left out"
            else:
                names = names_text(redacted_names(self.code or "", code, self.writes))
                differ = f"; {names} will not get the agent's values" if names else ""
                note = f"{note}; {REDACTED}{differ}" if note else f"{REDACTED}{differ}"
        header = f"# {tool_label(self.tool, number)}" + (f"; {note}" if note else "")
        return header if code is None else f"{header}\n{code}"


@dataclass
class RunCode:
    """The code of one run, in call order."""

    blocks: list[CodeBlock] = field(default_factory=list)
    offered: bool = False
    """Offered as the next cell at the end of the run."""
    not_offered: str | None = None
    """Why it was not offered (``None`` when it was, or when there was no code)."""

    @property
    def wrote(self) -> bool:
        return any(block.writes for block in self.blocks)

    def live_blocks(self) -> list[CodeBlock]:
        return [block for block in self.blocks if not block.undone]

    def has_code(self) -> bool:
        return any(block.code is not None for block in self.live_blocks())

    def text(self) -> str:
        """The cell: a header line, then each block; ``""`` when there is no code."""
        if not self.has_code():
            return ""
        numbered = [
            (block.number or n, block) for n, block in enumerate(self.blocks, 1) if not block.undone
        ]
        parts = [CELL_HEADER, *(block.text(n) for n, block in numbered)]
        return "\n\n".join(parts) + "\n"

    def after_undo(self, restored: Iterable[str], removed: Iterable[str], left: bool) -> None:
        """``%agent undo`` restored or removed these names (``left``: some of the run's writes
        stayed). A call is undone when every name it wrote was; one that wrote nothing is
        undone with the whole run (its code may read what is gone)."""
        undone = set(restored) | set(removed)
        if not undone:
            return
        for block in self.blocks:
            if block.writes:
                block.undone = block.undone or block.writes <= undone
            elif not left:
                block.undone = True


# -- from a tool call to code --------------------------------------------------------------------


def _literal(text: str) -> bool:
    try:
        ast.literal_eval(text)
    except Exception:
        return False
    return True


def literal_repr(value: Any) -> str | None:
    """``repr(value)`` when ``ast.literal_eval`` gives back an equal value of the same type."""
    try:
        text = repr(value)
        if len(text) > LITERAL_CHARS:
            return None
        back = ast.literal_eval(text)
        return text if type(back) is type(value) and bool(back == value) else None
    except Exception:
        return None


def _same_expression(statement: str, expression: str) -> bool:
    """``NAME = EXPR`` written on one line binds the value of ``EXPR`` (no walrus, no tuple
    surprises): its right-hand side parses to the same tree as the expression alone."""
    try:
        tree = ast.parse(statement)
        alone = ast.parse(expression, mode="eval").body
    except (SyntaxError, ValueError):
        return False
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assign):
        return False
    return ast.dump(tree.body[0].value) == ast.dump(alone)


def assignment(name: str, expression: str, value: Any, has_value: bool) -> tuple[str, str | None]:
    """The code for ``set_variable(name, expression)`` that left ``value``; (code, note).

    - The model's expression when it is a literal itself (its own text, as written).
    - Otherwise the value's repr when it is a literal (``literal_repr``), the expression
      as a trailing comment: this is the value the agent left, whatever the expression would
      give now.
    - Otherwise the expression, with a note: the value cannot be written as a literal, and
      re-evaluating the expression is the code that made it (as ``run_python`` code is), but it
      may not give the same value (randomness, time, data changed since).
    """
    expr = expression.strip()
    if _literal(expr):
        return _bind(name, expr), None
    literal = literal_repr(value) if has_value else None
    if literal is not None:
        comment = f"  # {expr}" if one_line(expr) else ""  # never a line break: see offered_cell
        return f"{name} = {literal}{comment}", None
    return _bind(name, expr), NOT_A_LITERAL


def _bind(name: str, expr: str) -> str:
    single = f"{name} = {expr}"
    if "\n" not in expr and _same_expression(single, expr):
        return single
    return f"{name} = (\n{expr}\n)"  # as set_variable itself runs it


def _names(diff: Any) -> frozenset[str] | None:
    """The names of a notebook tool's ``namespace_diff`` detail; ``None`` without one."""
    if not isinstance(diff, dict):
        return None
    names: set[str] = set()
    for key in ("created", "imported", "changed", "deleted"):
        items = diff.get(key) or []
        if isinstance(items, list):
            names.update(str(item) for item in items)
    return frozenset(names)


class CodeRecorder:
    """An agent listener for one run: the code of its namespace-writing tool calls."""

    def __init__(self, agent: Agent, namespace: dict[str, Any]) -> None:
        self._agent = agent
        self._namespace = namespace
        self._args: dict[str, Any] = {}
        self._numbers: dict[str, int] = {}
        self._calls = 0
        self.run = RunCode()

    def _writes(self, tool_name: str) -> bool:
        for item in self._agent.state.tools:
            if item.name == tool_name:
                return bool(item.writes_namespace)
        return False

    def __call__(self, event: AgentEvent, signal: Any = None) -> None:
        match event:
            case ToolExecutionStartEvent():
                self._calls += 1  # every call counts: the comment's number is the card's order
                if self._writes(event.tool_name):
                    self._args[event.tool_call_id] = event.args
                    self._numbers[event.tool_call_id] = self._calls
            case ToolExecutionEndEvent() if event.tool_call_id in self._args:
                args = self._args.pop(event.tool_call_id)
                number = self._numbers.pop(event.tool_call_id, None)
                block = self._block(event, args if isinstance(args, dict) else {})
                if block is not None:
                    block.number = number
                    self.run.blocks.append(block)
            case _:
                pass

    def _block(self, event: ToolExecutionEndEvent, args: dict[str, Any]) -> CodeBlock | None:
        call_id, tool_name = event.tool_call_id, event.tool_name
        details = getattr(event.result, "details", None)
        writes = _names(details.get("namespace_diff") if isinstance(details, dict) else None)
        if event.is_error:
            if not writes:
                return None  # failed without writing: left out
            listed = names_text(writes)
            note = f"failed after writing {listed}; its code is left out"
            return CodeBlock(call_id, tool_name, None, note, writes)
        code = args.get("code")
        if tool_name == RUN_PYTHON and writes is not None and isinstance(code, str):
            return CodeBlock(call_id, tool_name, code.strip("\n"), None, writes)
        name, expression = args.get("name"), args.get("expression")
        if (
            tool_name == SET_VARIABLE
            and writes is not None
            and isinstance(name, str)
            and name.isidentifier()
            and not keyword.iskeyword(name)
            and isinstance(expression, str)
        ):
            has_value = name in self._namespace
            value = self._namespace.get(name)
            text, remark = assignment(name, expression, value, has_value)
            return CodeBlock(call_id, tool_name, text, remark, writes)
        if writes:
            note = f"wrote {names_text(writes)}; not code, so not repeated here"
        else:  # a tool that changes things (an MCP server's, say) and says no more
            note = "its effects are not code and are not repeated here"
        return CodeBlock(call_id, tool_name, None, note, writes or frozenset())


# -- the last run's code, per conversation --------------------------------------------------------


class CodeRecord:
    """A conversation's last run's code and its last run that wrote (what ``%agent undo``
    takes back): kept on the :class:`~.conversation.Conversation`."""

    def __init__(self) -> None:
        self.last: RunCode | None = None
        self.last_writing: RunCode | None = None

    def remember(self, run: RunCode) -> None:
        """``run`` is the last run (and the last writing run if it wrote)."""
        self.last = run
        if run.wrote:
            self.last_writing = run

    def after_undo(self, restored: Iterable[str], removed: Iterable[str], left: bool) -> None:
        """``%agent undo`` undid the last writing run (the one the undo journal holds)."""
        if self.last_writing is not None:
            self.last_writing.after_undo(restored, removed, left)


class HasCode(Protocol):
    @property
    def code(self) -> CodeRecord: ...


def last_code(conversation: HasCode | Agent | None) -> RunCode | None:
    """The code of the conversation's (or the Agent's conversation's) last ``%%agent`` run,
    if it had one."""
    if isinstance(conversation, Agent):
        from .session import get_session

        conversation = get_session().conversation_of(conversation)
    return conversation.code.last if conversation is not None else None


# -- offering the cell -------------------------------------------------------------------------


def headless_reason(shell: Any) -> str | None:
    """Why the current execute request is not from a person at a notebook; ``None`` if it is.

    nbclient and papermill send ``allow_stdin: false``; nbval sends that and
    ``store_history: false``; a front end (JupyterLab, Notebook 7, VS Code) sends both true.
    Outside ipykernel (a terminal IPython) there is no request: interactive."""
    kernel = getattr(shell, "kernel", None)
    get_parent = getattr(kernel, "get_parent", None)
    if not callable(get_parent):
        return None
    try:
        parent = get_parent("shell")
    except TypeError:
        parent = get_parent()
    except Exception:
        return None
    content = parent.get("content") if isinstance(parent, dict) else None
    if not isinstance(content, dict) or content.get("code") is None:
        return None
    if content.get("allow_stdin") is False:
        return "the notebook is being executed (nbclient, papermill, nbval: no input allowed)"
    if content.get("store_history") is False or content.get("silent"):
        return "the request keeps no history (a silent or nbval execution)"
    return None


def offer(shell: Any, text: str) -> bool:
    """Offer ``text`` as a new cell below the running one; False if the shell cannot."""
    set_next_input = getattr(shell, "set_next_input", None)
    if not text or not callable(set_next_input):
        return False
    set_next_input(text, replace=False)
    return True


def off_reason(*, no_code_cell: bool, plain: bool, background: bool) -> str | None:
    """Why the code cell is off for this run (``None``: offer it, unless headless)."""
    if no_code_cell:
        return "--no-code-cell"
    if not settings.code_cell_on():
        return f"turned off ({CODE_CELL.variable} or pi_notebook.notebook.settings.code_cell)"
    if plain:
        return "plain mode"
    if background:
        return "a --background run ends after its cell's reply; %agent code --cell offers it"
    return None


def finish_run(shell: Any, record: CodeRecord, recorder: CodeRecorder, off: str | None) -> RunCode:
    """End of a run: remember its code and offer it as the next cell unless ``off`` says why
    not (or the request is headless)."""
    run = recorder.run
    record.remember(run)
    if run.has_code():
        reason = off if off is not None else headless_reason(shell)
        if reason is None and offer(shell, run.text()):
            run.offered = True
        else:
            run.not_offered = reason or "this shell cannot offer a cell"
    return run


CODE_USAGE = "%agent code: usage: %agent code [--cell|--answer]"


def code_command(shell: Any, conversation: HasCode | None, args: str) -> str:
    """``%agent code [--cell|--answer]``: the last run's code (to print), or offer it as the
    next cell (then nothing to print); ``--answer``: the last answer's code blocks as the next
    cell (:mod:`.answer_code`). Raises ``ValueError`` (:data:`CODE_USAGE`) for other
    arguments."""
    flag = args.strip()
    if flag not in ("", "--cell", "--answer"):
        raise ValueError(CODE_USAGE)
    if flag == "--answer":
        from .answer_code import answer_command

        return answer_command(shell, getattr(conversation, "agent", None))
    run = last_code(conversation)
    if run is None:
        return "no code: no %%agent run yet in this conversation"
    text = run.text()
    if not text:
        if any(block.undone for block in run.blocks):
            return "no code: the last run's code was undone (%agent undo)"
        return "no code: the last run ran no run_python or set_variable that succeeded"
    if flag == "--cell":
        if offer(shell, text):
            return ""
        return f"(this shell cannot offer a cell; the code:)\n{text}"
    return text


__all__ = [
    "CELL_HEADER",
    "CodeBlock",
    "CodeRecord",
    "CodeRecorder",
    "HasCode",
    "RunCode",
    "assignment",
    "code_command",
    "finish_run",
    "headless_reason",
    "last_code",
    "literal_repr",
    "off_reason",
    "offer",
]
