"""Issue 19, part 3: ``%%agent?`` and Shift-Tab show the full option list.

Both go through the kernel as a front end sends them: Shift-Tab is an ``inspect_request``
(detail level 0) with the cursor on the magic; ``%%agent?`` is an execution whose reply
carries IPython's ``page`` payload.
"""

from __future__ import annotations

import re

import pytest

from pi_notebook.notebook.options import build_parser

from .conftest import Kernel

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _options() -> list[str]:
    return [flag for action in build_parser()._actions for flag in action.option_strings]


def _inspect(kernel: Kernel, code: str, cursor: int) -> str:
    msg_id = kernel.kc.inspect(code, cursor, detail_level=0)
    while True:
        reply = kernel.kc.get_shell_msg(timeout=30)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    content = reply["content"]
    assert content["status"] == "ok" and content["found"], content
    return ANSI.sub("", content["data"]["text/plain"])


@pytest.mark.parametrize("cursor", [3, 7], ids=["on-name", "after-name"])
def test_shift_tab_on_the_cell_magic_shows_every_option(kernel: Kernel, cursor: int) -> None:
    text = _inspect(kernel, "%%agent --model demo\nHello", cursor)
    missing = [flag for flag in _options() if flag not in text]
    assert missing == [], text
    assert "line commands: %agent reset" in text


def test_question_mark_pages_the_full_help(kernel: Kernel) -> None:
    reply = kernel.kc.execute_interactive("%%agent?", timeout=30, output_hook=lambda m: None)
    pages = [p for p in reply["content"]["payload"] if p.get("source") == "page"]
    assert len(pages) == 1
    text = ANSI.sub("", pages[0]["data"]["text/plain"])
    assert [flag for flag in _options() if flag not in text] == []
    assert "--no-code-cell" in text and "resume [NAME]" in text
