"""The ``%%agent`` options are declared once, as :class:`AgentOptions`' fields: the parser and
its help come from them, and the help's list of line commands is a parameter."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest

from pi_notebook.notebook.options import (
    LINE_COMMAND_USAGES,
    OPTIONS,
    AgentOptions,
    OptionsError,
    build_parser,
    format_help,
    magic_doc,
    parse_options,
    parse_replay_options,
)
from pi_notebook.settings import APPROVAL_TIMEOUT, CODE_CELL, MODEL, UI

# A value for each option taking one, and what the field then holds.
GIVEN: dict[str, tuple[str, object]] = {
    "model": ("demo", "demo"),
    "system": ("'Be terse.'", "Be terse."),
    "thinking": ("high", "high"),
    "tools": ("a,b c", ["a", "b", "c"]),
    "approve": ("writes", "writes"),
    "agent": ("helper", "helper"),
    "max_turns": ("3", 3),
    "max_tokens": ("77", 77),
    "max_cost": ("$0.50", 0.5),
    "step": ("tools", "tools"),
}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def test_every_field_is_an_option_and_every_option_a_field() -> None:
    flags = re.findall(r"\[(--?[a-z-]+)", build_parser().format_usage())
    assert flags == ["-h", *(_flag(f.name) for f in fields(AgentOptions))]
    assert list(OPTIONS) == [f.name for f in fields(AgentOptions)]
    assert all(OPTIONS[name].metadata["help"] for name in OPTIONS)


@pytest.mark.parametrize("name", list(OPTIONS))
def test_each_flag_sets_its_field_and_only_it(name: str) -> None:
    text, expected = GIVEN.get(name, ("", True))
    options = parse_options(f"{_flag(name)} {text}")
    assert getattr(options, name) == expected
    others = {f.name: getattr(options, f.name) for f in fields(AgentOptions) if f.name != name}
    assert others == {k: v for k, v in vars(AgentOptions()).items() if k != name}


def test_the_defaults_are_the_dataclass_defaults() -> None:
    assert parse_options("") == AgentOptions()
    assert parse_options("").tools is not parse_options("").tools


def test_the_help_names_the_settings_from_the_table() -> None:
    text = format_help()
    assert f"(also {UI.variable}=plain)" in text
    approve = OPTIONS["approve"].metadata["help"]
    assert f"${APPROVAL_TIMEOUT.variable} seconds, default 600," in approve
    assert f"off with --no-code-cell or {CODE_CELL.variable}=off" in text
    assert f"--model > ${MODEL.variable} >" in text


def test_the_line_commands_in_the_help_are_today_s_list_by_default() -> None:
    epilog = build_parser().epilog or ""
    assert epilog.startswith(
        "line commands: %agent reset [--mcp] | steer TEXT | followup TEXT | abort | status | "
        "history |\n"
        "               events | model NAME | last | undo [--all] | budget [USD|off] | compact |\n"
        "               context [TURN] [--json|--diff] | notebook-context [on|off] | timeline |\n"
        "               replay PATH [--step [lifecycle|all|tools]] [--plain] | "
        "code [--cell|--answer] |\n"
        "               resume [NAME] [--count-cost] | save PATH | load PATH [--count-cost] "
        "| help\n"
        "tools and the approval policy"
    )
    assert len(LINE_COMMAND_USAGES) == 21


def test_the_line_commands_in_the_help_come_from_the_caller() -> None:
    usages = ["undo", "save PATH", *(f"command{n} ARGUMENT" for n in range(12))]
    help_text = format_help(usages)
    assert "line commands: %agent undo | save PATH | command0 ARGUMENT |" in help_text
    assert "reset [--mcp]" not in help_text
    lines = help_text[help_text.index("line commands:") :].splitlines()[:3]
    assert all(len(line) <= 95 for line in lines) and lines[1].startswith(" " * 15 + "command")
    assert "undo | save PATH" in magic_doc(usages)
    with pytest.raises(OptionsError) as raised:
        parse_options("--help", usages)
    assert raised.value.is_help and "%agent undo | save PATH" in str(raised.value)


def test_the_replay_parser_reuses_the_declared_step_option() -> None:
    options = parse_replay_options("run.jsonl --step --plain")
    assert (options.model, options.step, options.plain) == ("run.jsonl", "lifecycle", True)
    with pytest.raises(OptionsError, match="invalid choice: 'every'"):
        parse_replay_options("run.jsonl --step every")
