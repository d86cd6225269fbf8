"""House rules that hold for the whole package, checked by reading its source."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pi_notebook"
SOURCES = sorted(PACKAGE.rglob("*.py"))

# pydantic's private attributes and the ways into them: its bookkeeping slots, the descriptors
# behind them, internal modules and the old v1 names.
PYDANTIC_PRIVATE = re.compile(
    r"__pydantic_\w+|BaseModel\.__dict__|__fields_set__|\bpydantic\._internal\b"
    r"|\bpydantic_core\._pydantic_core\b|\._copy_and_set_values\b|\._iter\("
)


def _relative(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def test_the_package_sources_were_found() -> None:
    assert len(SOURCES) > 40


@pytest.mark.parametrize("path", SOURCES, ids=_relative)
def test_no_module_touches_a_pydantic_private_attribute(path: Path) -> None:
    hits = [
        f"{_relative(path)}:{number}: {line.strip()}"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PYDANTIC_PRIVATE.search(line)
    ]
    assert not hits, "pydantic private attributes in use:\n" + "\n".join(hits)


# A layer imports another layer only through its public packages, and only names they export.
LAYERS = ("ai", "agent", "tools", "notebook")
PUBLIC_PACKAGES = {
    "pi_notebook.ai",
    "pi_notebook.ai.providers",  # the HTTP providers (README: "Real models speak over httpx")
    "pi_notebook.ai.replay",  # record and replay (README)
    "pi_notebook.agent",
    "pi_notebook.tools",
    "pi_notebook.notebook",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else ""


def _imports(module: str, source: str, *, is_package: bool) -> list[tuple[int, str, list[str]]]:
    """(line, absolute module, imported names) for every import statement of ``source``."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.append((node.lineno, target, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, []) for alias in node.names)
    return found


def _cross_layer_problems(module: str, source: str, *, is_package: bool = False) -> list[str]:
    own = _layer(module)
    problems = []
    for line, target, names in _imports(module, source, is_package=is_package):
        if not target.startswith("pi_notebook") or _layer(target) in ("", own):
            continue
        where = f"{module}:{line}"
        if target not in PUBLIC_PACKAGES:
            problems.append(f"{where}: imports the private module {target}")
            continue
        exported = set(getattr(importlib.import_module(target), "__all__", ()))
        for name in names:
            if name not in exported and f"{target}.{name}" not in PUBLIC_PACKAGES:
                problems.append(f"{where}: {target} does not export {name}")
    return problems


@pytest.mark.parametrize("path", SOURCES, ids=_relative)
def test_layers_meet_only_at_their_public_packages(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    problems = _cross_layer_problems(
        _module_name(path), source, is_package=path.name == "__init__.py"
    )
    assert not problems, "\n".join(problems)


def test_the_layer_check_sees_private_modules_and_unexported_names() -> None:
    source = (
        "from ..ai._base import WireModel\n"
        "from ..ai import now_ms, _role_of\n"
        "from ..ai import providers\n"
        "import pi_notebook.agent.loop\n"
        "from .queue import MessageQueue\n"
    )
    problems = _cross_layer_problems("pi_notebook.agent.probe", source)
    assert [p.split(": ", 1)[1] for p in problems] == [
        "imports the private module pi_notebook.ai._base",
        "pi_notebook.ai does not export _role_of",
    ]
    problems = _cross_layer_problems("pi_notebook.tools.probe", source)
    assert "imports the private module pi_notebook.agent.loop" in problems[-1]


# -- the notebook layer writes no attribute of an Agent ------------------------------------------
#
# The rule: in pi_notebook/notebook/ (panel included), no assignment, augmented or annotated
# assignment, ``del`` or ``setattr`` may target an attribute of an expression that stands for an
# Agent. An expression stands for an Agent when it is a name spelled ``agent`` (or ``*_agent``,
# ``agent_*``), an attribute spelled ``.agent`` (``self.agent``, ``conversation.agent``), or a
# name the same function annotates as ``Agent`` (a parameter or a variable, ``Agent | None``
# too). Dunder attributes are Python's (``AgentMagics.agent.__doc__``, a method). Per-run
# settings reach the Agent as a ``RunConfig``; its state (``agent.state.*``) is Pi's to write,
# so ``agent.state.tools = ...`` is allowed: its target's owner is ``.state``.

NOTEBOOK = PACKAGE / "notebook"


def _agent_like_name(name: str) -> bool:
    return name == "agent" or name.endswith("_agent") or name.startswith("agent_")


def _annotated_agent(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    text = ast.unparse(annotation).replace('"', "").replace("'", "")
    return any(part.strip() == "Agent" for part in text.split("|"))


class _AgentWrites(ast.NodeVisitor):
    def __init__(self) -> None:
        self.hits: list[tuple[int, str]] = []
        self._typed: list[set[str]] = [set()]

    def _agent(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return _agent_like_name(node.id) or node.id in self._typed[-1]
        return isinstance(node, ast.Attribute) and node.attr == "agent"

    def _target(self, target: ast.expr, line: int) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for item in target.elts:
                self._target(item, line)
        elif (
            isinstance(target, ast.Attribute)
            and self._agent(target.value)
            and not target.attr.startswith("__")  # Python's own (a method's __doc__)
        ):
            self.hits.append((line, ast.unparse(target)))

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        arguments = node.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        typed = {a.arg for a in every if _annotated_agent(a.annotation)}
        for statement in ast.walk(node):
            if (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and _annotated_agent(statement.annotation)
            ):
                typed.add(statement.target.id)
        self._typed.append(self._typed[-1] | typed)
        self.generic_visit(node)
        self._typed.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target, node.lineno)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target, node.lineno)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._target(node.target, node.lineno)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._target(target, node.lineno)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if (
            isinstance(func, ast.Name)
            and func.id in ("setattr", "delattr")
            and node.args
            and self._agent(node.args[0])
        ):
            self.hits.append((node.lineno, ast.unparse(node)))
        self.generic_visit(node)


def agent_attribute_writes(source: str) -> list[tuple[int, str]]:
    visitor = _AgentWrites()
    visitor.visit(ast.parse(source))
    return visitor.hits


def test_the_agent_write_rule_sees_each_kind_of_write() -> None:
    source = """
def f(agent, conversation, other: Agent | None, plain):
    agent.max_turns = 3
    conversation.agent.stream_fn = None
    other.budget += 1
    setattr(plain.agent, "before_tool_call", None)
    made: Agent = Agent()
    made.compaction, x = None, 1
    agent.state.system_prompt = "allowed: the Agent's state"
    plain.max_turns = 3  # not an Agent
"""
    assert [line for line, _ in agent_attribute_writes(source)] == [3, 4, 5, 6, 8]


@pytest.mark.parametrize("path", sorted(NOTEBOOK.rglob("*.py")), ids=_relative)
def test_the_notebook_layer_writes_no_attribute_of_an_agent(path: Path) -> None:
    hits = agent_attribute_writes(path.read_text(encoding="utf-8"))
    listed = [f"{_relative(path)}:{line}: {text}" for line, text in hits]
    assert not listed, "the notebook layer writes Agent attributes:\n" + "\n".join(listed)


def test_no_notebook_module_is_over_500_lines_and_no_front_end_source_over_400() -> None:
    """Small modules with one job each: the notebook layer (its panel included) stays under 500
    lines a module, the front end's sources (not its tests or build) under 400."""
    root = Path(__file__).resolve().parents[1]
    long_modules = [
        (str(path.relative_to(root)), count)
        for path in sorted((root / "pi_notebook" / "notebook").rglob("*.py"))
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > 500
    ]
    long_sources = [
        (str(path.relative_to(root)), count)
        for path in sorted((root / "js").glob("*.*js"))
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > 400
    ]
    assert long_modules == []
    assert long_sources == []
