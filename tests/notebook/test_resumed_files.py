"""Issue 28, items 7-9, piece by piece (no kernel): the header line, the two-kernel guard, the
checks a loaded file goes through. The kernel tests are in ``test_resumed_files_kernel.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_notebook.ai import (
    TextContent,
    ToolResultMessage,
    UserMessage,
    faux_assistant_message,
    faux_tool_call,
)
from pi_notebook.notebook.file_guard import FileGuard
from pi_notebook.notebook.history_repair import drop_unanswering_results
from pi_notebook.notebook.resume_checks import prompt_preview, thinking_level, uncounted_cost
from pi_notebook.notebook.transcript_file import (
    FileHeader,
    TranscriptFileError,
    message_line,
    read,
    read_header,
    write,
)


def _result(call_id: str) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id,
        tool_name="run_python",
        content=[TextContent(text="done")],
        is_error=False,
        timestamp=1,
    )


def test_the_header_counts_the_messages_and_is_read_alone(tmp_path: Path) -> None:
    path = tmp_path / "nb.default.jsonl"
    messages = [UserMessage(content="hi", timestamp=1), faux_assistant_message("hello")]
    write(path, FileHeader(kernel="k1"), [message_line(m) for m in messages])
    assert json.loads(path.read_text(encoding="utf-8").splitlines()[0])["messages"] == 2
    with path.open("ab") as handle:
        handle.write(b"\xff\xfe not UTF-8, not JSON\n" * 1000)
    header = read_header(path)  # the first line only: the body is not looked at
    assert (header.messages, header.kernel) == (2, "k1")
    with pytest.raises(TranscriptFileError, match="cannot read it"):
        read(path)


def test_a_header_line_that_is_no_header_is_refused_without_reading_on(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_bytes(b"x" * (3 << 20))  # one long line: at most HEADER_BYTES of it is read
    with pytest.raises(TranscriptFileError, match="not a pi_notebook conversation file"):
        read_header(path)


@pytest.mark.parametrize("br", ["\u2028", "\u2029", "\x85", "\x1c", "\x0b", "\x0c", "\r"])
def test_a_message_with_any_line_break_character_round_trips(tmp_path: Path, br: str) -> None:
    path = tmp_path / "nb.default.jsonl"
    messages = [UserMessage(content=f"one{br}two", timestamp=1), faux_assistant_message("ok")]
    write(path, FileHeader(system_prompt=f"be{br}brief"), [message_line(m) for m in messages])
    loaded = read(path)
    assert loaded.header is not None and loaded.header.system_prompt == f"be{br}brief"
    assert getattr(loaded.messages[0], "content", None) == f"one{br}two"


def test_the_guard_knows_its_own_writes_and_diverts_after_another_kernels(tmp_path: Path) -> None:
    path = tmp_path / "nb.default.jsonl"
    mine, theirs = FileGuard("a" * 32), FileGuard("b" * 32)
    write(path, FileHeader(kernel=mine.kernel_id), [])
    mine.remember(path)
    assert not mine.written_since(path)
    write(path, FileHeader(kernel=theirs.kernel_id), [])  # the other kernel saves
    assert mine.written_since(path)
    beside = mine.divert(path)
    assert beside.name == "nb.default.kernel-aaaaaaaa.jsonl" and not beside.exists()
    assert mine.target(path) == beside
    mine.forget_diversion(path)
    assert mine.target(path) == path
    path.unlink()
    assert not mine.written_since(path)  # gone: nothing to lose


def test_results_that_answer_no_call_are_dropped() -> None:
    call = faux_tool_call("run_python", {"code": "x = 1"}, id="c1")
    asked = faux_assistant_message([call], stop_reason="toolUse")
    user = UserMessage(content="hi", timestamp=1)
    messages = [user, _result("early"), asked, _result("c1"), _result("c1"), _result("c9")]
    kept, dropped = drop_unanswering_results(messages)
    assert dropped == 3 and kept == [user, asked, messages[3]]


def test_the_prompt_preview_is_one_line_of_80_characters() -> None:
    prompt = "line one\nline two\u2028" + "y" * 200
    preview = prompt_preview(prompt)
    assert preview == f'"{("line one line two " + "y" * 200)[:80]}…" ({len(prompt)} characters)'
    assert len(preview.splitlines()) == 1
    assert prompt_preview("") == "none"
    assert prompt_preview("short") == '"short" (5 characters)'


def test_thinking_levels_outside_pis_are_refused_and_costs_are_a_baseline() -> None:
    assert thinking_level("high") == ("high", None)
    assert thinking_level(None) == (None, None)
    level, note = thinking_level("turbo")
    assert level is None and note is not None and note.startswith('thinking level "turbo"')
    assert uncounted_cost(1.25, count_cost=False) == 1.25
    assert uncounted_cost(1.25, count_cost=True) == 0.0
