"""``%agent context [TURN] [--json | --diff]``: the words of the line command, apart from the
views it prints (:mod:`.context_view`, :mod:`.context_diff`).

A turn's request is the one it sent for its answer (the retry, when the first was refused for
overflow); ``--diff`` compares it with the previous turn's. Mistakes (no request, a turn out of
range, an unknown option) are one-line ``UsageError``\\ s.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from .context_diff import diff_text, request_diff
from .context_view import PURPOSE_WORDS, context_json, context_text, turn_count, turn_request

#: The options ``%agent context`` takes.
CONTEXT_OPTIONS = ("--json", "--diff")


def context_of(requests: list[Any], rest: str) -> str:
    """What ``%agent context REST`` prints for the last run's ``requests``."""
    words = rest.split()
    unknown = [w for w in words if w.startswith("-") and w not in CONTEXT_OPTIONS]
    if unknown:
        raise UsageError(
            f"%agent context: unknown option {unknown[0]!r}; expected "
            f"{' or '.join(CONTEXT_OPTIONS)}"
        )
    as_json, as_diff = "--json" in words, "--diff" in words
    if as_json and as_diff:
        raise UsageError("%agent context: --json and --diff do not go together; choose one")
    numbers = [w for w in words if w not in CONTEXT_OPTIONS]
    if not requests:
        raise UsageError("%agent context: the last run made no model request")
    if len(numbers) > 1 or (numbers and not numbers[0].isdigit()):
        raise UsageError(f"%agent context: expected a turn number, got {rest!r}")
    turns = turn_count(requests)
    turn = int(numbers[0]) if numbers else max(r.turn for r in requests)
    request = turn_request(requests, turn)
    if request is None:
        which = f"{turns} turns (1 to {turns})" if turns != 1 else "1 turn"
        raise UsageError(f"%agent context: turn {turn}: the last run had {which}")
    if as_json:
        return context_json(request)
    if as_diff:
        text = diff_text(request_diff(turn_request(requests, turn - 1), request))
    else:
        text = context_text(request)
    others = [r for r in requests if r.turn == turn and r is not request]
    if others:  # a compaction summary, or the refused request a retry replaced
        also = "; ".join(
            PURPOSE_WORDS.get(r.purpose, "a request refused for context overflow") for r in others
        )
        text += f"\n(turn {turn} also sent: {also})"
    return text


__all__ = ["CONTEXT_OPTIONS", "context_of"]
