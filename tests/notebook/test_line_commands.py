"""The line commands are one table: what ``%agent`` accepts and what its help lists."""

from __future__ import annotations

import re

from pi_notebook.notebook.line_commands import COMMANDS, commands_help, usages
from pi_notebook.notebook.options import LINE_COMMAND_USAGES, format_help


def test_the_help_lists_the_tables_commands_in_order() -> None:
    paragraph = commands_help()
    assert paragraph in format_help(usages())
    assert usages() == LINE_COMMAND_USAGES  # the options' default list says the same
    listed = re.sub(r"\s+", " ", paragraph.removeprefix("line commands: %agent "))
    names = [item.split()[0] for item in listed.split(" | ")]
    assert names == list(COMMANDS)
    assert all(len(line) <= 100 for line in paragraph.splitlines())


def test_the_paragraph_reads_as_before() -> None:
    assert commands_help() == (
        "line commands: %agent reset [--mcp] | steer TEXT | followup TEXT | abort | status | "
        "history |\n"
        "               events | model NAME | last | undo [--all] | budget [USD|off] | compact |\n"
        "               context [TURN] [--json|--diff] | notebook-context [on|off] | timeline |\n"
        "               replay PATH [--step [lifecycle|all|tools]] [--plain] | "
        "code [--cell|--answer] |\n"
        "               resume [NAME] [--count-cost] | save PATH | load PATH [--count-cost] "
        "| help\n"
    )
