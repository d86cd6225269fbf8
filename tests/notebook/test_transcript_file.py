"""Issue 19, part 2, the pieces: the conversation file, its atomic write, the repair on load,
where files go, and that keys, headers and secrets never reach a file."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_notebook.agent import Agent
from pi_notebook.ai import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    faux_assistant_message,
    register_faux_provider,
)
from pi_notebook.notebook import conversations as conv
from pi_notebook.notebook.history_repair import NO_RESULT, close_unanswered_calls
from pi_notebook.notebook.transcript_file import (
    FileHeader,
    LineCache,
    TranscriptFileError,
    check_writable,
    read,
    write,
)
from pi_notebook.settings import NOTEBOOK_PATH

from .conftest import ROOT


def _assistant(*blocks: Any, stop: Any = "stop") -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks), api="faux", provider="faux", model="faux-1", stop_reason=stop
    )


def _transcript() -> list[AgentMessage]:
    return [
        UserMessage(content="Plot it."),
        _assistant(
            ThinkingContent(thinking="hmm", thinking_signature="sig"),
            ToolCall(id="t1", name="run_python", arguments={"code": "x = 1"}),
            stop="toolUse",
        ),
        ToolResultMessage(
            tool_call_id="t1",
            tool_name="run_python",
            content=[TextContent(text="namespace: created x")],
            details={"namespace_diff": {"created": ["x"], "changed": [], "deleted": []}},
        ),
        CustomMessage.model_validate({"role": "note", "text": "kept as it is"}),
        _assistant(TextContent(text="Done.")),
    ]


def test_a_transcript_round_trips_through_the_file(tmp_path: Path) -> None:
    messages = _transcript()
    path = tmp_path / "c.jsonl"
    write(path, FileHeader(model="faux/faux-1"), LineCache().lines(messages))
    loaded = read(path)
    assert loaded.header is not None and loaded.header.model == "faux/faux-1"
    assert [m.to_json_dict() for m in loaded.messages] == [m.to_json_dict() for m in messages]


def test_pi_transcripts_without_the_header_load_too(tmp_path: Path) -> None:
    dumped = [m.to_json_dict() for m in _transcript()]
    array = tmp_path / "pi.json"
    array.write_text(json.dumps(dumped), "utf-8")  # JSON.stringify(agent.state.messages)
    lines = tmp_path / "pi.jsonl"
    lines.write_text("\n".join(json.dumps(m) for m in dumped) + "\n", "utf-8")
    for path in (array, lines):
        loaded = read(path)
        assert loaded.header is None
        assert [m.to_json_dict() for m in loaded.messages] == dumped


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "empty file"),
        ('{"format": "pi_notebook.conversation", "version": 1}\n{"role": "us', "line 2 is not"),
        ('{"format": "pi_notebook.conversation", "version": 2}\n', "format version 2"),
        ('{"format": "something-else"}\n', "not a pi_notebook conversation file"),
        ('{"role": "assistant", "content": 5}\n', "line 1 is not a valid assistant message"),
        ("a,b,c\n1,2,3\n", "line 1 is not valid JSON"),
    ],
    ids=["empty", "torn-line", "other-version", "other-format", "bad-message", "csv"],
)
def test_a_bad_file_is_one_line_error(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text, "utf-8")
    with pytest.raises(TranscriptFileError) as caught:
        read(path)
    assert error in str(caught.value) and "\n" not in str(caught.value)


def test_only_our_own_files_may_be_written_over(tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    data.write_text("a,b\n1,2\n", "utf-8")
    with pytest.raises(TranscriptFileError):
        check_writable(data)
    ours = tmp_path / "ours.jsonl"
    write(ours, FileHeader(), [])
    check_writable(ours)
    check_writable(tmp_path / "absent.jsonl")


CRASH = """
import sys
from pathlib import Path
from pi_notebook.notebook.transcript_file import FileHeader, write

class Blocking(list):
    def __iter__(self):
        yield from ['{"role":"user","content":"%s","timestamp":1}' % ('x' * 200)] * 2000
        print("writing", flush=True)
        sys.stdin.read()  # killed here, with 400 kB of the new save written

write(Path(sys.argv[1]), FileHeader(), Blocking())
"""


@pytest.mark.kernel
def test_a_crash_mid_write_leaves_the_earlier_save_whole(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, FileHeader(), LineCache().lines(_transcript()))
    earlier = path.read_bytes()
    child = subprocess.Popen(
        [sys.executable, "-c", CRASH, str(path)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "writing\n"
        partial = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert len(partial) == 1 and partial[0].stat().st_size > 100_000  # really mid-write
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert path.read_bytes() == earlier
    assert len(read(path).messages) == 5


def test_a_message_is_serialised_once_across_saves() -> None:
    messages = _transcript()
    cache = LineCache()
    first = cache.lines(messages)
    messages.append(UserMessage(content="More."))
    second = cache.lines(messages)
    assert all(a is b for a, b in zip(first, second[:5], strict=True))
    assert len(second) == 6
    shorter = cache.lines(messages[:1])
    assert shorter == first[:1]


# -- the repair on load -------------------------------------------------------------------------


def test_a_call_without_a_result_gets_pis_synthetic_error_result() -> None:
    cut: list[AgentMessage] = [
        UserMessage(content="Go."),
        _assistant(
            ToolCall(id="a", name="run_python"),
            ToolCall(id="b", name="set_variable"),
            stop="toolUse",
        ),
        ToolResultMessage(tool_call_id="a", tool_name="run_python"),
    ]
    repaired, count = close_unanswered_calls(cut)
    assert count == 1 and repaired[:3] == cut
    extra = repaired[3]
    assert isinstance(extra, ToolResultMessage)
    assert (extra.tool_call_id, extra.tool_name, extra.is_error) == ("b", "set_variable", True)
    assert extra.content == [TextContent(text=NO_RESULT)]


@pytest.mark.parametrize("stop", ["aborted", "error"])
def test_an_aborted_turn_keeps_its_text_and_loses_the_calls_that_never_ran(stop: str) -> None:
    broken = _assistant(TextContent(text="Let me"), ToolCall(id="x", name="run_python"), stop=stop)
    messages: list[AgentMessage] = [
        UserMessage(content="Go."),
        broken,
        UserMessage(content="Again."),
    ]
    repaired, count = close_unanswered_calls(messages)
    assert count == 1 and len(repaired) == 3
    fixed = repaired[1]
    assert isinstance(fixed, AssistantMessage)
    assert fixed.content == [TextContent(text="Let me")] and fixed.stop_reason == stop
    assert broken.content[1].type == "toolCall"  # the given message is not changed


def test_an_answered_transcript_is_left_as_it_is() -> None:
    messages = _transcript()
    repaired, count = close_unanswered_calls(messages)
    assert count == 0 and all(a is b for a, b in zip(repaired, messages, strict=True))


# -- where files go, and what never goes in them ---------------------------------------------------


def test_the_notebook_path_comes_from_the_front_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(NOTEBOOK_PATH.variable, raising=False)
    assert conv.notebook_path({}) is None
    monkeypatch.setenv(NOTEBOOK_PATH.variable, str(tmp_path / "a.ipynb"))
    assert conv.notebook_path({}) == tmp_path / "a.ipynb"
    monkeypatch.setenv(NOTEBOOK_PATH.variable, "sub/b.ipynb")  # relative: to the working directory
    assert conv.notebook_path({}) == tmp_path / "sub" / "b.ipynb"
    monkeypatch.setenv(NOTEBOOK_PATH.variable, str(tmp_path / "console-1-3f2a"))  # a console
    assert conv.notebook_path({}) is None
    vscode = str(tmp_path / "v.ipynb")
    assert conv.notebook_path({conv.VSCODE_VARIABLE: vscode}) == Path(vscode)
    assert conv.file_for(Path(vscode), "helper") == tmp_path / ".pi_notebook" / "v.helper.jsonl"


async def test_keys_headers_and_secrets_never_reach_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "ghp_" + "S3cr3tT0k3n" * 3 + "xyz"
    key = "sk-" + "k3y" * 12
    monkeypatch.setenv("GITHUB_TOKEN", token)
    faux = register_faux_provider(token_size=(1, 1))
    faux.set_responses([faux_assistant_message(f"Your token is {token}.")])
    model: Model = faux.get_model().model_copy(
        update={"headers": {"Authorization": f"Bearer {key}"}, "base_url": f"https://u:{key}@h"}
    )
    agent = Agent(model=model)
    agent.state.system_prompt = f"Use {token} carefully."
    namespace = {conv.VSCODE_VARIABLE: str(tmp_path / "nb.ipynb")}
    conversations = conv.Conversations()
    notes: list[str] = []
    conversations.track("default", agent, namespace, notes.append)
    await asyncio.wait_for(agent.prompt(f"Here is my key: {key}"), 10)
    path = tmp_path / ".pi_notebook" / "nb.default.jsonl"
    text = path.read_text("utf-8")
    assert token not in text and key not in text and "Authorization" not in text
    assert "[redacted" in text and notes == []
    assert json.loads(text.splitlines()[0])["model"] == f"{model.provider}/{model.id}"
    faux.unregister()
