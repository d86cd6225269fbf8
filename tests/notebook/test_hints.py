"""The one-line hints of a notebook run out of order (``pi_notebook.notebook.hints``), without a
kernel: the faux model's "no replies" hint and which ``NameError`` is a cell's own."""

from __future__ import annotations

import sys
from types import TracebackType

from pi_notebook.ai import NO_MORE_RESPONSES, faux_assistant_message
from pi_notebook.notebook.hints import NO_REPLIES_HINT, missing_replies_hint, top_level


def test_the_hint_follows_only_the_faux_models_no_replies_error() -> None:
    used_up = faux_assistant_message("", stop_reason="error", error_message=NO_MORE_RESPONSES)
    other = faux_assistant_message("", stop_reason="error", error_message="connection reset")
    answered = faux_assistant_message("Hi.")
    assert missing_replies_hint([used_up]) == NO_REPLIES_HINT
    assert missing_replies_hint([answered, used_up]) == NO_REPLIES_HINT
    assert missing_replies_hint([used_up, answered]) is None  # a later reply came
    assert missing_replies_hint([other]) is None
    assert missing_replies_hint([]) is None


def _traceback_of(code: str) -> TracebackType | None:
    try:
        exec(compile(code, "<cell>", "exec"), {})
    except NameError:
        return sys.exc_info()[2]
    raise AssertionError("no NameError")


def test_a_name_error_of_the_cells_own_code_is_top_level() -> None:
    assert top_level(_traceback_of("x = 1\nfaux.set_responses([])"))
    assert not top_level(_traceback_of("def f():\n    return missing\n\nf()"))
    assert not top_level(None)
