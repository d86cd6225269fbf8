"""Names the agent's ``import`` statements bind: an import in the diff, kept by a plain undo.

Issue 27, section 3: ``run_python`` reports ``import numpy as np`` as ``imported np``, not as a
created variable, and ``%agent undo`` leaves the module binding in place unless asked (``undo
--all``), so a later cell of the user's that uses it does not break. Only module objects count;
a name of the user's rebound to a module gets the user's value back.
"""

from __future__ import annotations

import ast
import math
import os
import types
from typing import Any

from pi_notebook.ai import FauxProvider
from pi_notebook.tools import notebook_tools, undo, workspace
from pi_notebook.tools.journal import ABSENT, UndoJournal
from pi_notebook.tools.namespace import NamespaceDiff, diff, import_names

from .conftest import run_agent, text_of


def test_import_names_are_the_names_an_import_statement_binds() -> None:
    tree = ast.parse(
        "import numpy as np\nimport os.path\nfrom math import sqrt, pi as PI\n"
        "from json import *\nif x:\n    import re\nx = 1\ndef f():\n    import csv\n"
    )
    # Every import statement counts, even one in a function: diff() then asks what the name
    # holds in the namespace, so a function's local import binds nothing there.
    assert import_names(tree) == {"np", "os", "sqrt", "PI", "re", "csv"}


def test_a_new_name_bound_to_a_module_by_an_import_is_imported_not_created() -> None:
    before: dict[str, Any] = {"old": 1, "gone": 2}
    after: dict[str, Any] = {
        "old": "new",
        "m": math,
        "path": os.path,
        "sqrt": math.sqrt,  # from math import sqrt: a function is a created variable
        "other": types,  # a module the code bound without an import statement
        "x": 3,
    }
    found = diff(before, after, imports={"m", "path", "sqrt", "x"})
    assert found == NamespaceDiff(
        created=["other", "sqrt", "x"], changed=["old"], deleted=["gone"], imported=["m", "path"]
    )
    assert found.text() == "created other, sqrt, x; imported m, path; changed old; deleted gone"
    assert found.as_dict()["imported"] == ["m", "path"]
    assert found.written == ["other", "sqrt", "x", "m", "path", "old", "gone"]


def test_a_diff_without_imports_keeps_its_three_lists() -> None:
    found = diff({}, {"x": 1, "m": math})  # no import statement bound m
    assert found.as_dict() == {"created": ["m", "x"], "changed": [], "deleted": []}
    only = diff({}, {"m": math}, imports={"m"})
    assert bool(only) and only.text() == "imported m"
    assert not diff({"m": math}, {"m": math}, imports={"m"})  # re-importing changes nothing


def test_a_name_of_the_users_rebound_to_a_module_is_changed() -> None:
    found = diff({"m": [1, 2]}, {"m": math}, imports={"m"})
    assert found == NamespaceDiff(changed=["m"])


def _journal_after(ns: dict[str, Any], previous: dict[str, Any], imported: set[str]) -> UndoJournal:
    """A journal that saw one run write ``ns`` over ``previous`` (ABSENT: created)."""
    journal = UndoJournal()
    journal.begin_run()
    for name, value in previous.items():
        journal.keep(name, value)
    for name in previous:
        journal.left(name, ns.get(name, ABSENT), imported=name in imported)
    return journal


def test_a_plain_undo_keeps_imports_and_a_later_undo_all_removes_them() -> None:
    ns: dict[str, Any] = {"m": math, "x": 3.14, "y": 2}
    journal = _journal_after(ns, {"m": ABSENT, "x": ABSENT, "y": 1}, {"m"})
    report = journal.undo(ns)
    assert report.removed == ["x"] and report.restored == ["y"] and report.kept_imports == ["m"]
    assert ns == {"m": math, "y": 1}
    assert report.text().splitlines() == [
        "restored: y",
        "removed (created by the agent): x",
        "kept imports: m (undo --all removes them)",
    ]
    again = journal.undo(ns)  # nothing else to undo, and it says m is still there
    assert again.nothing_left and again.kept_imports == ["m"]
    assert "kept imports: m (undo --all removes them)" in again.text()
    removed = journal.undo(ns, include_imports=True)
    assert removed.removed == ["m"] and not removed.kept_imports and ns == {"y": 1}
    last = journal.undo(ns, include_imports=True)
    assert last.nothing_left and last.text() == (
        "nothing left to undo: the last run's changes were already undone"
    )


def test_undo_all_at_once_removes_imports_with_the_rest() -> None:
    ns: dict[str, Any] = {"m": math, "x": 3.14}
    journal = _journal_after(ns, {"m": ABSENT, "x": ABSENT}, {"m"})
    report = journal.undo(ns, include_imports=True)
    assert report.removed == ["m", "x"] and not report.kept_imports and ns == {}


def test_an_import_the_user_rebound_since_is_kept_as_theirs() -> None:
    ns: dict[str, Any] = {"m": math}
    journal = _journal_after(ns, {"m": ABSENT}, {"m"})
    assert journal.undo(ns).kept_imports == ["m"]
    ns["m"] = "mine"
    report = journal.undo(ns, include_imports=True)
    assert report.kept == {"m": "changed since the agent's run"} and ns == {"m": "mine"}


def test_a_users_value_rebound_to_a_module_comes_back_with_a_plain_undo() -> None:
    ns: dict[str, Any] = {"m": math}
    journal = _journal_after(ns, {"m": [1, 2]}, {"m"})
    report = journal.undo(ns)
    assert report.restored == ["m"] and not report.kept_imports and ns == {"m": [1, 2]}


def test_a_new_run_replaces_the_kept_imports_of_the_run_before() -> None:
    ns: dict[str, Any] = {"m": math}
    journal = _journal_after(ns, {"m": ABSENT}, {"m"})
    journal.undo(ns)
    journal.begin_run()
    journal.keep("z", ABSENT)
    ns["z"] = 1
    journal.left("z", 1)
    report = journal.undo(ns, include_imports=True)
    assert report.removed == ["z"] and ns == {"m": math}  # m was the run before's


async def test_run_python_reports_imports_and_undo_keeps_them(faux: FauxProvider) -> None:
    ns: dict[str, Any] = {"old": [1]}
    workspace(ns).begin_run()
    code = "import math as m\nfrom math import sqrt\nimport os.path\nx = m.pi\nold = m"
    (result,) = await run_agent(faux, notebook_tools(ns), [("run_python", {"code": code})])
    assert result.details["namespace_diff"] == {
        "created": ["sqrt", "x"],
        "changed": ["old"],
        "deleted": [],
        "imported": ["m", "os"],
    }
    assert "namespace: created sqrt, x; imported m, os; changed old" in text_of(result)
    report = undo(ns)
    assert report.kept_imports == ["m", "os"] and report.restored == ["old"]
    assert report.removed == ["sqrt", "x"]
    assert ns["m"] is math and ns["os"] is os and ns["old"] == [1] and "x" not in ns
    assert undo(ns, include_imports=True).removed == ["m", "os"]
    assert "m" not in ns and "os" not in ns


async def test_a_later_call_of_the_same_run_importing_over_its_own_variable(
    faux: FauxProvider,
) -> None:
    """Created by the run, then an import: the name did not exist before, so it is kept."""
    ns: dict[str, Any] = {}
    workspace(ns).begin_run()
    await run_agent(
        faux,
        notebook_tools(ns),
        [("run_python", {"code": "m = 1"})],
        [("run_python", {"code": "import math as m"})],
    )
    assert undo(ns).kept_imports == ["m"] and ns["m"] is math
