"""The built-in notebook tools and the workspace they share: one per notebook namespace.

:class:`Workspace` binds a namespace (the kernel's ``user_ns``, or any dict in tests) to its
:class:`~.namespace.Guard` (what is visible, what is protected) and its
:class:`~.journal.UndoJournal`. :func:`notebook_tools` returns ``list_variables``,
``inspect_variable``, ``run_python`` and ``set_variable``, written with ``@tool`` (their schemas
come from the signatures; the reading tools, being sync, run on a worker thread like any sync
tool). Every write goes through
:meth:`Workspace.run`: protected names are refused before the code runs (and put back if the
code rebinds one dynamically), the names the code mentions are snapshotted so in-place changes
are seen and can be undone, and the result carries a ``namespace_diff``.

This module never imports IPython unless no namespace was given (or a tool reads the cells),
and never prints.
"""

from __future__ import annotations

import ast
import contextvars
import sys
import weakref
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..agent import AgentTool, AgentToolResult, ToolFailure
from ..ai import AbortSignal, TextContent, redact
from .activity import Activity
from .cells import cell_log, cells_text, recent_cells
from .execution import DEFAULT_OUTPUT_CHARS, RunOutcome, run_code
from .function_tool import tool
from .journal import (
    ABSENT,
    DEFAULT_LIMIT_BYTES,
    IMMUTABLE,
    Snapshot,
    UndoJournal,
    UndoReport,
    deep_size,
)
from .namespace import (
    Guard,
    NamespaceDiff,
    bound_names,
    check_identifier,
    diff,
    import_names,
    is_agent_object,
    loaded_names,
    mutable_names,
    refusal_text,
)
from .summary import DEFAULT_MAX_CHARS, bounded, short_facts, short_repr, summarize

NOTEBOOK_TOOL_NAMES = (
    "list_variables",
    "inspect_variable",
    "run_python",
    "set_variable",
    "notebook_cells",
    "last_error",
)


class ToolError(ToolFailure):
    """A tool failure whose text is the error result the model sees (details kept)."""


def _ipython_namespace() -> tuple[dict[str, Any], Callable[[], Container[str]]]:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise ToolError(
            "no notebook namespace: not running in IPython; pass namespace= to notebook_tools()"
        )
    hidden: dict[str, Any] = shell.user_ns_hidden
    namespace: dict[str, Any] = shell.user_ns
    return namespace, lambda: hidden.keys()


def _nothing() -> Container[str]:
    return ()


@dataclass
class WriteResult:
    outcome: RunOutcome
    diff: NamespaceDiff
    notes: list[str] = field(default_factory=list)
    refused: bool = False
    """The code rebound a protected name (it was put back): the call is an error."""


class Workspace:
    """A namespace, what protects it and the undo records of the conversations writing to it."""

    def __init__(
        self,
        namespace: dict[str, Any],
        *,
        hidden: Callable[[], Container[str]] = _nothing,
        protected: Iterable[str] = (),
        undo_limit_bytes: int = DEFAULT_LIMIT_BYTES,
        activity: Activity | None = None,
    ) -> None:
        self.namespace = namespace
        self.guard = Guard(hidden=hidden, protected=set(protected))
        self.undo_limit_bytes = undo_limit_bytes
        self.journal = UndoJournal(undo_limit_bytes)
        """The record of tool calls made outside a conversation's run (the Agent API)."""
        self._records: weakref.WeakKeyDictionary[Any, UndoJournal] = weakref.WeakKeyDictionary()
        self.activity = activity if activity is not None else Activity()
        """Who else writes the namespace (cells, other runs): their writes are not the agent's."""

    # -- the run boundary ------------------------------------------------------------------

    def record(self, conversation: Any = None) -> UndoJournal:
        """The undo record of ``conversation`` (``None``: calls outside a conversation's run;
        an :class:`UndoJournal`: that record, as its owner keeps it, e.g. the notebook's
        ``Conversation``)."""
        if conversation is None:
            return self.journal
        if isinstance(conversation, UndoJournal):
            return conversation
        found = self._records.get(conversation)
        if found is None:
            found = self._records[conversation] = UndoJournal(self.undo_limit_bytes)
        return found

    def _current(self) -> UndoJournal:
        active = _active_record.get()
        if active is not None and active[0] is self:
            return active[1]
        return self.journal

    def begin_run(self, conversation: Any = None) -> Callable[[], None]:
        """A new run of ``conversation``: ``undo`` will go back to the namespace as it is now.

        With a conversation, the tool calls of this task (and the tasks it starts) write to its
        record until the returned function is called (at the end of the run)."""
        journal = self.record(conversation)
        activity = self.activity
        journal.begin_run(activity.current_cell, own_cell_known=conversation is not None)
        if conversation is None:
            return _nothing_to_end
        token = _active_record.set((self, journal))
        activity.begin_run(journal)

        def end() -> None:
            activity.end_run(journal)
            _active_record.reset(token)

        return end

    def undo(self, conversation: Any = None, *, include_imports: bool = False) -> UndoReport:
        """Restore what the last run of ``conversation`` wrote, where the user has not changed
        it since (as far as the record could keep it). Modules its imports bound stay unless
        ``include_imports`` (``%agent undo --all``)."""
        return self.record(conversation).undo(self.namespace, include_imports=include_imports)

    def protect(self, *names: str) -> None:
        self.guard.protected.update(names)

    def unprotect(self, *names: str) -> None:
        self.guard.protected.difference_update(names)

    # -- reading -------------------------------------------------------------------------------

    def variables(self) -> dict[str, Any]:
        """The user's variables (no modules, private names, IPython's or the agent's objects)."""
        return {
            name: value
            for name, value in list(self.namespace.items())
            if self.guard.is_visible(name, value) and not is_agent_object(value)
        }

    def lookup(self, path: str) -> Any:
        """A variable, or an attribute path below one (``df.columns``)."""
        root, *attributes = path.strip().split(".")
        if (
            not root.isidentifier()
            or root not in self.namespace
            or self.guard.is_ipython_name(root)
        ):
            raise ToolError(f"no variable named {root!r}; list_variables shows what exists")
        value = self.namespace[root]
        for i, attribute in enumerate(attributes):
            if not attribute.isidentifier():
                raise ToolError(f"{path!r}: {attribute!r} is not an attribute name")
            try:
                value = getattr(value, attribute)
            except Exception as exc:
                where = ".".join([root, *attributes[:i]])
                raise ToolError(f"{where} has no attribute {attribute!r} ({exc})") from None
        return value

    # -- writing -------------------------------------------------------------------------------

    def _trackable(self, name: str) -> bool:
        return not self.guard.is_ipython_name(name)

    def _is_builtin(self, name: str) -> bool:
        return name not in self.namespace

    async def run(
        self,
        code: str,
        signal: AbortSignal | None,
        *,
        output_chars: int = DEFAULT_OUTPUT_CHARS,
        grace: float = 1.0,
        on_output: Callable[[str, str], None] | None = None,
    ) -> WriteResult:
        """Run ``code`` in the namespace, guarded, diffed and journaled (see the module doc).

        ``on_output(stdout, stderr)``: the output so far, while the code runs (batched)."""
        try:
            tree = ast.parse(code, "<run_python>", "exec")
        except SyntaxError as exc:
            raise ToolError(f"SyntaxError: {exc.msg} (line {exc.lineno})") from None
        ns = self.namespace
        refused = self.guard.refusals(bound_names(tree, imports=False), ns)
        if refused:
            raise ToolError(refusal_text(refused))
        journal = self._current()
        own = loaded_names(tree) | bound_names(tree)  # before run_code consumes the tree
        imports = import_names(tree)
        before = {name: value for name, value in ns.items() if self._trackable(name)}
        snapshots = self._snapshots(journal, mutable_names(tree, self._is_builtin), before)
        window = self.activity.open_call(journal, journal.own_cell, journal.own_cell_known)
        try:
            try:  # compile() may still refuse what parsed ("return" outside a function, ...)
                outcome = await run_code(
                    code,
                    ns,
                    signal,
                    tree=tree,
                    output_chars=output_chars,
                    grace=grace,
                    on_output=on_output,
                )
            except SyntaxError as exc:
                raise ToolError(f"SyntaxError: {exc.msg} (line {exc.lineno})") from None
            # While another writer was active, only the names this code mentions are its own.
            mine = own if window.close() else None
            return self._settle(journal, before, snapshots, outcome, mine, imports)
        finally:
            window.close()
            journal.end_call(snapshots.values())

    def _snapshots(
        self, journal: UndoJournal, names: set[str], before: dict[str, Any]
    ) -> dict[str, Snapshot]:
        """Copies of the values the code may change in place, smallest first, in one budget."""
        sized: list[tuple[int, str, int | None]] = []
        for name in names:
            if name not in before:
                continue
            value = before[name]
            if isinstance(value, IMMUTABLE) or is_agent_object(value):
                continue
            size = deep_size(value)
            sized.append((-1 if size is None else size, name, size))
        sized.sort()
        return {name: journal.snapshot(name, before[name], size) for _, name, size in sized}

    def _settle(
        self,
        journal: UndoJournal,
        before: dict[str, Any],
        snapshots: dict[str, Snapshot],
        outcome: RunOutcome,
        mine: set[str] | None,
        imports: set[str],
    ) -> WriteResult:
        ns = self.namespace
        after = {name: value for name, value in ns.items() if self._trackable(name)}
        if mine is not None:  # other cells' writes are theirs: left out of the diff and undo
            before = {k: v for k, v in before.items() if k in mine}
            after = {k: v for k, v in after.items() if k in mine}
        mutated = {
            name
            for name, snap in snapshots.items()
            if name in after and after[name] is snap.original and snap.changed_in_place(after[name])
        }
        changes = diff(before, after, mutated, imports)
        notes: list[str] = []
        # Protected names rebound at run time (globals()[...] and the like) are put back.
        violations = {}
        for name in changes.written:
            reason = self.guard.protection(name, before if name in before else {})
            if reason is not None and name not in mutated:
                violations[name] = reason
                if name in before:
                    ns[name] = before[name]
                else:
                    ns.pop(name, None)
        if violations:
            now = {
                k: v for k, v in ns.items() if self._trackable(k) and (mine is None or k in mine)
            }
            changes = diff(before, now, mutated, imports)
            notes.append(f"{refusal_text(violations)}; put back as they were")
        for name in [*changes.created, *changes.imported]:
            journal.keep(name, ABSENT)
        for name in [*changes.changed, *changes.deleted]:
            snap = snapshots.get(name)
            if (
                snap is not None
                and snap.kept
                and (name in mutated or snap.changed_in_place(before[name]))
            ):  # changed in place (perhaps before it was rebound): the copy is the old value
                journal.keep_snapshot(snap)
            else:
                journal.keep(name, before[name])
        for name in changes.written:  # a module an import bound: kept by a plain undo
            value = ns.get(name, ABSENT)
            journal.left(name, value, imported=name in imports and isinstance(value, ModuleType))
        unchecked = {
            name: snap.reason
            for name, snap in snapshots.items()
            if snap.reason is not None and name in after and after[name] is before.get(name)
        }
        for name, reason in unchecked.items():
            journal.unverified(name, reason)
        if unchecked:
            listed = ", ".join(f"{name} ({reason})" for name, reason in sorted(unchecked.items()))
            notes.append(f"not checked for in-place changes (no copy kept): {listed}")
        return WriteResult(outcome, changes, notes, refused=bool(violations))


_active_record: contextvars.ContextVar[tuple[Workspace, UndoJournal] | None] = (
    contextvars.ContextVar("pi_notebook_undo_record", default=None)
)
"""The record the tool calls of the running conversation write to (set by ``begin_run``)."""


def _nothing_to_end() -> None:
    pass


# -- workspaces per namespace --------------------------------------------------------------------

_workspaces: dict[int, Workspace] = {}


def _shell_of(namespace: dict[str, Any]) -> Any:
    """The running IPython shell when ``namespace`` is its ``user_ns``, else ``None``."""
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    shell = get_ipython()
    return shell if shell is not None and shell.user_ns is namespace else None


def workspace(namespace: dict[str, Any] | None = None) -> Workspace:
    """The workspace of ``namespace`` (default: the running IPython shell's ``user_ns``)."""
    if namespace is None:
        namespace, _ = _ipython_namespace()
    found = _workspaces.get(id(namespace))
    if found is None or found.namespace is not namespace:
        shell = _shell_of(namespace)
        if shell is None:
            found = Workspace(namespace)
        else:
            hidden: dict[str, Any] = shell.user_ns_hidden
            activity = Activity()
            activity.attach(shell)  # the user's cells write this namespace too
            found = Workspace(namespace, hidden=lambda: hidden.keys(), activity=activity)
        _workspaces[id(namespace)] = found
    return found


def begin_run(
    namespace: dict[str, Any] | None = None, conversation: Any = None
) -> Callable[[], None]:
    """Start a new undo step of ``conversation`` (the magic calls this at the start of every
    ``%%agent`` run, with the run's Agent); call what it returns when the run ends."""
    return workspace(namespace).begin_run(conversation)


def undo(
    namespace: dict[str, Any] | None = None,
    conversation: Any = None,
    *,
    include_imports: bool = False,
) -> UndoReport:
    """Restore the variables the last run of ``conversation`` wrote (where the user has not
    changed them since); the report says what was kept and what could not be restored.
    Names its ``import`` statements bound to modules stay unless ``include_imports``."""
    return workspace(namespace).undo(conversation, include_imports=include_imports)


def protect(*names: str, namespace: dict[str, Any] | None = None) -> None:
    """Mark ``names`` protected: the agent's tools may not write them."""
    workspace(namespace).protect(*names)


def unprotect(*names: str, namespace: dict[str, Any] | None = None) -> None:
    workspace(namespace).unprotect(*names)


# -- the tools -------------------------------------------------------------------------------


def _text(text: str, details: Any = None) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], details=details)


@dataclass
class _Limits:
    max_chars: int
    output_chars: int
    grace: float


def _list_variables(ws: Workspace, limits: _Limits) -> AgentToolResult:
    rows = [{"name": name, **short_facts(value)} for name, value in sorted(ws.variables().items())]
    lines = [
        " ".join(
            str(part)
            for part in (
                f"{row['name']}:",
                row["type"],
                row.get("shape"),
                f"[{row['size']}]" if "size" in row else None,
            )
            if part
        )
        for row in rows
    ]
    text = "\n".join(lines) if lines else "(no user variables)"
    return _text(bounded(text, limits.max_chars), {"variables": rows})


def _inspect_variable(ws: Workspace, limits: _Limits, name: str, max_chars: int) -> AgentToolResult:
    value = ws.lookup(name)
    limit = max(200, min(int(max_chars), limits.max_chars))
    return _text(f"{name}: {summarize(value, limit)}"[: limit + len(name) + 2])


def _write_result(result: WriteResult, limits: _Limits, extra: list[str]) -> AgentToolResult:
    outcome = result.outcome
    output = output_text(outcome.stdout, outcome.stderr)
    parts: list[str] = [output] if output else []
    parts.extend(extra)
    details: dict[str, Any] = {
        "namespace_diff": result.diff.as_dict(),
        "seconds": round(outcome.seconds, 4),
    }
    if outcome.aborted:
        parts.append(
            "aborted"
            + (
                ": the code is still inside a blocking call and stops when it returns"
                if outcome.still_running
                else f" after {outcome.seconds:.2f} s"
            )
        )
    elif outcome.error is not None:
        parts.append(outcome.error)
    parts.append(f"namespace: {result.diff.text()}")
    parts.extend(result.notes)
    shown = outcome.shown
    if shown is not None and (shown.notes or shown.dropped):
        parts.append(shown.text())
        if shown.rich:
            details["displays"] = shown.rich
    text = bounded("\n".join(parts), limits.max_chars + 2 * limits.output_chars)
    if outcome.aborted or outcome.error is not None or result.refused:
        raise ToolError(text, details)  # the panel still shows what was written before
    images = shown.images if shown is not None else []
    return AgentToolResult(content=[TextContent(text=text), *images], details=details)


def _value_text(value: Any, max_chars: int) -> str:
    """A short scalar as its repr, anything else as a bounded summary."""
    if isinstance(value, int | float | complex | bool) or (
        isinstance(value, str | bytes) and len(value) <= 200
    ):
        return repr(value)
    if isinstance(value, tuple | list | dict | set | frozenset):
        size = deep_size(value, budget=200)
        if size is not None and size <= 20_000:
            text = repr(value)
            if len(text) <= 200:
                return text
    return summarize(value, max_chars)


def output_text(stdout: str, stderr: str) -> str:
    """Captured output as the tool's result shows it (also its progress while it runs)."""
    parts: list[str] = []
    if stdout:
        parts.append(f"stdout:\n{stdout.rstrip()}")
    if stderr:
        parts.append(f"stderr:\n{stderr.rstrip()}")
    return "\n".join(parts)


async def _run_python(
    ws: Workspace,
    limits: _Limits,
    code: str,
    signal: AbortSignal | None,
    on_update: Callable[[Any], None] | None,
) -> AgentToolResult:
    def on_output(stdout: str, stderr: str) -> None:
        if on_update is not None:
            on_update(output_text(stdout, stderr))

    result = await ws.run(
        code, signal, output_chars=limits.output_chars, grace=limits.grace, on_output=on_output
    )
    extra: list[str] = []
    if result.outcome.has_value and result.outcome.value is not None:
        extra.append(f"value: {_value_text(result.outcome.value, limits.max_chars)}")
    return _write_result(result, limits, extra)


async def _set_variable(
    ws: Workspace, limits: _Limits, name: str, expression: str, signal: AbortSignal | None
) -> AgentToolResult:
    try:
        check_identifier(name)
        ast.parse(expression.strip(), "<expression>", "eval")
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    except SyntaxError as exc:
        raise ToolError(f"not a Python expression: {exc.msg}") from None
    code = f"{name} = (\n{expression.strip()}\n)"
    result = await ws.run(code, signal, output_chars=limits.output_chars, grace=limits.grace)
    extra: list[str] = []
    if name in ws.namespace and result.outcome.error is None and not result.outcome.aborted:
        value = ws.namespace[name]
        facts = ", ".join(str(v) for v in short_facts(value).values())
        extra.append(f"{name} = {short_repr(value, 200)} ({facts})")
    return _write_result(result, limits, extra)


def _shell() -> Any:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise ToolError("no notebook: not running in IPython, so there are no cells to read")
    return shell


def _notebook_cells(limits: _Limits, last: int) -> AgentToolResult:
    count = max(1, min(int(last), MOST_CELLS))
    cells = recent_cells(_shell(), count)
    if not cells:
        return _text("(no cells have run yet, besides %%agent cells)")
    text = redact(cells_text(cells, limits.max_chars))
    return _text(text, {"cells": [c.number for c in cells]})


def _last_error() -> AgentToolResult:
    error = cell_log().last()
    if error is None:
        return _text("no cell has raised an error in this kernel")
    where = f"In [{error.cell}]" if error.cell else "a cell (run before pi_notebook was loaded)"
    return _text(redact(f"The last error, from {where}:\n{error.full}"), {"cell": error.cell})


MOST_CELLS = 50
"""``notebook_cells`` reads at most this many cells."""

LIST_VARIABLES = (
    "List the notebook's variables: name, type, shape or length, approximate size. "
    "Modules, private names and IPython's own names are left out."
)
INSPECT_VARIABLE = (
    "A bounded summary of one notebook variable (or an attribute path like df.columns): "
    "DataFrames give shape, dtypes, head, describe and null counts; arrays give shape, "
    "dtype and statistics; containers give length and a sample; text is truncated."
)
RUN_PYTHON = (
    "Run Python code in the notebook's namespace (as a cell would). Returns captured "
    "stdout/stderr, the value of a final expression, and which variables were created, "
    "changed or deleted. Exceptions come back as an error with a short traceback. "
    "Top-level await is not supported."
)
SET_VARIABLE = (
    "Set one notebook variable to the value of a Python expression evaluated in the "
    "notebook's namespace."
)
NOTEBOOK_CELLS = (
    "The notebook's last cells as the user ran them: each cell's source (In [n]), a short "
    "repr of its result (Out[n]) and its error, oldest first. %%agent cells are left out. "
    "Read-only."
)
LAST_ERROR = (
    "The full traceback of the last error a notebook cell raised, and which cell. Read-only."
)


def notebook_tools(
    namespace: dict[str, Any] | None = None,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    output_chars: int = DEFAULT_OUTPUT_CHARS,
    abort_grace: float = 1.0,
) -> list[AgentTool]:
    """``list_variables``, ``inspect_variable``, ``run_python``, ``set_variable``, and the
    read-only ``notebook_cells`` and ``last_error`` (the kernel's cells and errors, see
    :mod:`.cells`).

    ``namespace`` defaults to the running kernel's (looked up when a tool runs). ``max_chars``
    bounds summaries; ``output_chars`` bounds captured stdout/stderr; ``abort_grace`` is how
    long an aborted ``run_python`` waits for code stuck in a C call.
    """
    limits = _Limits(max_chars, output_chars, abort_grace)

    def resolve() -> Workspace:
        return workspace(namespace)

    def list_variables() -> AgentToolResult:
        return _list_variables(resolve(), limits)

    def inspect_variable(name: str, max_chars: int = max_chars) -> AgentToolResult:
        return _inspect_variable(resolve(), limits, name, max_chars)

    inspect_variable.__doc__ = f"""Summarise a variable.

        Args:
            name: variable name or attribute path
            max_chars: summary size limit (at most {max_chars})
        """

    async def run_python(
        code: str,
        signal: AbortSignal | None = None,
        on_update: Callable[[Any], None] | None = None,
    ) -> AgentToolResult:
        """Run code (its output so far streams to the tool card as progress).

        Args:
            code: Python source to run
        """
        return await _run_python(resolve(), limits, code, signal, on_update)

    async def set_variable(
        name: str, expression: str, signal: AbortSignal | None = None
    ) -> AgentToolResult:
        """Set a variable.

        Args:
            name: variable name
            expression: Python expression
        """
        return await _set_variable(resolve(), limits, name, expression, signal)

    def notebook_cells(last: int = 10) -> AgentToolResult:
        """Read the notebook's last cells.

        Args:
            last: how many cells, newest last (at most 50)
        """
        return _notebook_cells(limits, last)

    def last_error() -> AgentToolResult:
        return _last_error()

    def make(fn: Callable[..., Any], description: str, *, writes: bool = False) -> AgentTool:
        return tool(
            name=fn.__name__,
            label=fn.__name__.replace("_", " "),
            description=description,
            writes_namespace=writes,
            execution_mode="sequential" if writes else None,
            max_chars=max_chars + 2 * output_chars,
            register=False,
        )(fn)

    return [
        make(list_variables, LIST_VARIABLES),
        make(inspect_variable, INSPECT_VARIABLE),
        make(run_python, RUN_PYTHON, writes=True),
        make(set_variable, SET_VARIABLE, writes=True),
        make(notebook_cells, NOTEBOOK_CELLS),
        make(last_error, LAST_ERROR),
    ]


__all__ = [
    "NOTEBOOK_TOOL_NAMES",
    "ToolError",
    "Workspace",
    "begin_run",
    "notebook_tools",
    "protect",
    "undo",
    "unprotect",
    "workspace",
]
