"""How ``%%agent`` picks tools by name and parses ``--tools`` / ``--approve``."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.error import UsageError

from pi_notebook.notebook.options import OptionsError, parse_options
from pi_notebook.notebook.running import _resolve_tools
from pi_notebook.tools import NOTEBOOK_TOOL_NAMES, tool


def test_tools_are_comma_or_space_separated_and_approve_is_parsed() -> None:
    options = parse_options("--tools a,b c --approve writes")
    assert options.tools == ["a", "b", "c"] and options.approve == "writes"
    assert parse_options("").approve is None
    with pytest.raises(OptionsError, match="argument --approve: invalid choice: 'some'"):
        parse_options("--approve some")


def test_names_resolve_from_the_namespace_then_the_builtin_collections() -> None:
    @tool
    def mine() -> str:
        """Mine."""
        return "x"

    @tool(name="run_python")
    def shadow(code: str) -> str:
        """A user's own run_python, in place of the built-in one."""
        return code

    ns: dict[str, Any] = {"mine": mine, "shadow": shadow}
    names = [t.name for t in _resolve_tools(["notebook", "mine"], ns)]
    assert names == [*NOTEBOOK_TOOL_NAMES, "mine"]
    # Beside the built-in one, a tool of the same name is refused (issue 28): which one a call
    # reaches would depend on list order. Named alone, it takes the built-in's place.
    with pytest.raises(UsageError) as clash:
        _resolve_tools(["notebook", "shadow"], ns)
    assert str(clash.value) == (
        "%%agent: two tools are named 'run_python': one from the built-in notebook tools, one "
        "from the @tool function 'run_python'; drop one, or rename it (mcp_tools prefixes its "
        "tools with the server's name unless prefix=False)"
    )
    picked = _resolve_tools(["list_variables", "inspect_variable", "set_variable", "shadow"], ns)
    assert [t.name for t in picked] == [
        "list_variables",
        "inspect_variable",
        "set_variable",
        "run_python",
    ]
    assert picked[-1] is shadow
    twice = [t.name for t in _resolve_tools(["notebook", "run_python"], ns)]
    assert sorted(twice) == sorted(NOTEBOOK_TOOL_NAMES)  # the built-in named twice: one tool
    assert [t.name for t in _resolve_tools(["inspect_variable"], ns)] == ["inspect_variable"]
    with pytest.raises(UsageError, match="unknown tool 'nope'.*built-in collection \\(notebook\\)"):
        _resolve_tools(["nope"], ns)
