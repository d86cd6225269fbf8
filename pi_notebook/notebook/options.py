"""The ``%%agent`` options, declared once, and their parser: argparse that never exits the kernel
and never prints.

Each field of :class:`AgentOptions` declares its flag (``max_turns`` is ``--max-turns``): its
help and ``add_argument`` settings are the field's metadata, and :func:`build_parser` builds the
parser from the fields, in their order. ``parse_options(line)`` returns :class:`AgentOptions` or
raises :class:`OptionsError` (a usage error, or the ``--help`` text with ``is_help=True``). This
module must never run anything, touch the user namespace or read API keys.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from dataclasses import Field, dataclass, field, fields
from typing import Any, NoReturn

from ..settings import APPROVAL_TIMEOUT, CODE_CELL, MODEL, UI, show

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high")
STEP_GRANULARITIES = ("lifecycle", "all", "tools")
APPROVE_MODES = ("writes", "all", "none")

DESCRIPTION = """\
Run the agent on the cell body (the prompt). {name} / {expr} in the prompt are expanded from
the notebook namespace like IPython shell commands, each once ({{ and }} escape a brace; if an
expression fails, nothing runs and the error names it). One default conversation persists
across cells.
The final assistant text of the last run is stored in the variable _agent_reply.
"""

LINE_COMMAND_USAGES: tuple[str, ...] = (
    "reset [--mcp]",
    "steer TEXT",
    "followup TEXT",
    "abort",
    "status",
    "history",
    "events",
    "model NAME",
    "last",
    "undo [--all]",
    "budget [USD|off]",
    "compact",
    "context [TURN] [--json|--diff]",
    "notebook-context [on|off]",
    "timeline",
    "replay PATH [--step [lifecycle|all|tools]] [--plain]",
    "code [--cell|--answer]",
    "resume [NAME] [--count-cost]",
    "save PATH",
    "load PATH [--count-cost]",
    "help",
)
"""The line commands as the help lists them; :func:`build_parser` takes another list (the
line-command table's) as ``line_commands``."""

HELP_WIDTH = 95

EPILOG = f"""\
tools and the approval policy belong to the conversation: they stay for later cells (also
through --new and %agent reset) until --tools / --no-tools / --approve change them.
code cell: when a run wrote variables, its run_python / set_variable code is offered as a new
cell below (interactive front ends only; off with --no-code-cell or {CODE_CELL.variable}=off).
model resolution: --model > ${MODEL.variable} > a provider whose API key is set (Anthropic,
OpenAI, OpenRouter) > a local Ollama on localhost:11434 > the built-in 'demo' model.
"""


def line_commands_text(usages: Sequence[str]) -> str:
    """``line commands: %agent reset [--mcp] | steer TEXT | ...``, wrapped under itself."""
    lines = ["line commands: %agent"]
    for number, usage in enumerate(usages):
        piece = f" {usage} |" if number < len(usages) - 1 else f" {usage}"
        if len(lines[-1]) + len(piece) > HELP_WIDTH and number:
            lines.append(" " * 14)
        lines[-1] += piece
    return "\n".join(lines) + "\n"


class OptionsError(ValueError):
    """A usage error (or the ``--help`` text when ``is_help``); the cell must not run."""

    def __init__(self, message: str, *, is_help: bool = False) -> None:
        super().__init__(message)
        self.is_help = is_help


def option(help: str, **argument: Any) -> Any:
    """An option taking a value (``None`` when not given); ``argument`` goes to ``add_argument``."""
    return field(default=None, metadata={"help": help, **argument})


def switch(help: str) -> Any:
    """An option that is on when given."""
    return field(default=False, metadata={"help": help, "action": "store_true"})


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def positive_usd(text: str) -> float:
    """A positive dollar amount (``0.50``, ``$2``)."""
    try:
        value = float(text.strip().removeprefix("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an amount in USD, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive amount in USD, got {text!r}")
    return value


@dataclass
class AgentOptions:
    """The ``%%agent`` options, in the order the help lists them."""

    model: str | None = option(
        "'provider/id', a catalogue id, 'demo', or the name of "
        "a Model (or faux provider) in the notebook namespace; kept for the conversation",
        metavar="NAME",
    )
    system: str | None = option("system prompt for the conversation", metavar="TEXT")
    thinking: str | None = option("reasoning effort", choices=THINKING_LEVELS)
    tools: list[str] = field(
        default_factory=list,
        metadata={
            "help": "the conversation's tools from now on, exactly these (they replace the "
            "current ones and stay for later cells), comma- or space-separated: AgentTools (or "
            "lists of them) in the notebook namespace, or a built-in collection ('notebook': "
            "list_variables, inspect_variable, run_python, set_variable, notebook_cells, "
            "last_error) or one of its tools",
            "metavar": "NAME",
            "nargs": "+",
        },
    )
    no_tools: bool = switch("remove every tool from the conversation (for this and later cells)")
    approve: str | None = option(
        "the conversation's approval policy from now on (it stays for later cells): "
        "'writes' asks before a tool writes variables or runs code, 'all' before every tool, "
        "'none' turns approvals off. Asked in the panel (unanswered for "
        f"${APPROVAL_TIMEOUT.variable} seconds, default {show(APPROVAL_TIMEOUT.default)}, the "
        "call is refused) or by the approver set with pi_notebook.tools.set_approver; with "
        "neither, such calls are refused. It forgets the tools answered 'Always allow'",
        choices=APPROVE_MODES,
    )
    new: bool = switch("start a fresh conversation")
    agent: str | None = option(
        "use (or create and store) the Agent in variable NAME instead of the default conversation",
        metavar="NAME",
    )
    max_turns: int | None = option("stop after N model turns", metavar="N", type=_positive)
    max_tokens: int | None = option(
        "most output tokens per model reply in this cell (default: the Agent's own "
        "max_tokens, else the model's, else the catalogue's for its id, else 4096)",
        metavar="N",
        type=_positive,
    )
    max_cost: float | None = option(
        "stop this run before a model request once it has cost USD dollars "
        "(from the provider's usage, or an estimate); %%agent budget USD limits the conversation",
        metavar="USD",
        type=positive_usd,
    )
    no_compact: bool = switch(
        "send this run's model requests uncompacted: no summary of the oldest messages "
        "when the context nears the model's window (agent.compaction.enabled = False turns "
        "it off for good; %%agent compact compacts by hand)"
    )
    plain: bool = switch(
        f"text rendering: the final transcript printed once (also {UI.variable}=plain)"
    )
    background: bool = switch(
        "schedule the run and return at once; the transcript replaces the cell's "
        "placeholder output when done. %%agent steer/abort/status work from other cells. "
        "Trade-off: Run All, nbval and papermill do not wait for it"
    )
    step: str | None = option(
        "teaching mode: the panel holds the run until you click 'Next' (or 'Run to end'): "
        "at the eight lifecycle events (the default), at 'all' events and model requests "
        "(every streamed chunk too), or only before each tool runs and each model request "
        "('tools'); plain mode runs without pauses",
        nargs="?",
        const="lifecycle",
        choices=STEP_GRANULARITIES,
        metavar="{lifecycle,all,tools}",
    )
    """The step granularity (``lifecycle``, ``all`` or ``tools``), or None: no step mode."""
    no_context: bool = switch(
        "send this run no notebook context (the cells run since the conversation's last run: "
        "sources, short results, errors); %%agent notebook-context off turns it off for the "
        "conversation"
    )
    no_code_cell: bool = switch(
        "do not offer the agent's code as a new cell below this one "
        f"(also {CODE_CELL.variable}=off); %%agent code prints it"
    )


OPTIONS: dict[str, Field[Any]] = {declared.name: declared for declared in fields(AgentOptions)}
"""Each option's declaration, by field name."""


def add_option(parser: argparse.ArgumentParser, name: str, **changes: Any) -> None:
    """Add :class:`AgentOptions`' field ``name`` to ``parser`` (``changes`` override its help,
    choices...)."""
    argument = {"default": getattr(AgentOptions(), name), **OPTIONS[name].metadata, **changes}
    parser.add_argument(f"--{name.replace('_', '-')}", **argument)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise OptionsError(f"{self.format_usage()}{self.prog}: error: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise OptionsError(message or "", is_help=status == 0)


def build_parser(line_commands: Sequence[str] = LINE_COMMAND_USAGES) -> argparse.ArgumentParser:
    """The ``%%agent`` parser, from :class:`AgentOptions`; the help's epilog lists
    ``line_commands`` (usages such as ``"undo"``, ``"save PATH"``)."""
    parser = _Parser(
        prog="%%agent",
        description=DESCRIPTION,
        epilog=line_commands_text(line_commands) + EPILOG,
        add_help=False,
        allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-h", "--help", action="store_true", help="show this help and run nothing")
    for name in OPTIONS:
        add_option(parser, name)
    return parser


def format_help(line_commands: Sequence[str] = LINE_COMMAND_USAGES) -> str:
    return build_parser(line_commands).format_help()


def magic_doc(line_commands: Sequence[str] = LINE_COMMAND_USAGES) -> str:
    """The magic's docstring (``%%agent?``, Shift-Tab): a summary line and the full help, as
    IPython's ``@magic_arguments`` magics build theirs from their parser."""
    return (
        "%agent COMMAND [TEXT] runs a line command; %%agent [options] runs the agent on the "
        "cell body.\n\n" + format_help(line_commands)
    )


def parse_options(line: str, line_commands: Sequence[str] = LINE_COMMAND_USAGES) -> AgentOptions:
    """Parse the ``%%agent`` line; raises :class:`OptionsError` (``--help``: the help, listing
    ``line_commands``)."""
    try:
        argv = shlex.split(line)
    except ValueError as exc:
        raise OptionsError(f"%%agent: error: cannot parse options: {exc}") from None
    parser = build_parser(line_commands)
    namespace = parser.parse_args(argv)
    if namespace.help:
        raise OptionsError(parser.format_help(), is_help=True)
    values = vars(namespace)
    values.pop("help")
    given = values["tools"]
    values["tools"] = [name.strip() for item in given for name in item.split(",") if name.strip()]
    if given and not values["tools"]:
        raise OptionsError(
            f"{parser.format_usage()}%%agent: error: --tools names no tool "
            f"(got {' '.join(given)!r}); leave --tools out to keep the current tools, "
            "or use --no-tools to remove them"
        )
    if values["tools"] and values["no_tools"]:
        raise OptionsError(
            f"{parser.format_usage()}%%agent: error: --tools and --no-tools contradict each other"
        )
    return AgentOptions(**values)


def parse_replay_options(line: str) -> AgentOptions:
    """``%agent replay PATH [--step [G]] [--plain]``: the options of a replayed run, with the
    recording's path in ``model`` (it is the run's model); raises :class:`OptionsError`."""
    try:
        argv = shlex.split(line)
    except ValueError as exc:
        raise OptionsError(f"%agent replay: error: cannot parse options: {exc}") from None
    parser = _Parser(prog="%agent replay", add_help=False, allow_abbrev=False)
    parser.add_argument(
        "path", metavar="PATH", help="a recording (pi_notebook.ai.replay) or a saved conversation"
    )
    add_option(parser, "plain", help="the transcript printed once")
    add_option(parser, "step")
    namespace = parser.parse_args(argv)
    return AgentOptions(model=namespace.path, plain=namespace.plain, step=namespace.step)


__all__ = [
    "APPROVE_MODES",
    "LINE_COMMAND_USAGES",
    "OPTIONS",
    "STEP_GRANULARITIES",
    "THINKING_LEVELS",
    "AgentOptions",
    "OptionsError",
    "add_option",
    "build_parser",
    "format_help",
    "magic_doc",
    "parse_options",
    "parse_replay_options",
    "positive_usd",
]
