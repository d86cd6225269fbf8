"""Which notebook variables the agent may see and write, and what a piece of code binds.

:class:`Guard` answers "is this name the user's variable?" (``list_variables`` shows those) and
"may a tool write it?" (modules, the agent objects, IPython's own names and names the user
marked protected may not). :func:`bound_names` / :func:`loaded_names` read code statically
(``ast``) so a write to a protected name is refused before anything runs. :func:`diff` compares
two views of a namespace by identity.

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


def loaded_names(tree: ast.AST) -> set[str]:
    """Every name ``tree`` mentions (the candidates for in-place changes)."""
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


@dataclass
class NamespaceDiff:
    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.created or self.changed or self.deleted)

    def as_dict(self) -> dict[str, list[str]]:
        return {"created": self.created, "changed": self.changed, "deleted": self.deleted}

    def text(self) -> str:
        parts = [
            f"{label} {', '.join(names)}"
            for label, names in (
                ("created", self.created),
                ("changed", self.changed),
                ("deleted", self.deleted),
            )
            if names
        ]
        return "; ".join(parts) if parts else "no variables changed"


def diff(
    before: Mapping[str, Any], after: Mapping[str, Any], mutated: Iterable[str] = ()
) -> NamespaceDiff:
    """Created, rebound (or ``mutated`` in place) and deleted names, sorted."""
    mutated_set = set(mutated)
    return NamespaceDiff(
        created=sorted(name for name in after if name not in before),
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
    "is_agent_object",
    "loaded_names",
    "refusal_text",
]
