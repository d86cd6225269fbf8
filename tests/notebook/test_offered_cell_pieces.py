"""Issue 28, items 1, 2 and 4: the pieces of the offered cell's comments (no kernel).

Every character Python or an editor breaks a line at is tried where model or provider text
could reach a comment: a tool call's id, a ``set_variable`` expression, a tool's name, the
names a call wrote. The kernel tests are in ``test_offered_cell.py``.
"""

from __future__ import annotations

import ast
import io
import tokenize

import pytest

from pi_notebook.notebook.code_cell import CodeBlock, RunCode, assignment
from pi_notebook.notebook.offered_cell import names_text, one_line, redacted_names, tool_label

#: Every character Python (``\n``, ``\r``) or an editor (the rest) breaks a line at.
LINE_BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85"]
LINE_BREAKS += ["\u2028", "\u2029"]


def _code_lines(text: str) -> list[str]:
    """The lines that hold code once comments are taken out (by Python's tokenizer)."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER}
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    rows = sorted({tok.start[0] for tok in tokens if tok.type not in skip})
    lines = text.splitlines()
    return [lines[row - 1] for row in rows if 0 < row <= len(lines)]


@pytest.mark.parametrize("br", LINE_BREAKS)
def test_no_line_break_of_any_kind_reaches_a_comment(br: str) -> None:
    expression = f"len(xs) if 1 else '''{br}import os#'''"
    code, note = assignment("n", expression, 3, True)
    assert (code, note) == ("n = 3", None)
    assert not one_line(f"a{br}b")
    block = CodeBlock(f"id{br}import os\n#", "run_python", "x = 1", None, frozenset({"x"}))
    assert block.text(1) == "# run_python (call 1)\nx = 1"
    assert tool_label(f"run{br}python", 2) == "a tool (call 2)"
    assert names_text([f"a{br}import os", "b", "c"]) == "b, c and 1 other name"


def test_names_a_call_wrote_are_never_echoed_unless_identifiers() -> None:
    block = CodeBlock("c1", "commit", None, "x", frozenset({"ok", "bad\rname"}))
    run = RunCode([block, CodeBlock("c2", "run_python", "y = 1", None, frozenset({"y"}))])
    assert "bad" not in run.text() and "\r" not in run.text()


def test_redacted_names_are_the_bindings_redaction_changed() -> None:
    token = "ghp_" + "A1b2C3d4E5" * 4
    original = f"a = 1\ntok = {token!r}\nb, c = tok, 2"
    redacted = original.replace(token, "[redacted: GitHub token]")
    assert redacted_names(original, redacted, {"a", "b", "c", "tok"}) == ["tok"]
    # A secret handed to a call: what it reaches is unknown, so every name the call wrote.
    call = f"store({token!r})"
    assert redacted_names(call, call.replace(token, "X"), {"z"}) == ["z"]


def test_a_secret_outside_a_string_leaves_a_comment_not_broken_code() -> None:
    token = "ghp_" + "A1b2C3d4E5" * 4
    block = CodeBlock("c1", "run_python", f"{token} = 1", None, frozenset({token}))
    text = RunCode([block]).text()
    assert token not in text
    assert "x" not in "".join(_code_lines(text))
    assert ast.parse(text).body == []  # comments only: nothing runs
