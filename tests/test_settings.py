"""The one table of settings: each variable is read there and nowhere else, each parses as it
always has, and the README's table is the table's own rendering."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pi_notebook import settings
from pi_notebook.settings import (
    APPROVAL_TIMEOUT,
    CACHE_RETENTION,
    CODE_CELL,
    MODEL,
    NOTEBOOK_PATH,
    RECORD,
    SESSIONS,
    SETTINGS,
    UI,
    Setting,
    markdown_table,
    status_lines,
)

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pi_notebook"
SETTINGS_MODULE = PACKAGE / "settings.py"
SOURCES = sorted(PACKAGE.rglob("*.py"))
VARIABLE = re.compile(r"\bPI_NOTEBOOK_\w+")
ENVIRONMENT_READERS = {
    "pi_notebook/settings.py": "the table",
    "pi_notebook/ai/secrets.py": "scans every variable for secret values to redact",
    "pi_notebook/ai/providers/keys.py": "the providers' API keys",
    "pi_notebook/demo.py": "copies the environment for the kernel it starts",
}
"""The modules that may touch ``os.environ``, and why."""


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (bare string statements)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def _strings_in_code(source: str) -> list[tuple[int, str]]:
    """Every string constant of ``source`` that is not a docstring, with its line."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def _names_a_setting(text: str) -> bool:
    return bool(VARIABLE.search(text)) or any(s.variable in text for s in SETTINGS)


def test_the_sources_were_found() -> None:
    assert SETTINGS_MODULE in SOURCES and len(SOURCES) > 40


@pytest.mark.parametrize("path", SOURCES, ids=_relative)
def test_only_the_settings_module_spells_a_variable_in_code(path: Path) -> None:
    if path == SETTINGS_MODULE:
        return
    hits = [
        f"{_relative(path)}:{line}: {text!r}"
        for line, text in _strings_in_code(path.read_text(encoding="utf-8"))
        if _names_a_setting(text)
    ]
    assert not hits, "use pi_notebook.settings (SETTING.variable / .value()):\n" + "\n".join(hits)


def test_the_check_sees_a_variable_in_code_and_not_in_a_docstring() -> None:
    source = (
        '"""Reads ``PI_NOTEBOOK_UI``."""\n'
        "import os\n"
        "def plain():\n"
        '    """``$PI_NOTEBOOK_UI``."""\n'
        '    return os.environ.get("PI_NOTEBOOK_UI") == "plain" or f"{x} PI_CACHE_RETENTION"\n'
    )
    found = [text for _, text in _strings_in_code(source) if _names_a_setting(text)]
    assert sorted(found) == [" PI_CACHE_RETENTION", "PI_NOTEBOOK_UI"]


@pytest.mark.parametrize("path", SOURCES, ids=_relative)
def test_only_known_modules_touch_the_environment(path: Path) -> None:
    if _relative(path) in ENVIRONMENT_READERS:
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hits = [
        f"{_relative(path)}:{node.lineno}"
        for node in ast.walk(tree)
        if (isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"))
        or (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(alias.name in ("environ", "getenv") for alias in node.names)
        )
    ]
    assert not hits, "read settings through pi_notebook.settings:\n" + "\n".join(hits)


def test_every_variable_the_package_mentions_is_in_the_table() -> None:
    """Docstrings and comments too: a renamed or dropped variable leaves no stale mention."""
    known = {s.variable for s in SETTINGS}
    mentioned = {
        (name, _relative(path))
        for path in [*SOURCES, ROOT / "README.md", *sorted((ROOT / "js").glob("*.js"))]
        for name in VARIABLE.findall(path.read_text(encoding="utf-8"))
    }
    assert {(name, where) for name, where in mentioned if name not in known} == set()
    assert {name for name, _ in mentioned} == {v for v in known if v.startswith("PI_NOTEBOOK_")}


def test_the_table_has_one_entry_per_name_and_variable() -> None:
    assert len({s.name for s in SETTINGS}) == len({s.variable for s in SETTINGS}) == len(SETTINGS)
    assert all(isinstance(s, Setting) for s in SETTINGS)
    assert [getattr(settings, s.name.upper()) for s in SETTINGS] == list(SETTINGS)


# -- values: read at each use, parsed as before ----------------------------------------------


@pytest.fixture
def clean(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for setting in SETTINGS:
        monkeypatch.delenv(setting.variable, raising=False)
    return monkeypatch


def test_unset_is_the_default(clean: pytest.MonkeyPatch) -> None:
    assert [s.value() for s in SETTINGS] == [
        "panel",
        None,
        False,
        True,
        True,
        600.0,
        100_000,
        True,
        8_000,
        "short",
        None,
    ]


@pytest.mark.parametrize(
    ("setting", "text", "value"),
    [
        (UI, "plain", "plain"),
        (UI, " Plain\n", "plain"),
        (UI, "panel", "panel"),
        (UI, "rich", "panel"),  # not understood: the default
        (MODEL, " openai/gpt-4.1-mini ", "openai/gpt-4.1-mini"),
        (RECORD, "1", True),
        (RECORD, "yes", True),
        (RECORD, "true", True),
        (RECORD, "0", False),
        (RECORD, "later", False),
        (CODE_CELL, "off", False),
        (CODE_CELL, "0", False),
        (CODE_CELL, "NO", False),
        (CODE_CELL, "false", False),
        (CODE_CELL, "maybe", True),
        (SESSIONS, "off", False),
        (SESSIONS, "on", True),
        (APPROVAL_TIMEOUT, "0.2", 0.2),
        (APPROVAL_TIMEOUT, "0", 600.0),
        (APPROVAL_TIMEOUT, "-5", 600.0),
        (APPROVAL_TIMEOUT, "nan", 600.0),
        (APPROVAL_TIMEOUT, "soon", 600.0),
        (CACHE_RETENTION, "long", "long"),
        (CACHE_RETENTION, "forever", "short"),
        (NOTEBOOK_PATH, "work/a.ipynb", "work/a.ipynb"),
    ],
    ids=lambda value: repr(value) if not isinstance(value, Setting) else value.name,
)
def test_a_value_is_read_when_asked(
    clean: pytest.MonkeyPatch, setting: Setting[object], text: str, value: object
) -> None:
    assert setting.value() == setting.default
    clean.setenv(setting.variable, text)
    assert setting.value() == value
    clean.setenv(setting.variable, "   ")
    assert setting.value() == setting.default


# -- what %agent status and the README show -------------------------------------------------


def test_status_lists_only_what_differs_from_the_default(clean: pytest.MonkeyPatch) -> None:
    assert status_lines() == ["settings: the defaults (the README's Settings table lists all)"]
    clean.setenv(UI.variable, "panel")  # set, but to the default
    clean.setenv(SESSIONS.variable, "on")
    assert len(status_lines()) == 1
    clean.setenv(UI.variable, "plain")
    clean.setenv(APPROVAL_TIMEOUT.variable, "soon")
    clean.setenv(MODEL.variable, "openai/" + "x" * 200)
    assert status_lines() == [
        "settings (the README's Settings table lists all):",
        "  PI_NOTEBOOK_UI=plain (default: panel)",
        "  PI_NOTEBOOK_MODEL=openai/" + "x" * 72 + "… (default: unset)",
        "  PI_NOTEBOOK_APPROVAL_TIMEOUT=soon: not understood, the default (600) applies",
    ]


def test_the_markdown_table_has_a_row_per_setting() -> None:
    rows = markdown_table().splitlines()
    assert rows[:2] == ["| Variable | Default | What it does |", "| --- | --- | --- |"]
    assert [row.split(" | ")[0] for row in rows[2:]] == [f"| `{s.variable}`" for s in SETTINGS]
    assert all(row.count("|") == 4 for row in rows), "a help text must not hold a '|'"


def test_the_readme_table_is_the_code_table() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(
        r"<!-- The table is generated: .*?-->\n(.*?)<!-- end of the generated table -->",
        readme,
        re.DOTALL,
    )
    assert match is not None, "README.md lost its generated settings table"
    assert match.group(1).strip() == markdown_table().strip(), (
        "README.md's settings table is stale; replace it with the output of "
        "`python -m pi_notebook.settings`"
    )
