"""Which notebook variables the agent may see and write, and what a piece of code binds.

:class:`Guard` answers "is this name the user's variable?" (``list_variables`` shows those) and
"may a tool write it?" (modules, the agent objects, IPython's own names and names the user
marked protected may not). :func:`bound_names` / :func:`loaded_names` read code statically
(``ast``) so a write to a protected name is refused before anything runs,
:func:`import_names` says which names an ``import`` statement binds, and :func:`mutable_names`
says which names the code may change in place (the others need no undo copy). :func:`diff`
compares two views of a namespace by identity.

An *import* in a diff is a name the code created by an ``import`` statement that holds a module
object afterwards (``import numpy as np``, ``import os.path``, ``from os import path``): it is
reported apart from the created variables and ``%agent undo`` keeps it unless asked (``undo
--all``), so a later cell of the user's that uses ``np`` keeps working. Only module objects
count, the same line :class:`Guard` draws (a module is not a user variable and may not be
rebound): ``from math import sqrt`` binds a function, a value like ``sqrt = math.sqrt``, and is a
created name. A name that already held a value of the user's and was rebound to a module is
``changed`` (undo restores the user's value).

This module never executes code and never changes a namespace.
"""

from __future__ import annotations

import ast
import keyword
import re
import types
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit"})
_IPYTHON_PATTERN = re.compile(r"_+|_i+\d*|_\d+|_[oid]h|_sh|__\w*__")


def is_agent_object(value: Any) -> bool:
    """The agent machinery: agents, tools, faux providers, the notebook session."""
    from ..agent import Agent, AgentTool
    from ..ai import FauxProvider

    if isinstance(value, Agent | AgentTool | FauxProvider):
        return True
    if isinstance(value, list | tuple) and value and all(isinstance(v, AgentTool) for v in value):
        return True
    return type(value).__module__.startswith("pi_notebook.notebook")


@dataclass
class Guard:
    """Visibility and write protection for one namespace."""

    hidden: Callable[[], Container[str]] = lambda: ()
    """IPython's own names (``user_ns_hidden``); read on every check, so a live view (a dict's
    ``keys()``) keeps the check current and quick."""
    protected: set[str] = field(default_factory=set)
    """Names the user marked protected."""

    def is_ipython_name(self, name: str) -> bool:
        return (
            name in IPYTHON_NAMES
            or _IPYTHON_PATTERN.fullmatch(name) is not None
            or name in self.hidden()
        )

    def is_visible(self, name: str, value: Any) -> bool:
        """A user variable: not private, not a module, not IPython's."""
        return (
            not name.startswith("_")
            and not isinstance(value, types.ModuleType)
            and not self.is_ipython_name(name)
        )

    def protection(self, name: str, namespace: Mapping[str, Any]) -> str | None:
        """Why ``name`` may not be written (created, changed or deleted), or ``None``."""
        if name in self.protected:
            return "marked protected by the user"
        if self.is_ipython_name(name):
            return "one of IPython's own names"
        if name in namespace:
            value = namespace[name]
            if isinstance(value, types.ModuleType):
                return "a module"
            if is_agent_object(value):
                return "one of the agent's objects"
        return None

    def refusals(self, names: Iterable[str], namespace: Mapping[str, Any]) -> dict[str, str]:
        found = {name: self.protection(name, namespace) for name in names}
        return {name: reason for name, reason in found.items() if reason is not None}


def refusal_text(refused: Mapping[str, str]) -> str:
    parts = "; ".join(f"{name!r} is {reason}" for name, reason in sorted(refused.items()))
    return f"refused: writing protected names is not allowed ({parts})"


def check_identifier(name: str) -> None:
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not a valid Python variable name")


class _Binder(ast.NodeVisitor):
    """Names a module-level piece of code binds or deletes in its global scope."""

    def __init__(self, imports: bool) -> None:
        self.names: set[str] = set()
        self.imports = imports

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.names.add(node.id)

    def visit_alias(self, node: ast.alias) -> None:
        if self.imports and node.name != "*":
            self.names.add((node.asname or node.name).split(".")[0])

    def _scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.names.add(node.name)
        for decorator in node.decorator_list:
            self.visit(decorator)
        if isinstance(node, ast.ClassDef):
            for base in [*node.bases, *node.keywords]:
                self.visit(base)
        else:
            for default in [*node.args.defaults, *node.args.kw_defaults]:
                if default is not None:
                    self.visit(default)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._scope(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._scope(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scope(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.names.add(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.names.add(node.rest)
        self.generic_visit(node)


def bound_names(tree: ast.AST, *, imports: bool = True) -> set[str]:
    """Global names ``tree`` may bind or delete (including ``global`` declarations).

    ``imports=False`` leaves out names bound by ``import`` (re-importing a module is harmless;
    rebinding a module name to something else is caught after the run).
    """
    binder = _Binder(imports)
    binder.visit(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            binder.names.update(node.names)
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            binder.names.add(node.target.id)
    return binder.names


def import_names(tree: ast.AST) -> set[str]:
    """Names an ``import`` statement anywhere in ``tree`` binds (``import a.b`` binds ``a``)."""
    return {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
        if alias.name != "*"
    }


def loaded_names(tree: ast.AST) -> set[str]:
    """Every name ``tree`` mentions."""
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


READ_ONLY_BUILTINS = frozenset(
    {"print", "len", "repr", "str", "type", "isinstance", "issubclass", "id", "format", "bool"}
    | {"int", "float", "complex", "abs", "round", "hash", "callable", "ascii"}
)
"""Builtins that never change (or keep) a positional argument: ``print(x.shape)`` only reads."""

_CHAIN = (ast.Attribute, ast.Subscript)
_PASS_THROUGH = (ast.BoolOp, ast.IfExp)
"""``a or b`` and ``a if c else b`` are one of their operands: an alias, not a read."""
_READ_ONLY_PARENTS = (ast.Compare, ast.BinOp, ast.UnaryOp, ast.FormattedValue, ast.Expr)


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _read_only(node: ast.AST, parents: dict[int, ast.AST], builtins: Callable[[str], bool]) -> bool:
    """Whether this use of a name provably only reads its value (see :func:`mutable_names`)."""
    parent = parents.get(id(node))
    # x.a.b[i]: loading attributes or items of x still hands out parts of it.
    while isinstance(parent, _CHAIN) and parent.value is node:
        if not isinstance(parent.ctx, ast.Load):  # x.a = ..., x[i] = ..., del x[i]
            return False
        node, parent = parent, parents.get(id(parent))
    while isinstance(parent, _PASS_THROUGH) and not (
        isinstance(parent, ast.IfExp) and parent.test is node
    ):
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, _READ_ONLY_PARENTS):
        return True
    if isinstance(parent, ast.If | ast.While | ast.Assert | ast.IfExp) and parent.test is node:
        return True
    if isinstance(parent, ast.Subscript) and parent.slice is node:  # y[x]: x is an index
        return True
    if isinstance(parent, ast.Slice):
        return True
    if isinstance(parent, ast.Tuple):  # y[x, 0]
        subscript = parents.get(id(parent))
        return isinstance(subscript, ast.Subscript) and subscript.slice is parent
    if isinstance(parent, ast.Call) and node in parent.args:
        func = parent.func
        return isinstance(func, ast.Name) and func.id in READ_ONLY_BUILTINS and builtins(func.id)
    return False


def mutable_names(tree: ast.AST, builtins: Callable[[str], bool] = lambda name: True) -> set[str]:
    """Names whose value the code may change in place: the candidates for an undo copy.

    A name is left out only when the AST proves every mention of it read-only: an operand of a
    comparison, an arithmetic or unary operator or an f-string, a condition, an index, a bare
    expression statement, or a positional argument of a builtin that only reads it (``print``,
    ``len``, ...; ``builtins(name)`` says the name is still the builtin), also through attribute
    and item loads (``x.shape``, ``x[0] + 1``). Anything else may mutate or keep a part of it:
    a call (``f(x)``, ``x.append()``, ``x.sum()``), an attribute or item store or deletion, an
    augmented assignment, an assignment of it or of a part of it (``y = x``), a container,
    ``return`` / ``yield``, a loop or ``with`` over it. Names that are only rebound or deleted
    need no copy (the old object is kept as it is).
    """
    parents = _parents(tree)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.AugAssign):
            target: ast.expr = node.target
            while isinstance(target, _CHAIN):
                target = target.value
            if isinstance(target, ast.Name):
                names.add(target.id)
        elif (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id not in names
            and not _read_only(node, parents, builtins)
        ):
            names.add(node.id)
    return names


@dataclass
class NamespaceDiff:
    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    imported: list[str] = field(default_factory=list)
    """New names bound to a module by the code's ``import`` statements (not in ``created``)."""

    def __bool__(self) -> bool:
        return bool(self.created or self.changed or self.deleted or self.imported)

    @property
    def written(self) -> list[str]:
        """Every name the code wrote: created, imported, changed and deleted."""
        return [*self.created, *self.imported, *self.changed, *self.deleted]

    def as_dict(self) -> dict[str, list[str]]:
        """``{created, changed, deleted}``, with ``imported`` only when there are imports."""
        found = {"created": self.created, "changed": self.changed, "deleted": self.deleted}
        if self.imported:
            found["imported"] = self.imported
        return found

    def text(self) -> str:
        parts = [
            f"{label} {', '.join(names)}"
            for label, names in (
                ("created", self.created),
                ("imported", self.imported),
                ("changed", self.changed),
                ("deleted", self.deleted),
            )
            if names
        ]
        return "; ".join(parts) if parts else "no variables changed"


def diff(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    mutated: Iterable[str] = (),
    imports: Container[str] = (),
) -> NamespaceDiff:
    """Created, imported, rebound (or ``mutated`` in place) and deleted names, sorted.

    ``imports``: the names the code's ``import`` statements bind (:func:`import_names`); a new
    one that holds a module is ``imported``, not ``created``."""
    mutated_set = set(mutated)
    new = [name for name in after if name not in before]
    imported = {
        name for name in new if name in imports and isinstance(after[name], types.ModuleType)
    }
    return NamespaceDiff(
        imported=sorted(imported),
        created=sorted(name for name in new if name not in imported),
        changed=sorted(
            name
            for name in after
            if name in before and (after[name] is not before[name] or name in mutated_set)
        ),
        deleted=sorted(name for name in before if name not in after),
    )


__all__ = [
    "Guard",
    "NamespaceDiff",
    "bound_names",
    "check_identifier",
    "diff",
    "import_names",
    "is_agent_object",
    "loaded_names",
    "mutable_names",
    "refusal_text",
]
