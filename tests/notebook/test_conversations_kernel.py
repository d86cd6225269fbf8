"""Issue 19, part 2, in real kernels: a conversation survives a kernel restart.

Each test starts its own kernel as Jupyter Server would for ``analysis.ipynb`` (the notebook's
path in ``JPY_SESSION_NAME``, its folder as working directory) and restarts it with
jupyter_client's ``restart_kernel``. What the model receives after ``%agent resume`` is read
from a faux reply factory that records ``context.messages``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import KernelManager

from pi_notebook.ai import parse_transcript
from pi_notebook.ai.transform import is_valid_history

from .conftest import Kernel, kernel_env

pytestmark = pytest.mark.kernel

SETUP = """\
import json
import pi_notebook.notebook as pn
from pi_notebook.ai import faux_assistant_message as reply, faux_tool_call as call
from pi_notebook.ai import register_faux_provider

received = []

def record(text):
    def respond(context, options, state, model):
        received.append([m.to_json_dict() for m in context.messages])
        return reply(text)
    return respond

def calls(*items):
    return reply([call(name, args, id=i) for i, name, args in items], stop_reason='toolUse')

faux = register_faux_provider(token_size=(1, 1))
"""

FIRST_RUNS = """[
    calls(('c1', 'run_python', {'code': 'x = 41'})),
    reply('x is set.'),
    calls(('c2', 'set_variable', {'name': 'y', 'expression': 'x + 1'})),
    reply('y is set.'),
]"""

Start = Callable[..., Kernel]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """Start a kernel for ``tmp_path/analysis.ipynb`` (``notebook=None``: no path given)."""
    kernels: list[Kernel] = []

    def launch(notebook: str | None = "analysis.ipynb", **env: str) -> Kernel:
        environment = kernel_env(tmp_path)
        environment.pop("JPY_SESSION_NAME", None)
        if notebook is not None:
            environment["JPY_SESSION_NAME"] = str(tmp_path / notebook)
        environment.update(env)
        km = KernelManager(kernel_name="python3")
        km.start_kernel(env=environment, cwd=str(tmp_path), extra_arguments=[])
        kernel = Kernel(km)
        kernels.append(kernel)
        return kernel

    yield launch
    for kernel in kernels:
        kernel.shutdown()


def restart(kernel: Kernel) -> None:
    kernel.km.restart_kernel(now=True)
    kernel.kc.wait_for_ready(timeout=60)


def saved(tmp_path: Path, name: str = "analysis.default.jsonl") -> list[dict[str, Any]]:
    lines = (tmp_path / ".pi_notebook" / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _two_cells(kernel: Kernel) -> None:
    kernel.ok("%load_ext pi_notebook")
    kernel.ok(SETUP + f"faux.set_responses({FIRST_RUNS})\npn.use_model(faux)")
    kernel.ok("%%agent --tools notebook\nSet x.")
    kernel.ok("%%agent --tools notebook\nNow y.")


def test_two_cells_a_restart_and_a_resume_give_the_model_the_full_history(
    start: Start, tmp_path: Path
) -> None:
    kernel = start()
    _two_cells(kernel)
    header, *before = saved(tmp_path)
    assert header["format"] == "pi_notebook.conversation" and header["version"] == 1
    assert header["conversation"] == "default" and header["model"] == "faux/faux-1"
    assert header["notebook"] == "analysis.ipynb"
    assert [m["role"] for m in before] == ["user", "assistant", "toolResult", "assistant"] * 2
    assert before[2]["toolCallId"] == "c1" and before[6]["toolCallId"] == "c2"

    restart(kernel)
    loaded = kernel.ok("%load_ext pi_notebook").stdout
    assert loaded.startswith("pi_notebook: a saved conversation for analysis.ipynb: default ")
    assert "(8 messages, saved " in loaded and loaded.endswith("; %agent resume loads it\n")
    assert kernel.ok("print('x' in globals())").stdout == "False\n"  # a fresh process

    kernel.ok(SETUP + "faux.set_responses([record('Third answer.')])")  # no use_model: resumed
    resumed = kernel.ok("%agent resume").stdout
    assert resumed.startswith("resumed default: 8 messages saved ")
    assert (
        ", model faux/faux-1 (tools and approvals are not saved: set them with --tools / --approve)"
    ) in resumed
    kernel.ok("%%agent --tools notebook\nAnd the third?")

    received = json.loads(kernel.ok("print(json.dumps(received))").stdout)
    assert len(received) == 1
    context = received[0]
    assert context[:8] == before  # the whole history, exactly as saved
    assert context[8]["role"] == "user"
    assert context[8]["content"] == [{"type": "text", "text": "And the third?"}]
    assert len(context) == 9
    header, *after = saved(tmp_path)
    assert after[:8] == before and len(after) == 10  # the new run is saved on top


@pytest.mark.parametrize("stop", ["aborted", "error"])
def test_a_resumed_turn_that_ended_aborted_sends_no_orphaned_tool_call(
    start: Start, tmp_path: Path, stop: str
) -> None:
    kernel = start()
    kernel.ok("%load_ext pi_notebook")
    broken = (
        "reply([call('run_python', {'code': 'z = 1'}, id='orphan')], "
        f"stop_reason={stop!r}, error_message='cut off')"
    )
    kernel.ok(
        SETUP + f"faux.set_responses([calls(('c1', 'run_python', {{'code': 'w = 1'}})), "
        f"{broken}])\npn.use_model(faux)"
    )
    kernel.ok("%%agent --tools notebook\nGo.")
    assert saved(tmp_path)[-1]["stopReason"] == stop  # the file ends on the broken turn

    restart(kernel)
    kernel.ok("%load_ext pi_notebook")
    kernel.ok(SETUP + "faux.set_responses([record('Recovered.')])")
    resumed = kernel.ok("%agent resume").stdout
    assert "1 tool call left without a result closed" in resumed
    kernel.ok("%%agent --tools notebook\nTry again.")
    context = json.loads(kernel.ok("print(json.dumps(received))").stdout)[0]
    calls = [
        b["id"]
        for m in context
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "toolCall"
    ]
    assert calls == ["c1"]  # the call that never ran is gone; the one that ran kept its result
    assert context[-2]["stopReason"] == stop and context[-2]["errorMessage"] == "cut off"
    assert is_valid_history(parse_transcript(context))
    assert kernel.ok("print('w' in globals(), 'z' in globals())").stdout == "False False\n"


def test_a_corrupt_file_is_a_one_line_error_and_is_never_written_over(
    start: Start, tmp_path: Path
) -> None:
    folder = tmp_path / ".pi_notebook"
    folder.mkdir()
    corrupt = folder / "analysis.default.jsonl"
    corrupt.write_text(
        '{"format": "pi_notebook.conversation", "version": 1}\n{"role": "user", "cont', "utf-8"
    )
    other = folder / "analysis.helper.jsonl"
    other.write_text('{"format": "pi_notebook.conversation", "version": 99}\n', "utf-8")
    original = corrupt.read_bytes(), other.read_bytes()
    kernel = start()
    loaded = kernel.ok("%load_ext pi_notebook").stdout
    # %load_ext reads headers only (issue 28.9): the corrupt body shows at resume.
    assert loaded == (
        "pi_notebook: saved conversations for analysis.ipynb: default (saved unknown time), "
        "helper (unreadable: %agent resume helper says why); %agent resume [NAME] loads one\n"
    )
    bad = kernel.run("%agent resume")
    assert bad.status == "error" and bad.error is not None
    assert bad.error["ename"] == "UsageError"
    assert "line 2 is not valid JSON" in bad.error["evalue"] and "\n" not in bad.error["evalue"]
    newer = kernel.run("%agent resume helper")
    assert (
        newer.error is not None
        and "another pi_notebook version (format version 99" in (newer.error["evalue"])
    )
    kernel.ok(SETUP + "faux.set_responses([reply('a'), reply('b')])\npn.use_model(faux)")
    first = kernel.ok("%%agent\nHello")
    assert "pi_notebook: " in first.stdout and "not saving this conversation there" in first.stdout
    second = kernel.ok("%%agent\nAgain")
    assert "not saving" not in second.stdout  # said once
    helper = kernel.ok("%%agent --agent helper --model faux\nHi")
    assert "another pi_notebook version" in helper.stdout
    assert (corrupt.read_bytes(), other.read_bytes()) == original
    assert sorted(p.name for p in folder.iterdir()) == sorted([corrupt.name, other.name])


def test_without_a_notebook_path_nothing_is_saved_and_save_load_still_work(
    start: Start, tmp_path: Path
) -> None:
    kernel = start(notebook=None)
    assert kernel.ok("%load_ext pi_notebook").stdout == ""
    kernel.ok(SETUP + f"faux.set_responses({FIRST_RUNS})\npn.use_model(faux)")
    kernel.ok("%%agent --tools notebook\nSet x.")
    assert not (tmp_path / ".pi_notebook").exists()
    missing = kernel.run("%agent resume")
    assert missing.error is not None and "the notebook's path is unknown" in missing.error["evalue"]
    target = tmp_path / "exports" / "chat.jsonl"
    assert kernel.ok(f"%agent save {target}").stdout == f"saved 4 messages to {target}\n"
    lines = target.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["format"] == "pi_notebook.conversation" and len(lines) == 5

    restart(kernel)
    kernel.ok("%load_ext pi_notebook")
    kernel.ok(SETUP + "faux.set_responses([record('ok')])\npn.use_model(faux)")
    loaded = kernel.ok(f"%agent load {target}").stdout
    assert loaded.startswith("loaded chat.jsonl: 4 messages saved ")
    kernel.ok("%%agent\nContinue.")
    context = json.loads(kernel.ok("print(json.dumps(received))").stdout)[0]
    assert context[:4] == [json.loads(line) for line in lines[1:]]


@pytest.mark.parametrize(
    ("env", "code"),
    [({"PI_NOTEBOOK_SESSIONS": "off"}, ""), ({}, "pn.settings.sessions = False")],
    ids=["env", "settings"],
)
def test_saving_turned_off_writes_nothing(
    start: Start, tmp_path: Path, env: dict[str, str], code: str
) -> None:
    kernel = start(**env)
    kernel.ok("%load_ext pi_notebook")
    kernel.ok(SETUP + f"faux.set_responses({FIRST_RUNS})\npn.use_model(faux)\n{code}")
    kernel.ok("%%agent --tools notebook\nSet x.")
    assert not (tmp_path / ".pi_notebook").exists()


def test_a_conversation_not_resumed_is_set_aside_not_overwritten(
    start: Start, tmp_path: Path
) -> None:
    kernel = start()
    _two_cells(kernel)
    before = saved(tmp_path)
    restart(kernel)
    kernel.ok("%load_ext pi_notebook")
    kernel.ok(
        SETUP + "faux.set_responses([reply('A new start.'), record('ok')])\npn.use_model(faux)"
    )
    fresh = kernel.ok("%%agent\nStart over.").stdout
    note = [line for line in fresh.splitlines() if line.startswith("pi_notebook: ")]
    assert len(note) == 1 and "was not resumed, so it is kept as analysis.default." in note[0]
    aside = [p for p in (tmp_path / ".pi_notebook").iterdir() if p.name.count(".") == 3]
    assert len(aside) == 1 and aside[0].name.startswith("analysis.default.")
    assert saved(tmp_path, aside[0].name) == before  # the old conversation, untouched
    assert [m["role"] for m in saved(tmp_path)[1:]] == ["user", "assistant"]
    restored = kernel.ok(f"%agent load {aside[0]}").stdout
    assert restored.startswith(f"loaded {aside[0].name}: 8 messages")
    # Only conversations are listed at %load_ext, not what was set aside.
    restart(kernel)
    assert "default (2 messages" in kernel.ok("%load_ext pi_notebook").stdout


def test_an_agent_conversation_is_saved_and_resumed_by_name(start: Start, tmp_path: Path) -> None:
    kernel = start()
    kernel.ok("%load_ext pi_notebook")
    kernel.ok(SETUP + "faux.set_responses([reply('helping')])")
    kernel.ok("%%agent --agent helper --model faux\nHelp me.")
    assert [m["role"] for m in saved(tmp_path, "analysis.helper.jsonl")[1:]] == [
        "user",
        "assistant",
    ]
    restart(kernel)
    listed = kernel.ok("%load_ext pi_notebook").stdout
    assert listed.startswith("pi_notebook: a saved conversation for analysis.ipynb: helper (2 ")
    assert listed.endswith("; %agent resume helper loads it\n")
    kernel.ok(SETUP + "faux.set_responses([record('still helping')])")
    assert kernel.ok("%agent resume helper").stdout.startswith("resumed helper: 2 messages")
    kernel.ok("%%agent --agent helper\nMore.")
    context = json.loads(kernel.ok("print(json.dumps(received))").stdout)[0]
    assert [m["role"] for m in context] == ["user", "assistant", "user"]


def test_a_replay_is_not_saved_as_the_notebooks_conversation(start: Start, tmp_path: Path) -> None:
    lesson = Path(__file__).resolve().parents[2] / "notebooks" / "02_loop_lifecycle.run.jsonl"
    kernel = start()
    kernel.ok("%load_ext pi_notebook")
    kernel.ok(SETUP + "faux.set_responses([reply('Hello.')])\npn.use_model(faux)")
    kernel.ok("%%agent --plain\nHi.")
    folder = tmp_path / ".pi_notebook"
    before = {path.name: path.read_text(encoding="utf-8") for path in folder.iterdir()}
    assert list(before) == ["analysis.default.jsonl"]
    replayed = kernel.ok(f"%agent replay {lesson} --plain").stdout
    assert "record_answer" in replayed
    after = {path.name: path.read_text(encoding="utf-8") for path in folder.iterdir()}
    assert after == before  # the recording's run is not this notebook's conversation
