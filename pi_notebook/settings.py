"""Every environment switch of pi_notebook, in one table.

Each :class:`Setting` names its variable, its default, a line of help and the parser of its
text. ``setting.value()`` reads the environment at each call, so ``%env`` or ``os.environ[...]``
in a running kernel takes effect at once. No other module reads these variables: they ask the
table. ``%agent status`` shows the ones that differ from their defaults (:func:`status_lines`)
and the README's "Settings" table is :func:`markdown_table` (a test keeps the two equal;
``python -m pi_notebook.settings`` prints it).

A text the parser does not understand counts as unset (the default applies, as it always has):
an unknown ``PI_NOTEBOOK_UI`` is the panel, a negative approval timeout is 600 seconds.

Not here: API keys (each provider's variables are in ``ai.providers.keys``, and ``ai.secrets``
scans the environment only to redact secret values), and the switches set in code
(``pi_notebook.notebook.settings.code_cell`` / ``.sessions``, which win over their variables).

This module imports nothing from pi_notebook, so every layer, ``ai`` first, can read it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T", covariant=True)

_ON = ("1", "on", "true", "yes")
_OFF = ("0", "off", "false", "no")


@dataclass(frozen=True, slots=True)
class Setting(Generic[T]):
    """One environment variable: what it is called, its default, what it does, how it reads."""

    name: str
    variable: str
    default: T
    help: str
    parse: Callable[[str], T]
    """The variable's text (stripped, never empty) to a value; ``ValueError`` if not understood."""

    def text(self) -> str:
        """The variable's text, stripped; empty when unset."""
        return os.environ.get(self.variable, "").strip()

    def value(self) -> T:
        """The parsed value now, or the default when unset or not understood."""
        text = self.text()
        if not text:
            return self.default
        try:
            return self.parse(text)
        except ValueError:
            return self.default


def switch(text: str) -> bool:
    """``1``, ``on``, ``true``, ``yes`` are on; ``0``, ``off``, ``false``, ``no`` are off."""
    word = text.lower()
    if word in _ON or word in _OFF:
        return word in _ON
    raise ValueError(f"expected on or off, got {text!r}")


def choice(*words: str) -> Callable[[str], str]:
    """A parser taking one of ``words`` (in any case)."""

    def parse(text: str) -> str:
        if text.lower() in words:
            return text.lower()
        raise ValueError(f"expected one of {', '.join(words)}, got {text!r}")

    return parse


def positive_seconds(text: str) -> float:
    value = float(text)
    if math.isnan(value) or value <= 0:
        raise ValueError(f"expected a positive number of seconds, got {text!r}")
    return value


def positive_count(text: str) -> int:
    value = int(text.replace("_", ""))
    if value <= 0:
        raise ValueError(f"expected a positive whole number, got {text!r}")
    return value


def as_text(text: str) -> str | None:
    return text


UI = Setting(
    "ui",
    "PI_NOTEBOOK_UI",
    "panel",
    "`plain` prints each run's transcript once, as text, instead of the live panel "
    "(headless kernels: nbval, papermill, nbconvert); the same as `--plain` on every cell.",
    choice("panel", "plain"),
)
MODEL = Setting(
    "model",
    "PI_NOTEBOOK_MODEL",
    None,
    "The model when a cell gives no `--model`: `provider/id`, a catalogue id or `demo`. "
    "Unset: a provider whose API key is set, else a local Ollama, else the built-in `demo`.",
    as_text,
)
RECORD = Setting(
    "record",
    "PI_NOTEBOOK_RECORD",
    False,
    "`1`: `pi_notebook.ai.replay.recorded(path, model)` records the real model's replies to "
    "`path`; otherwise it replays them from there.",
    switch,
)
CODE_CELL = Setting(
    "code_cell",
    "PI_NOTEBOOK_CODE_CELL",
    True,
    "`off`: do not offer the agent's code as a new cell below the `%%agent` cell "
    "(as `--no-code-cell` on every cell).",
    switch,
)
SESSIONS = Setting(
    "sessions",
    "PI_NOTEBOOK_SESSIONS",
    True,
    "`off`: do not save each conversation beside the notebook after every run "
    "(`%agent save PATH` still saves one by hand).",
    switch,
)
APPROVAL_TIMEOUT = Setting(
    "approval_timeout",
    "PI_NOTEBOOK_APPROVAL_TIMEOUT",
    600.0,
    "Seconds an approval asked in the panel waits for an answer; then the call is refused.",
    positive_seconds,
)
TOOL_RESULT_CHARS = Setting(
    "tool_result_chars",
    "PI_NOTEBOOK_TOOL_RESULT_CHARS",
    100_000,
    "The most characters of one tool result's text the model gets (the rest is cut with a "
    "note; the whole text stays in the result's details); a tool's `max_result_chars` wins.",
    positive_count,
)
NOTEBOOK_CONTEXT = Setting(
    "notebook_context",
    "PI_NOTEBOOK_CONTEXT",
    True,
    "`off`: `%%agent` runs send no notebook context (the cells run since the conversation's "
    "last run) unless a conversation turns it on with `%agent notebook-context on`.",
    switch,
)
CONTEXT_CHARS = Setting(
    "context_chars",
    "PI_NOTEBOOK_CONTEXT_CHARS",
    8_000,
    "The most characters of notebook context (the cells run since the conversation's last "
    "run: sources, short results, errors) one `%%agent` request carries; newest cells first.",
    positive_count,
)
CACHE_RETENTION = Setting(
    "cache_retention",
    "PI_CACHE_RETENTION",
    "short",
    "`long` asks providers to keep the prompt cache longer (as Pi's variable of the same "
    "name); a request's own `cache_retention` wins.",
    choice("short", "long"),
)
NOTEBOOK_PATH = Setting(
    "notebook_path",
    "JPY_SESSION_NAME",
    None,
    "The notebook's path, set by Jupyter Server: conversations are saved beside it "
    "(VS Code gives it as `__vsc_ipynb_file__` instead).",
    as_text,
)

SETTINGS: tuple[Setting[object], ...] = (
    UI,
    MODEL,
    RECORD,
    CODE_CELL,
    SESSIONS,
    APPROVAL_TIMEOUT,
    TOOL_RESULT_CHARS,
    NOTEBOOK_CONTEXT,
    CONTEXT_CHARS,
    CACHE_RETENTION,
    NOTEBOOK_PATH,
)
"""The table, in the order the README and ``%agent status`` list it."""

LONGEST_SHOWN = 80
"""A value longer than this is cut in ``%agent status`` (a path, a model spec)."""


def show(value: object) -> str:
    """A value as the table writes it: ``on`` / ``off``, ``600``, ``unset``."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "unset"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def status_lines() -> list[str]:
    """``%agent status``'s lines: each variable set to something other than its default.

    None of these variables holds a secret; the caller still redacts its whole text.
    """
    changed = []
    for setting in SETTINGS:
        text = setting.text()
        if not text:
            continue
        shown = text if len(text) <= LONGEST_SHOWN else text[: LONGEST_SHOWN - 1] + "…"
        try:
            value = setting.parse(text)
        except ValueError:
            changed.append(
                f"  {setting.variable}={shown}: not understood, the default "
                f"({show(setting.default)}) applies"
            )
            continue
        if value != setting.default:
            changed.append(f"  {setting.variable}={shown} (default: {show(setting.default)})")
    where = "the README's Settings table lists all"
    if not changed:
        return [f"settings: the defaults ({where})"]
    return [f"settings ({where}):", *changed]


def markdown_table() -> str:
    """The README's table of settings, generated from :data:`SETTINGS`."""
    rows = ["| Variable | Default | What it does |", "| --- | --- | --- |"]
    rows += [f"| `{s.variable}` | {show(s.default)} | {s.help} |" for s in SETTINGS]
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")

__all__ = [
    "APPROVAL_TIMEOUT",
    "CACHE_RETENTION",
    "CODE_CELL",
    "CONTEXT_CHARS",
    "MODEL",
    "NOTEBOOK_CONTEXT",
    "NOTEBOOK_PATH",
    "RECORD",
    "SESSIONS",
    "SETTINGS",
    "UI",
    "Setting",
    "choice",
    "markdown_table",
    "positive_seconds",
    "show",
    "status_lines",
    "switch",
]
