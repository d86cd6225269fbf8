"""The ``%%agent`` option parser: argparse, but it never exits the kernel and never prints.

``parse_options(line)`` returns :class:`AgentOptions` or raises :class:`OptionsError` (a usage
error, or the ``--help`` text with ``is_help=True``). This module must never run anything, touch
the user namespace or read API keys.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field
from typing import NoReturn

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

EPILOG = """\
line commands: %agent reset [--mcp] | steer TEXT | followup TEXT | abort | status | history |
               events | model NAME | last | undo | budget [USD|off] | compact |
               context [TURN] [--json] | replay PATH [--step [lifecycle|all|tools]] [--plain] |
               code [--cell] | resume [NAME] | save PATH | load PATH | help
tools and the approval policy belong to the conversation: they stay for later cells (also
through --new and %agent reset) until --tools / --no-tools / --approve change them.
code cell: when a run wrote variables, its run_python / set_variable code is offered as a new
cell below (interactive front ends only; off with --no-code-cell or PI_NOTEBOOK_CODE_CELL=off).
model resolution: --model > $PI_NOTEBOOK_MODEL > a provider whose API key is set (Anthropic,
OpenAI, OpenRouter) > a local Ollama on localhost:11434 > the built-in 'demo' model.
"""


class OptionsError(ValueError):
    """A usage error (or the ``--help`` text when ``is_help``); the cell must not run."""

    def __init__(self, message: str, *, is_help: bool = False) -> None:
        super().__init__(message)
        self.is_help = is_help


@dataclass
class AgentOptions:
    model: str | None = None
    system: str | None = None
    thinking: str | None = None
    tools: list[str] = field(default_factory=list)
    no_tools: bool = False
    new: bool = False
    agent: str | None = None
    max_turns: int | None = None
    max_cost: float | None = None
    no_compact: bool = False
    plain: bool = False
    background: bool = False
    step: str | None = None
    """The step granularity (``lifecycle``, ``all`` or ``tools``), or None: no step mode."""
    approve: str | None = None
    max_tokens: int | None = None
    no_code_cell: bool = False


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise OptionsError(f"{self.format_usage()}{self.prog}: error: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise OptionsError(message or "", is_help=status == 0)


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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="%%agent",
        description=DESCRIPTION,
        epilog=EPILOG,
        add_help=False,
        allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("-h", "--help", action="store_true", help="show this help and run nothing")
    add(
        "--model",
        metavar="NAME",
        help="'provider/id', a catalogue id, 'demo', or the name of "
        "a Model (or faux provider) in the notebook namespace; kept for the conversation",
    )
    add("--system", metavar="TEXT", help="system prompt for the conversation")
    add("--thinking", choices=THINKING_LEVELS, help="reasoning effort")
    add(
        "--tools",
        metavar="NAME",
        nargs="+",
        default=[],
        help="the conversation's tools from now on, exactly these (they replace the current "
        "ones and stay for later cells), comma- or space-separated: AgentTools (or lists of "
        "them) in the notebook namespace, or a built-in collection ('notebook': "
        "list_variables, inspect_variable, run_python, set_variable) or one of its tools",
    )
    add(
        "--no-tools",
        action="store_true",
        help="remove every tool from the conversation (for this and later cells)",
    )
    add(
        "--approve",
        choices=APPROVE_MODES,
        help="the conversation's approval policy from now on (it stays for later cells): "
        "'writes' asks before a tool writes variables or runs code, 'all' before every tool, "
        "'none' turns approvals off. Asked in the panel (unanswered for "
        "$PI_NOTEBOOK_APPROVAL_TIMEOUT seconds, default 600, the call is refused) or by the "
        "approver set with pi_notebook.tools.set_approver; with neither, such calls are refused",
    )
    add("--new", action="store_true", help="start a fresh conversation")
    add(
        "--agent",
        metavar="NAME",
        help="use (or create and store) the Agent in variable NAME "
        "instead of the default conversation",
    )
    add("--max-turns", metavar="N", type=_positive, help="stop after N model turns")
    add(
        "--max-tokens",
        metavar="N",
        type=_positive,
        help="most output tokens per model reply in this cell (default: the Agent's own "
        "max_tokens, else the model's, else the catalogue's for its id, else 4096)",
    )
    add(
        "--max-cost",
        metavar="USD",
        type=positive_usd,
        help="stop this run before a model request once it has cost USD dollars "
        "(from the provider's usage, or an estimate); %%agent budget USD limits the conversation",
    )
    add(
        "--no-compact",
        action="store_true",
        help="send this run's model requests uncompacted: no summary of the oldest messages "
        "when the context nears the model's window (agent.compaction.enabled = False turns "
        "it off for good; %%agent compact compacts by hand)",
    )
    add(
        "--plain",
        action="store_true",
        help="text rendering: the final transcript printed once (also PI_NOTEBOOK_UI=plain)",
    )
    add(
        "--background",
        action="store_true",
        help="schedule the run and return at once; the transcript replaces the cell's "
        "placeholder output when done. %%agent steer/abort/status work from other cells. "
        "Trade-off: Run All, nbval and papermill do not wait for it",
    )
    add_step_option(parser)
    add(
        "--no-code-cell",
        action="store_true",
        help="do not offer the agent's code as a new cell below this one "
        "(also PI_NOTEBOOK_CODE_CELL=off); %%agent code prints it",
    )
    return parser


def add_step_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--step",
        nargs="?",
        const="lifecycle",
        choices=STEP_GRANULARITIES,
        metavar="{lifecycle,all,tools}",
        help="teaching mode: the panel holds the run until you click 'Next' (or 'Run to end'): "
        "at the eight lifecycle events (the default), at 'all' events and model requests "
        "(every streamed chunk too), or only before each tool runs and each model request "
        "('tools'); plain mode runs without pauses",
    )


def format_help() -> str:
    return build_parser().format_help()


def magic_doc() -> str:
    """The magic's docstring (``%%agent?``, Shift-Tab): a summary line and the full help, as
    IPython's ``@magic_arguments`` magics build theirs from their parser."""
    return (
        "%agent COMMAND [TEXT] runs a line command; %%agent [options] runs the agent on the "
        "cell body.\n\n" + format_help()
    )


def parse_options(line: str) -> AgentOptions:
    """Parse the ``%%agent`` line; raises :class:`OptionsError`."""
    try:
        argv = shlex.split(line)
    except ValueError as exc:
        raise OptionsError(f"%%agent: error: cannot parse options: {exc}") from None
    parser = build_parser()
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
    parser.add_argument("--plain", action="store_true", help="the transcript printed once")
    add_step_option(parser)
    namespace = parser.parse_args(argv)
    return AgentOptions(model=namespace.path, plain=namespace.plain, step=namespace.step)


__all__ = [
    "APPROVE_MODES",
    "STEP_GRANULARITIES",
    "THINKING_LEVELS",
    "AgentOptions",
    "OptionsError",
    "add_step_option",
    "format_help",
    "magic_doc",
    "parse_options",
    "parse_replay_options",
    "positive_usd",
]
