"""The agent panel in JupyterLab and Notebook 7, driven through a real Chromium.

Every scenario writes a small notebook: a set-up cell that scripts a faux model at a slow token
rate (so streaming is visible) and a ``%%agent --model faux`` cell, opens it, runs all cells
with the app's ``notebook:run-all-cells`` command and watches the panel through its DOM
contract (``.pi-panel[data-state]``, ``.pi-tool-card[data-status]``, ``.pi-message[data-role]``,
the ``pi-*`` controls; see ``js/view.js``). The kernel runs in rich mode (no ``PI_NOTEBOOK_UI``),
so the cell shows the panel. Nothing sleeps: every step waits on what the page shows.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..panel.corpus import ANSWERS
from .driver import Notebook, import_playwright, install_recorder, recorded, write_notebook
from .server import JupyterServer

if TYPE_CHECKING:
    from playwright.sync_api import Locator

expect = import_playwright().expect

#: Text the faux model streams: long enough to be caught mid-stream at TOKENS_PER_SECOND.
LONG_TEXT = " ".join(f"word{i:03d}" for i in range(120)) + " THE-END"
#: One token is 4 characters and a chunk is one token: 80 characters a second by default,
#: slower where the test must act mid-stream, unpaced where only the end result matters.
TOKENS_PER_SECOND = 20

SETUP = """\
%load_ext pi_notebook
import asyncio
from pi_notebook.agent import AgentTool, AgentToolResult
from pi_notebook.ai import (
    TextContent, faux_assistant_message, faux_text, faux_thinking, faux_tool_call,
    register_faux_provider,
)

faux = register_faux_provider(token_size=(1, 1), tokens_per_second={tps})
"""

PANEL = ".pi-panel"


def _notebook(
    workdir: Path,
    name: str,
    responses: str,
    agent_cell: str,
    extra: str = "",
    tps: float | None = TOKENS_PER_SECOND,
) -> str:
    setup = SETUP.format(tps=tps) + extra + f"faux.set_responses({responses})\n"
    return write_notebook(workdir / name, [setup, agent_cell])


def _panel(nb: Notebook, cell: int = 1) -> Locator:
    return nb.output(cell).locator(PANEL)


def _last_text(panel: Locator) -> Locator:
    return panel.locator(".pi-message[data-role=assistant] .pi-text").last


def _text(value: str | list[str]) -> str:
    """An nbformat multi-line string (a str or a list of lines) as one str."""
    return value if isinstance(value, str) else "".join(value)


def _assert_clean(nb: Notebook) -> None:
    assert nb.errors() == [], nb.errors()
    assert nb.serious_page_errors() == []


@pytest.mark.notebook7
def test_text_streams_into_the_panel(nb: Notebook, workdir: Path) -> None:
    name = _notebook(
        workdir,
        "streaming.ipynb",
        f"[faux_assistant_message({LONG_TEXT[:240]!r})]",
        "%%agent --model faux\nTell me a long story.\nSet it in Lyon.",
    )
    nb.open(name)
    install_recorder(nb.page)
    nb.start_run_all()
    panel = _panel(nb)
    expect(panel).to_have_attribute("data-state", "streaming")
    # Mid-stream: some text is there and the cell is still running.
    expect(_last_text(panel)).to_contain_text("word003")
    assert nb.execution_count(1) is None
    nb.snap("streaming", panel)
    nb.wait_run_done()
    expect(panel).to_have_attribute("data-state", "done")
    expect(_last_text(panel)).to_have_text(LONG_TEXT[:240])
    user = panel.locator(".pi-message[data-role=user]")
    expect(user).to_contain_text("Tell me a long story.")
    # The prompt's line break is kept (issue 27.4), not joined into one line.
    expect(user.locator(".pi-text br")).to_have_count(1)
    assert user.locator(".pi-text").inner_text().splitlines()[:2] == [
        "Tell me a long story.",
        "Set it in Lyon.",
    ]
    expect(panel.locator(".pi-status .pi-model")).to_contain_text("faux")
    nb.snap("done", panel)

    seen = recorded(nb.page)
    lengths = seen["lengths"]
    # The text grew in many steps (it streamed), never shrank, and ended complete.
    assert len(lengths) >= 5, lengths
    assert lengths == sorted(lengths), lengths
    assert lengths[-1] == len(LONG_TEXT[:240])
    assert "streaming" in seen["states"] and seen["states"][-1] == "done", seen["states"]
    _assert_clean(nb)


TOOL_SETUP = """\
async def _slow_add(tool_call_id, params, signal, on_update):
    on_update(AgentToolResult(content=[TextContent(text="adding...")]))
    await asyncio.sleep(1.0)  # the tool's own work; the test waits on the panel, not on time
    return AgentToolResult(content=[TextContent(text=f"sum={params['a'] + params['b']}")])

slow_add = AgentTool(
    name="slow_add",
    description="Add two integers slowly.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
    execute=_slow_add,
)
"""

STATUS_ORDER = ("pending", "prepared", "running", "progress", "done")


def test_tool_cards_move_through_their_states(nb: Notebook, workdir: Path) -> None:
    responses = """[
    faux_assistant_message([
        faux_thinking("Two numbers: use the tool."),
        faux_text("Let me add."),
        faux_tool_call("slow_add", {"a": 2, "b": 40}, id="call_add"),
    ], stop_reason="toolUse"),
    faux_assistant_message("The sum is 42."),
]"""
    name = _notebook(
        workdir,
        "tools.ipynb",
        responses,
        "%%agent --model faux --tools slow_add\nAdd 2 and 40.",
        extra=TOOL_SETUP,
    )
    nb.open(name)
    install_recorder(nb.page)
    nb.start_run_all()
    panel = _panel(nb)
    card = panel.locator('.pi-tool-card[data-tool-call-id="call_add"]')
    expect(card).to_have_attribute("data-status", re.compile("running|progress"))
    expect(panel).to_have_attribute("data-state", "running-tools")
    nb.snap("tool-running", panel)
    nb.wait_run_done()
    expect(card).to_have_attribute("data-status", "done")
    expect(card.locator(".pi-tool-name")).to_have_text("slow_add")
    expect(card.locator(".pi-tool-args")).to_contain_text("40")
    expect(card.locator(".pi-tool-result")).to_contain_text("sum=42")
    expect(card.locator(".pi-tool-duration")).not_to_be_empty()
    expect(_last_text(panel)).to_have_text("The sum is 42.")
    expect(panel).to_have_attribute("data-state", "done")
    thinking = panel.locator("details.pi-thinking")
    expect(thinking).to_have_count(1)
    thinking.locator("summary").click()
    expect(thinking).to_contain_text("Two numbers: use the tool.")
    # The lifecycle tree: one run, two turns (tool call, answer), the tool inside a turn.
    tree = panel.locator(".pi-lifecycle")
    expect(tree.locator(".pi-node[data-kind=run]")).to_have_count(1)
    expect(tree.locator(".pi-node[data-kind=run] .pi-node[data-kind=turn]")).to_have_count(2)
    expect(tree.locator(".pi-node[data-kind=turn] .pi-node[data-kind=tool]")).to_have_count(1)
    nb.snap("tool-done", panel)

    statuses = recorded(nb.page)["tools"]["call_add"]
    assert statuses[-1] == "done", statuses
    assert "running" in statuses or "progress" in statuses, statuses
    # Never backwards: pending -> prepared -> running -> progress -> done.
    ranks = [STATUS_ORDER.index(s) for s in statuses]
    assert ranks == sorted(ranks), statuses
    _assert_clean(nb)


def test_approvals_in_the_panel_approve_and_deny(nb: Notebook, workdir: Path) -> None:
    responses = """[
    faux_assistant_message(
        faux_tool_call("slow_add", {"a": 1, "b": 2}, id="call_yes"), stop_reason="toolUse"
    ),
    faux_assistant_message(
        faux_tool_call("slow_add", {"a": 3, "b": 4}, id="call_no"), stop_reason="toolUse"
    ),
    faux_assistant_message("One approved, one denied."),
]"""
    name = _notebook(
        workdir,
        "approve.ipynb",
        responses,
        "%%agent --model faux --tools slow_add --approve all\nAdd twice.",
        extra=TOOL_SETUP,
    )
    nb.open(name)
    nb.start_run_all()
    panel = _panel(nb)
    ask = panel.locator('.pi-approval[data-tool-call-id="call_yes"]')
    expect(ask).to_contain_text("slow_add")
    nb.snap("approval-asked", panel)
    ask.locator("button.pi-approve").click()
    expect(ask).to_have_count(0)
    approved = panel.locator('.pi-tool-card[data-tool-call-id="call_yes"]')
    expect(approved.locator(".pi-tool-result")).to_contain_text("sum=3")

    ask = panel.locator('.pi-approval[data-tool-call-id="call_no"]')
    ask.locator("button.pi-deny").click()
    denied = panel.locator('.pi-tool-card[data-tool-call-id="call_no"]')
    expect(denied).to_have_attribute("data-status", "error")
    expect(denied.locator(".pi-tool-result")).to_contain_text("denied by user")
    nb.wait_run_done()
    expect(approved).to_have_attribute("data-status", "done")
    expect(_last_text(panel)).to_have_text("One approved, one denied.")
    expect(panel.locator(".pi-approval")).to_have_count(0)
    nb.snap("approval-done", panel)
    _assert_clean(nb)


@pytest.mark.notebook7
@pytest.mark.parametrize("how", ["button", "escape"])
def test_abort_stops_the_stream(nb: Notebook, workdir: Path, how: str) -> None:
    """The Abort button, or Escape while the panel has focus, stops the stream mid-answer."""
    name = _notebook(
        workdir,
        f"abort-{how}.ipynb",
        f"[faux_assistant_message({LONG_TEXT!r})]",
        "%%agent --model faux\nTalk for a long time.",
    )
    nb.open(name)
    nb.start_run_all()
    panel = _panel(nb)
    expect(_last_text(panel)).to_contain_text("word002")
    if how == "button":
        panel.locator("button.pi-abort").click()
    else:
        panel.locator("textarea.pi-input").focus()
        nb.page.keyboard.press("Escape")
    expect(panel).to_have_attribute("data-state", "aborted")
    expect(panel).to_contain_text(re.compile("abort", re.IGNORECASE))
    # The cell finishes (the run-all promise resolves, the kernel is idle) ...
    nb.wait_run_done()
    assert nb.execution_count(1) is not None
    nb.snap(f"aborted-{how}", panel)
    # ... and the stream stopped well before the end of the scripted text.
    text = _last_text(panel).text_content() or ""
    assert "THE-END" not in text
    assert LONG_TEXT.startswith(text.strip())
    expect(panel).to_have_attribute("data-state", "aborted")
    _assert_clean(nb)


ECHO_SETUP = """\
def _echo(context, options, state, model):
    users = [m for m in context.messages if getattr(m, "role", None) == "user"]
    last = users[-1].content
    text = last if isinstance(last, str) else " ".join(b.text for b in last if b.type == "text")
    return faux_assistant_message("heard: " + text)
"""


@pytest.mark.notebook7
def test_steer_from_the_panel_reaches_the_next_turn(nb: Notebook, workdir: Path) -> None:
    name = _notebook(
        workdir,
        "steer.ipynb",
        f"[faux_assistant_message({LONG_TEXT[:200]!r}), _echo]",
        "%%agent --model faux\nStart talking.",
        extra=ECHO_SETUP,
        tps=10,  # ~5 s for the first answer: time to type a steer in the panel
    )
    nb.open(name)
    nb.start_run_all()
    panel = _panel(nb)
    expect(_last_text(panel)).to_contain_text("word001")
    # Typed as a user types, sent with Enter (the front end's shortcut must win over Lab's).
    box = panel.locator("textarea.pi-input")
    box.click()
    box.press_sequentially("please wrap up")
    box.press("Enter")
    expect(box).to_have_value("")
    nb.snap("steer-queued", panel)
    nb.wait_run_done()
    expect(panel).to_have_attribute("data-state", "done")
    messages = panel.locator(".pi-transcript .pi-message")
    roles = [m.get_attribute("data-role") for m in messages.all()]
    assert roles == ["user", "assistant", "user", "assistant"], roles
    expect(messages.nth(2)).to_contain_text("please wrap up")
    # The first answer was not cut: the steer waited for the turn to end.
    expect(messages.nth(1).locator(".pi-text")).to_have_text(LONG_TEXT[:200])
    expect(messages.nth(3).locator(".pi-text")).to_have_text("heard: please wrap up")
    expect(panel.locator(".pi-queue .pi-queue-item")).to_have_count(0)
    nb.snap("steer-done", panel)
    _assert_clean(nb)


def test_queue_steer_followup_and_clear(nb: Notebook, workdir: Path) -> None:
    name = _notebook(
        workdir,
        "queue.ipynb",
        f"[faux_assistant_message({LONG_TEXT[:200]!r}), _echo]",
        "%%agent --model faux\nKeep talking.",
        extra=ECHO_SETUP,
        tps=10,
    )
    nb.open(name)
    nb.start_run_all()
    panel = _panel(nb)
    expect(_last_text(panel)).to_contain_text("word001")
    box = panel.locator("textarea.pi-input")
    items = panel.locator(".pi-queue .pi-queue-item")
    box.fill("dropped steer")
    panel.locator("button.pi-steer").click()
    box.fill("dropped follow-up")
    panel.locator("button.pi-followup").click()
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text("dropped steer")
    expect(items.nth(1)).to_contain_text("dropped follow-up")
    nb.snap("queue-two", panel)
    panel.locator("button.pi-clear-queue").click()
    expect(items).to_have_count(0)
    box.fill("kept follow-up")
    panel.locator("button.pi-followup").click()
    expect(items).to_have_count(1)
    nb.wait_run_done()
    expect(panel).to_have_attribute("data-state", "done")
    messages = panel.locator(".pi-transcript .pi-message")
    roles = [m.get_attribute("data-role") for m in messages.all()]
    assert roles == ["user", "assistant", "user", "assistant"], roles
    expect(messages.nth(2)).to_contain_text("kept follow-up")
    expect(messages.nth(3).locator(".pi-text")).to_have_text("heard: kept follow-up")
    expect(panel.locator(".pi-transcript")).not_to_contain_text("dropped")
    expect(items).to_have_count(0)
    _assert_clean(nb)


STEP_TEXT = "one two three four five six"
#: The first events of a run, in Pi's order; ``--step all`` holds each one (and the model
#: request) until "next".
FIRST_EVENTS = [
    "agent_start",
    "turn_start",
    "message_start",  # the prompt
    "message_end",
    "model_request",
    "message_start",  # the answer
    "message_update",
]


def test_step_mode_advances_one_event_per_click(nb: Notebook, workdir: Path) -> None:
    name = _notebook(
        workdir,
        "step.ipynb",
        f"[faux_assistant_message({STEP_TEXT!r})]",
        "%%agent --model faux --step all\nCount.",
        tps=None,
    )
    nb.open(name)
    nb.start_run_all()
    panel = _panel(nb)
    step_event = panel.locator(".pi-step-event")
    next_button = panel.locator("button.pi-next")
    expect(next_button).to_be_visible()
    expect(panel.locator("button.pi-run-to-end")).to_be_visible()
    expect(step_event).to_have_text(FIRST_EVENTS[0])
    nb.snap("step-first", panel)
    # Each click releases the held event and the loop stops at the very next one.
    for expected in FIRST_EVENTS[1:]:
        next_button.click()
        expect(step_event).to_have_text(expected)
    # Now each click releases one text delta: the answer grows by exactly one chunk (a token,
    # 4 characters), never two.
    text = _last_text(panel)
    shown = (text.text_content() or "").strip() if text.count() else ""
    chunk = next(k for k in range(3) if STEP_TEXT[: 4 * k].strip() == shown)
    for k in range(chunk + 1, chunk + 4):
        next_button.click()
        expect(text).to_have_text(STEP_TEXT[: 4 * k].strip())
        expect(step_event).to_have_text("message_update")
    expect(step_event).to_have_text("message_update")
    nb.snap("step-held", panel)
    assert nb.execution_count(1) is None  # still paused: the cell is running
    panel.locator("button.pi-run-to-end").click()
    nb.wait_run_done()
    expect(panel).to_have_attribute("data-state", "done")
    expect(text).to_have_text(STEP_TEXT)
    expect(next_button).to_be_hidden()
    _assert_clean(nb)


def test_a_finished_run_becomes_the_static_transcript_and_survives_reload(
    nb: Notebook, workdir: Path
) -> None:
    final = "Reloading keeps me here."
    name = _notebook(
        workdir,
        "reload.ipynb",
        f"[faux_assistant_message({final!r})]",
        "%%agent --model faux\nWill you survive a reload?",
        tps=None,
    )
    nb.open(name)
    nb.run_all()
    panel = _panel(nb)
    expect(panel).to_have_attribute("data-state", "done")
    expect(_last_text(panel)).to_have_text(final)
    # The run ended: the output is the static transcript, no widget view (no controls).
    expect(nb.output(1).locator(".pi-panel.pi-static")).to_have_count(1)
    expect(nb.output(1).locator("button, textarea")).to_have_count(0)

    saved = nb.save()
    outputs = saved["cells"][1]["outputs"]
    assert [sorted(out.get("data", {})) for out in outputs] == [["text/html", "text/plain"]]
    static = [_text(out["data"][mime]) for out in outputs for mime in ("text/plain", "text/html")]
    assert all(final in text for text in static), outputs
    assert all("Will you survive a reload?" in text for text in static), outputs

    nb.reload()
    panel = _panel(nb)
    expect(panel).to_have_attribute("data-state", "done")
    expect(nb.output(1).locator(".pi-static")).to_have_count(1)
    expect(_last_text(panel)).to_have_text(final)
    expect(panel.locator(".pi-message[data-role=user]")).to_contain_text(
        "Will you survive a reload?"
    )
    nb.snap("after-reload", panel)
    _assert_clean(nb)


WIDGETS_PLUGIN = "@jupyter-widgets/jupyterlab-manager:plugin"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _run_and_save(nb: Notebook, workdir: Path, name: str) -> dict[str, Any]:
    name = _notebook(
        workdir,
        name,
        "[faux_assistant_message('Saved for **later**.')]",
        "%%agent --model faux\nRemember this run.",
        tps=None,
    )
    nb.open(name)
    nb.run_all()
    expect(_panel(nb)).to_have_attribute("data-state", "done")
    return nb.save()


@pytest.mark.notebook7
@pytest.mark.parametrize("widget_state", ["saved", "not-saved"])
def test_a_reopened_notebook_shows_the_transcript_without_a_widget_error(
    nb: Notebook, workdir: Path, server: JupyterServer, widget_state: str
) -> None:
    """Tomorrow: the kernel is gone and the notebook is opened again, with Jupyter's "save
    widget state" setting on or (the default) off; either way the transcript is there."""
    if widget_state == "saved":
        server.user_settings(WIDGETS_PLUGIN, {"saveState": True})
    try:
        saved = _run_and_save(nb, workdir, f"reopen-{widget_state}.ipynb")
        nb.reopen(between=server.shutdown_kernels)
    finally:
        server.user_settings(WIDGETS_PLUGIN, None)
    outputs = saved["cells"][1]["outputs"]
    assert all(WIDGET_MIME not in out.get("data", {}) for out in outputs)
    output = nb.output(1)
    # The outputs are rendered when the notebook opens; no need for the long default wait.
    expect(output).to_contain_text("Remember this run.", timeout=3_000)
    expect(output.locator(".pi-message[data-role=assistant] strong")).to_have_text("later")
    expect(output.locator(".pi-panel")).to_have_attribute("data-state", "done")
    expect(output).not_to_contain_text("model not found")
    expect(output).not_to_contain_text("Error displaying widget")
    nb.snap(f"reopened-{widget_state}", output)
    _assert_clean(nb)


def test_exported_notebook_shows_the_static_transcript(
    nb: Notebook, workdir: Path, server: JupyterServer
) -> None:
    """What GitHub, nbviewer and an HTML export show: the static transcript in the file."""
    saved = _run_and_save(nb, workdir, "export.ipynb")
    outputs = saved["cells"][1]["outputs"]
    html = [
        _text(out["data"]["text/html"]) for out in outputs if "text/html" in out.get("data", {})
    ]
    assert html and "pi-static" in html[-1]
    command = [sys.executable, "-m", "nbconvert", "--to", "html", "--stdout"]
    exported = subprocess.run(
        [*command, str(workdir / "export.ipynb")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    page = nb.page.context.new_page()
    page.set_content(exported, wait_until="domcontentloaded")
    transcript = page.locator(".pi-static")
    expect(transcript).to_have_count(1)
    expect(transcript.locator(".pi-message[data-role=user]")).to_contain_text("Remember this run.")
    expect(transcript.locator(".pi-message[data-role=assistant] strong")).to_have_text("later")
    expect(page.locator("body")).not_to_contain_text("model not found")
    page.close()


XSS = (
    "Payload: <img src=x onerror=\"window.__piXss='img'\"> "
    "<script>window.__piXss='script'</script> "
    "<svg onload=\"window.__piXss='svg'\"></svg> "
    "[click](javascript:window.__piXss='link') "
    "<a href=\"javascript:window.__piXss='a'\">a</a> "
    "<iframe src=\"javascript:window.__piXss='iframe'\"></iframe> "
    "**bold** done."
)


def test_xss_in_model_output_is_not_executed(nb: Notebook, workdir: Path) -> None:
    responses = f"""[
    faux_assistant_message([
        faux_text({XSS!r}),
        faux_tool_call("<img src=x onerror=\\"window.__piXss='tool'\\">", {{"q": {XSS!r}}},
                       id="call_xss"),
    ], stop_reason="toolUse"),
    faux_assistant_message({XSS!r}),
]"""
    name = _notebook(
        workdir, "xss.ipynb", responses, "%%agent --model faux\nShow me HTML.", tps=None
    )
    nb.open(name)
    nb.run_all()
    panel = _panel(nb)
    expect(panel).to_have_attribute("data-state", "done")
    text = _last_text(panel)
    expect(text).to_contain_text("Payload:")
    expect(text).to_contain_text("done.")
    expect(text.locator("strong")).to_have_text("bold")  # Markdown still renders
    card = panel.locator('.pi-tool-card[data-tool-call-id="call_xss"]')
    expect(card).to_have_attribute("data-status", "rejected")  # no tool has that name
    expect(card.locator(".pi-tool-name")).to_contain_text("<img")  # shown as text
    nb.snap("xss", panel)
    dangerous = nb.page.evaluate(
        """() => {
            const root = document.querySelector('.pi-panel');
            return {
                xss: window.__piXss === undefined ? null : String(window.__piXss),
                scripts: root.querySelectorAll('script, iframe, object, embed').length,
                handlers: Array.from(root.querySelectorAll('*')).filter(
                    el => Array.from(el.attributes).some(a => a.name.startsWith('on'))).length,
                js_links: Array.from(root.querySelectorAll('[href], [src]')).filter(
                    el => /^\\s*javascript:/i.test(el.getAttribute('href') ||
                                                   el.getAttribute('src') || '')).length,
            };
        }"""
    )
    assert dangerous == {"xss": None, "scripts": 0, "handlers": 0, "js_links": 0}
    _assert_clean(nb)


ENV_CELL = """\
import os, pi_notebook
print("file:", pi_notebook.__file__)
print("ui:", os.environ.get("PI_NOTEBOOK_UI"))
print("keys:", sorted(k for k in os.environ if k.endswith("_API_KEY") or k == "PI_NOTEBOOK_MODEL"))
"""


def test_plain_mode_prints_the_transcript(nb: Notebook, workdir: Path) -> None:
    setup = (
        SETUP.format(tps=TOKENS_PER_SECOND)
        + 'faux.set_responses([faux_assistant_message("Plain text only.")])\n'
    )
    name = write_notebook(
        workdir / "plain.ipynb",
        [setup, "%%agent --model faux --plain\nSay it plainly.", ENV_CELL],
    )
    nb.open(name)
    nb.run_all()
    expect(nb.output(1)).to_contain_text("user: Say it plainly.")
    expect(nb.output(1)).to_contain_text("assistant: Plain text only.")
    expect(nb.output(1).locator(PANEL)).to_have_count(0)
    # The kernel runs the repository's pi_notebook, in rich mode, without any key.
    env = "".join(o.get("text", "") for o in nb.cell_outputs(2))
    assert f"file: {Path(__file__).resolve().parents[2] / 'pi_notebook'}" in env, env
    assert "ui: None" in env and "keys: []" in env, env
    _assert_clean(nb)


#: A realistic answer (tables, lists, code, math, links, a remote image), then a tool call the
#: run waits on (``--approve all``), so the live panel can be checked with the whole answer.
CORPUS_ANSWER = "\n\n".join((ANSWERS["summary"], ANSWERS["math"], ANSWERS["links"]))


def _check_answer_structure(root: Locator) -> None:
    """What a reader of the corpus answer must see, live, static or reopened."""
    text = root.locator(".pi-message[data-role=assistant] .pi-text").first
    table = text.locator("table").first
    expect(table.locator("thead th")).to_have_count(4)
    expect(table.locator("tbody tr")).to_have_count(4)
    expect(table.locator("tbody td").first).to_have_text("North")
    steps = text.locator("ol[start='3']")
    expect(steps.locator(":scope > li")).to_have_count(3)
    expect(steps.locator(":scope > li ul > li")).to_have_count(2)
    expect(steps.locator(":scope > li ul ol > li")).to_have_count(2)
    expect(text.locator("pre.pi-code[data-lang=python] span.k").first).to_have_text("import ")
    expect(text.locator("pre.pi-code[data-lang=sql] span.k").first).to_have_text("SELECT ")
    expect(text.locator(".pi-math > .pi-mathml > math")).to_have_count(4)
    expect(text.locator(".pi-math-source")).to_have_count(1)
    for alt in text.locator(".pi-math-alt").all():  # each formula's source: for hosts without
        expect(alt).to_be_hidden()  # the stylesheet (an untrusted notebook), hidden here
    expect(text.locator("s")).to_have_text("three")
    expect(text).to_contain_text("A ticket costs $5 and a bundle $10, so three tickets cost $15.")
    expect(text.locator("a.pi-remote-image")).to_have_text("[image: Revenue by region]")
    expect(text.locator("img")).to_have_count(0)
    link = text.locator("a", has_text="Wikipedia")
    expect(link).to_have_attribute("href", "https://en.wikipedia.org/wiki/Variance_(statistics)")
    expect(link).to_have_attribute("target", "_blank")
    rendered = text.evaluate(
        """(el) => {
            const copy = el.cloneNode(true);
            copy.querySelectorAll('.pi-math-source, .pi-math-alt, pre').forEach((n) => n.remove());
            const maths = [...el.querySelectorAll('.pi-math > .pi-mathml > math')];
            return {
                raw_latex: copy.textContent.includes(String.fromCharCode(92)),
                math_display: maths.map((m) => getComputedStyle(m).display),
                math_height: Math.min(...maths.map((m) => m.getBoundingClientRect().height)),
                mathjax: el.querySelectorAll('mjx-container, .MathJax').length,
            };
        }"""
    )
    assert rendered["raw_latex"] is False, "no LaTeX left raw outside the one broken formula"
    assert set(rendered["math_display"]) <= {"math", "inline math", "block math"}, rendered
    assert rendered["math_height"] > 5, "Chromium lays the MathML out"
    assert rendered["mathjax"] == 0, "a dollar amount is never typeset by MathJax"


def test_a_streamed_answer_renders_like_a_markdown_cell_live_static_and_reopened(
    nb: Notebook, workdir: Path, server: JupyterServer
) -> None:
    responses = f"""[
    faux_assistant_message([
        faux_text({CORPUS_ANSWER!r}),
        faux_tool_call("slow_add", {{"a": 1, "b": 2}}, id="call_gate"),
    ], stop_reason="toolUse"),
    faux_assistant_message("Checked."),
]"""
    name = _notebook(
        workdir,
        "corpus.ipynb",
        responses,
        "%%agent --model faux --tools slow_add --approve all\nSummarise sales.csv.",
        extra=TOOL_SETUP,
        tps=400,
    )
    nb.open(name)
    install_recorder(nb.page)
    nb.start_run_all()
    live = nb.output(1).locator(".pi-panel:not(.pi-static)")
    expect(live).to_have_attribute("data-state", "streaming")
    ask = live.locator('.pi-approval[data-tool-call-id="call_gate"]')
    expect(ask).to_be_visible()
    # The whole answer is in the live widget (the run waits for the approval).
    _check_answer_structure(live)
    expect(live.locator("button.pi-abort")).to_be_enabled()
    nb.snap("corpus-live", live)
    ask.locator("button.pi-approve").click()
    nb.wait_run_done()
    static = nb.output(1).locator(".pi-panel.pi-static")
    expect(static).to_have_attribute("data-state", "done")
    expect(nb.output(1).locator(".pi-panel:not(.pi-static)")).to_have_count(0)
    _check_answer_structure(static)
    card = static.locator('.pi-tool-card[data-tool-call-id="call_gate"]')
    expect(card).to_have_attribute("data-status", "done")
    expect(card.locator(".pi-tool-result")).to_contain_text("sum=3")
    nb.snap("corpus-static", static)
    lengths = recorded(nb.page)["lengths"]
    assert len(lengths) >= 5, "the answer streamed"
    nb.save()
    _assert_clean(nb)
    # Reopened without the kernel and without saved widget state (Jupyter's default).
    nb.reopen(between=server.shutdown_kernels)
    output = nb.output(1)
    expect(output).not_to_contain_text("model not found", timeout=3_000)
    _check_answer_structure(output.locator(".pi-panel.pi-static"))
    nb.snap("corpus-reopened", output)
    _assert_clean(nb)
    # The notebook as a colleague gets it: saved elsewhere (its signature no longer matches),
    # so it opens untrusted and Jupyter's sanitizer drops the <style> and the MathML tags.
    shared = json.loads((workdir / name).read_text())
    shared["metadata"]["shared_by"] = "a colleague"
    (workdir / "corpus-shared.ipynb").write_text(json.dumps(shared))
    nb.open("corpus-shared.ipynb")
    sanitized = nb.output(1).locator(".pi-panel.pi-static")  # (data-* attributes are dropped)
    expect(sanitized.locator("table tbody tr")).to_have_count(4)
    expect(sanitized.locator("math")).to_have_count(0)  # untrusted: MathML was sanitized away
    expect(sanitized.locator(".pi-status")).to_contain_text("faux/faux-1 done turn 2 ")
    shown = sanitized.evaluate(
        "(el) => [...el.querySelectorAll('.pi-math')].map((m) => m.innerText.trim())"
    )
    assert len(shown) == 5, shown  # four formulas and the broken one
    assert shown[1] == "\\(\\sigma / \\sqrt{n}\\)", "a formula reads as its source, not glyphs"
    assert all(text[0] in "$\\" for text in shown), shown
    nb.snap("corpus-untrusted", nb.output(1))


THEMES_PLUGIN = "@jupyterlab/apputils-extension:themes"

CONTRAST = """(el) => {
    const parse = (value) => {  // "rgb(r, g, b)", "rgba(r, g, b, a)", "color(srgb r g b / a)"
        const n = (value.match(/[\\d.]+(e-?\\d+)?/g) || []).map(Number);
        const scale = value.startsWith("color(srgb") ? 1 : 255;
        if (n.length < 3) throw new Error("cannot read the colour " + value);
        return [n[0] / scale, n[1] / scale, n[2] / scale, n.length > 3 ? n[3] : 1];
    };
    const over = (top, below) =>
        top.slice(0, 3).map((c, i) => c * top[3] + below[i] * (1 - top[3]));
    // The background under el: its own and its ancestors' colours, composited on white.
    const layers = [];
    for (let node = el; node; node = node.parentElement) {
        const colour = parse(getComputedStyle(node).backgroundColor);
        if (colour[3] > 0) layers.push(colour);
        if (colour[3] >= 1) break;
    }
    let background = [1, 1, 1];
    for (const layer of layers.reverse()) background = over(layer, background);
    const text = over(parse(getComputedStyle(el).color), background);
    const luminance = (rgb) => {
        const [r, g, b] = rgb.map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const [light, dark] = [luminance(text), luminance(background)].sort((a, b) => b - a);
    return { ratio: (light + 0.05) / (dark + 0.05), text, background };
}"""


#: A short answer with the parts whose colours come from the theme: code, a table, a link.
THEME_TEXT = (
    "Done: see [the docs](https://example.org), `df` and $\\sigma^2$.\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "```python\nimport pandas as pd  # load\nprint(pd.__version__, 42)\n```\n"
)


def check_the_step_bar_and_status_line_are_readable_in_light_and_dark(
    nb: Notebook, workdir: Path, server: JupyterServer, theme: str
) -> None:
    server.user_settings(THEMES_PLUGIN, {"theme": theme})
    try:
        name = _notebook(
            workdir,
            f"theme-{theme.split()[-1].lower()}.ipynb",
            f"[faux_assistant_message({THEME_TEXT!r})]",
            "%%agent --model faux --step\nCount.",
            tps=None,
        )
        nb.open(name)
        light = nb.page.evaluate("() => document.body.dataset.jpThemeLight")
        assert light == ("true" if theme.endswith("Light") else "false"), light
        nb.start_run_all()
        panel = _panel(nb)
        step = panel.locator(".pi-step")
        expect(step).to_be_visible()
        expect(panel.locator(".pi-step-event")).to_have_text("agent_start")
        nb.snap(f"step-{theme.split()[-1].lower()}", panel)
        for part in (step, panel.locator(".pi-step-event"), panel.locator(".pi-status .pi-model"),
                     panel.locator(".pi-status .pi-tokens")):  # fmt: skip
            seen = part.evaluate(CONTRAST)
            assert seen["ratio"] >= 4.5, (theme, seen)
        panel.locator("button.pi-run-to-end").click()
        nb.wait_run_done()
        static = nb.output(1).locator(".pi-panel.pi-static")
        answer = static.locator(".pi-message[data-role=assistant] .pi-text")
        for part in (
            static.locator(".pi-status .pi-model"),
            answer.locator("p").first,
            answer.locator("a"),
            answer.locator("td").first,
            answer.locator("pre.pi-code > code"),
            answer.locator("pre.pi-code span.k").first,
        ):
            seen = part.evaluate(CONTRAST)
            assert seen["ratio"] >= 4.5, (theme, seen)
        # Numbers take JupyterLab's own editor colour (#080 on #f5f5f5 in light: 4.3:1, as in
        # its code cells), so only the large-text level is asked of them.
        number = answer.locator("pre.pi-code span.m").first.evaluate(CONTRAST)
        assert number["ratio"] >= 3, (theme, number)
        nb.snap(f"static-{theme.split()[-1].lower()}", static)
        _assert_clean(nb)
    finally:
        server.user_settings(THEMES_PLUGIN, None)
