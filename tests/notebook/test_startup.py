"""The first cell is fast: loading the extension imports no schema validator, no MCP SDK and
nothing else the first cell does not need (``bench/bench_startup.py`` measures the time)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import Kernel

NOT_AT_LOAD = ("jsonschema", "rfc3987_syntax", "lark", "mcp", "httpx", "latex2mathml")
"""Imported when first needed: a tool's schema, an MCP server, an HTTP model, a formula."""

pytestmark = pytest.mark.kernel


def _imported_by(code: str) -> list[str]:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    return list(json.loads(done.stdout.splitlines()[-1]))


def test_importing_the_package_and_its_notebook_layer_imports_none_of_the_heavy_modules() -> None:
    for code in ("import pi_notebook", "import pi_notebook.notebook"):
        modules = set(_imported_by(code))
        assert "pi_notebook" in modules
        assert [name for name in NOT_AT_LOAD if name in modules] == [], code


def test_the_probe_sees_an_import_when_there_is_one() -> None:
    assert "jsonschema" in _imported_by("import pi_notebook.ai.json_schema")


def test_a_first_agent_cell_with_no_tools_imports_no_schema_validator(kernel: Kernel) -> None:
    loaded = "print(sorted(m for m in {names!r} if m in sys.modules))"
    assert kernel.ok(loaded.format(names=NOT_AT_LOAD)).stdout.strip() == "[]"
    run = kernel.ok("%%agent --no-tools\nHello, what are you?")
    assert "assistant:" in run.stdout
    after = kernel.ok(loaded.format(names=("jsonschema", "rfc3987_syntax", "mcp")))
    assert after.stdout.strip() == "[]"
