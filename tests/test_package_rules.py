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
