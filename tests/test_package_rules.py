"""House rules that hold for the whole package, checked by reading its source."""

from __future__ import annotations

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
