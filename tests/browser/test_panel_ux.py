"""The panel in real use (issue 16), in JupyterLab and Notebook 7 through a real Chromium: a
draft outlives the run, the approval policy stays with the conversation, Interrupt & send,
the controls stay in view while a long answer streams, and what the status line and the cards
say (waiting, estimates, awaiting approval, a malformed call, a reply cut by the limit) read in
the light and dark themes.

As in ``test_panel.py``, each scenario writes a small notebook with a faux model and waits on
what the page shows; nothing sleeps to synchronise (a faux reply may take its time, as a model
does, but the test waits on the page, not on the clock).
"""

from __future__ import annotations

import re
from pathlib import Path

from .driver import Notebook, import_playwright, write_notebook
from .server import JupyterServer
from .test_panel import (
    CONTRAST,
    ECHO_SETUP,
    LONG_TEXT,
    SETUP,
    THEMES_PLUGIN,
    TOOL_SETUP,
    _assert_clean,
    _last_text,
    _panel,
)

expect = import_playwright().expect

SLOW = 20  # tokens a second: a long answer takes several seconds, time to act mid-stream


def _cells(workdir: Path, name: str, responses: str, cells: list[str], extra: str = "",
           tps: float | None = SLOW) -> str:  # fmt: skip
    setup = SETUP.format(tps=tps) + extra + f"faux.set_responses({responses})\n"
    return write_notebook(workdir / name, [setup, *cells])


def test_a_draft_typed_until_the_run_ends_becomes_the_next_cells_follow_up(
    nb: Notebook, workdir: Path
) -> None:
    """Typing goes on right up to the end of the run: every accepted keystroke arrives."""
    name = _cells(
        workdir,
        "draft.ipynb",
        f"[faux_assistant_message({LONG_TEXT[:400]!r}), faux_assistant_message('second'), _echo]",
        ["%%agent --model faux\nTalk a little.", "%agent status",
         "%%agent --model faux\nNext question."],
        extra=ECHO_SETUP,
    )  # fmt: skip
    nb.open(name)
    nb.start_run_all()
    panel = _panel(nb)
    box = panel.locator("textarea.pi-input")
    expect(_last_text(panel)).to_contain_text("word001")
    box.click()
    # Record what the box accepted (it stops accepting when the run ends).
    nb.page.evaluate(
        """(box) => { window.__piDraft = ''; box.addEventListener('input',
            () => { window.__piDraft = box.value; }); }""",
        box.element_handle(),
    )
    typed = 0
    words = "what about the outliers in the last column and the ones before it " * 20
    while panel.get_attribute("data-state") not in ("done", "aborted", "error", None):
        nb.page.keyboard.type(words[typed % len(words)])
        typed += 1
        if nb.output(1).locator(".pi-panel.pi-static").count():
            break
    nb.wait_run_done()
    draft = nb.page.evaluate("() => window.__piDraft").strip()
    assert len(draft) > 10, draft
    static = nb.output(1).locator(".pi-panel.pi-static")
    expect(static.locator(".pi-queue-item")).to_have_text(
        "follow-up (after the next %%agent cell's answer): " + draft
    )
    expect(static.locator(".pi-status .pi-note")).to_contain_text("queued as a follow-up")
    expect(nb.output(2)).to_contain_text(f"follow-up: {draft[:60]}")
    nb.snap("draft-kept", static)
    # The next cell answered its own prompt, then the draft, word for word.
    answer = nb.output(3).locator(".pi-message[data-role=assistant] .pi-text").last
    expect(answer).to_have_text(f"heard: {draft}")
    _assert_clean(nb)


def test_an_approval_policy_persists_to_the_next_cell(nb: Notebook, workdir: Path) -> None:
    responses = """[
    faux_assistant_message(
        faux_tool_call("slow_add", {"a": 1, "b": 2}, id="first"), stop_reason="toolUse"),
    faux_assistant_message("Denied, as you wished."),
    faux_assistant_message(
        faux_tool_call("slow_add", {"a": 3, "b": 4}, id="second"), stop_reason="toolUse"),
    faux_assistant_message("Added."),
]"""
    name = _cells(
        workdir,
        "policy.ipynb",
        responses,
        ["%%agent --model faux --tools slow_add --approve all\nAdd.",
         "%%agent --model faux\nAdd again, no flags this time.",
         "%agent status"],
        extra=TOOL_SETUP,
        tps=None,
    )  # fmt: skip
    nb.open(name)
    nb.start_run_all()
    first = _panel(nb, 1)
    ask = first.locator('.pi-approval[data-tool-call-id="first"]')
    expect(ask).to_be_visible()
    expect(first.locator('.pi-tool-card[data-tool-call-id="first"] .pi-tool-status')).to_have_text(
        "awaiting approval"
    )
    expect(first.locator(".pi-status .pi-state-label")).to_have_text("awaiting approval")
    nb.snap("approval-first-cell", first)
    ask.locator("button.pi-deny").click()
    # The second cell has no --approve: the conversation's policy still asks.
    second = _panel(nb, 2)
    ask = second.locator('.pi-approval[data-tool-call-id="second"]')
    expect(ask).to_be_visible()
    nb.snap("approval-second-cell", second)
    ask.locator("button.pi-approve").click()
    nb.wait_run_done()
    card = nb.output(2).locator('.pi-tool-card[data-tool-call-id="second"]')
    expect(card).to_have_attribute("data-status", "done")
    expect(card.locator(".pi-tool-result")).to_contain_text("sum=7")
    expect(nb.output(3)).to_contain_text("approvals: all (asks before every tool call)")
    expect(nb.output(3)).to_contain_text("tools: slow_add")
    _assert_clean(nb)


def test_interrupt_and_send_stops_the_answer_and_sends_at_once(
    nb: Notebook, workdir: Path
) -> None:
    name = _cells(
        workdir,
        "interrupt.ipynb",
        f"[faux_assistant_message({LONG_TEXT!r}), _echo]",
        ["%%agent --model faux\nTalk for a long time."],
        extra=ECHO_SETUP,
    )
    nb.open(name)
    nb.start_run_all()
    panel = _panel(nb)
    expect(_last_text(panel)).to_contain_text("word002")
    box = panel.locator("textarea.pi-input")
    expect(box).to_have_attribute("placeholder", re.compile(r"lands after this answer"))
    box.fill("Stop: say hello instead")
    panel.locator("button.pi-interrupt").click()
    nb.wait_run_done()
    static = nb.output(1).locator(".pi-panel.pi-static")
    expect(static).to_have_attribute("data-state", "done")
    messages = static.locator(".pi-transcript > .pi-message")
    roles = [m.get_attribute("data-role") for m in messages.all()]
    assert roles == ["user", "assistant", "user", "assistant"], roles
    expect(messages.nth(1).locator(".pi-message-error")).to_contain_text("[aborted]")
    assert "THE-END" not in (messages.nth(1).text_content() or "")
    expect(messages.nth(2)).to_contain_text("Stop: say hello instead")
    expect(messages.nth(3).locator(".pi-text")).to_have_text("heard: Stop: say hello instead")
    expect(static.locator(".pi-lifecycle .pi-node[data-kind=run]")).to_have_count(2)
    nb.snap("interrupt-and-send", static)
    _assert_clean(nb)


#: A long answer: many paragraphs, streamed quickly, so the transcript outgrows the window.
TALL_TEXT = "\n\n".join(f"Paragraph {i}: " + "lorem ipsum " * 12 for i in range(150))


def test_the_status_line_and_controls_stay_in_view_while_a_long_answer_streams(
    nb: Notebook, workdir: Path
) -> None:
    name = _cells(
        workdir,
        "tall.ipynb",
        f"[faux_assistant_message({TALL_TEXT!r})]",
        ["%%agent --model faux\nWrite a lot."],
        tps=400,
    )
    nb.open(name)
    nb.start_run_all()
    panel = _panel(nb)
    text = _last_text(panel)
    expect(text).to_contain_text("Paragraph 30:")  # the box is full by now
    panel.evaluate("(el) => el.scrollIntoView({block: 'start'})")  # as a reader would
    viewport = nb.page.viewport_size
    assert viewport is not None
    measure = """(root) => {
        const t = root.querySelector('.pi-transcript');
        const box = (el) => el.getBoundingClientRect().toJSON();
        const texts = root.querySelectorAll('.pi-message[data-role=assistant] .pi-text');
        return {scrolls: t.scrollHeight > t.clientHeight + 100, panel: box(root),
                abort: box(root.querySelector('.pi-abort')),
                status: box(root.querySelector('.pi-status')), box: box(t),
                tail: box(texts[texts.length - 1].querySelector('.pi-tail')),
                state: root.getAttribute('data-state')};
    }"""
    expect(text).to_contain_text("Paragraph 40:")
    early = panel.evaluate(measure)
    expect(text).to_contain_text("Paragraph 80:")
    late = panel.evaluate(measure)
    assert late["state"] == "streaming", late
    assert late["scrolls"], "the live transcript scrolls inside the panel"
    # The panel fits the window and does not grow with the answer: Abort stays where it was.
    assert late["panel"]["height"] <= viewport["height"], late
    assert late["abort"] == early["abort"] and late["status"] == early["status"], (early, late)
    assert late["status"]["top"] >= 0 and late["abort"]["bottom"] <= viewport["height"], late
    # It follows the end of the answer: the text streaming now is in the box.
    assert late["box"]["top"] <= late["tail"]["top"] <= late["box"]["bottom"], late
    nb.snap("tall-streaming", panel)
    panel.locator("button.pi-abort").click()
    nb.wait_run_done()
    static = nb.output(1).locator(".pi-panel.pi-static")
    hidden = static.locator(".pi-transcript").evaluate("(t) => t.scrollHeight - t.clientHeight")
    assert hidden <= 1, "the finished transcript is shown whole, not in a scroll box"
    _assert_clean(nb)


WAITING_SETUP = """\
async def _slow_first_token(context, options, state, model):
    # A model busy with a long prompt: the first token comes after a while (or an abort).
    await options.signal.sleep(4)
    return faux_assistant_message(
        [faux_text("Now calling the tools."),
         faux_tool_call("slow_add", {"b": 2, "a": 1}, id="asked"),
         faux_tool_call("no_such_tool", {"x": 1}, id="bad")],
        stop_reason="toolUse")
"""


def check_what_the_panel_says_reads_in_light_and_dark(
    nb: Notebook, workdir: Path, server: JupyterServer, theme: str
) -> None:
    """Waiting for the model, token estimates, awaiting approval, a malformed call and a reply
    cut by the output limit: shown, worded as the issue asks, readable in both themes."""
    server.user_settings(THEMES_PLUGIN, {"theme": theme})
    short = theme.split()[-1].lower()
    responses = """[
    _slow_first_token,
    faux_assistant_message([faux_text("This reply runs into the lim")], stop_reason="length"),
]"""
    try:
        name = _cells(
            workdir,
            f"says-{short}.ipynb",
            responses,
            ["%%agent --model faux --tools slow_add --approve all --max-tokens 64\nAdd 1 and 2."],
            extra=TOOL_SETUP + WAITING_SETUP,
        )
        nb.open(name)
        nb.start_run_all()
        panel = _panel(nb)
        label = panel.locator(".pi-status .pi-state-label")
        expect(label).to_have_text(re.compile(r"waiting for the model \([1-9]\d*s\)"))
        nb.snap(f"waiting-{short}", panel)
        ask = panel.locator('.pi-approval[data-tool-call-id="asked"]')
        expect(ask).to_be_visible()
        expect(label).to_have_text("awaiting approval")
        card = panel.locator('.pi-tool-card[data-tool-call-id="asked"]')
        expect(card.locator(".pi-tool-status")).to_have_text("awaiting approval")
        args = card.locator(".pi-tool-args").text_content() or ""
        assert args.index('"b"') < args.index('"a"'), "the model's key order"
        nb.snap(f"awaiting-approval-{short}", panel)
        tokens = panel.locator(".pi-status .pi-tokens")
        for part in (label, tokens, card.locator(".pi-tool-status")):
            seen = part.evaluate(CONTRAST)
            assert seen["ratio"] >= 4.5, (theme, seen)
        ask.locator("button.pi-approve").click()
        nb.wait_run_done()
        static = nb.output(1).locator(".pi-panel.pi-static")
        bad = static.locator('.pi-tool-card[data-tool-call-id="bad"]')
        expect(bad).to_have_attribute("data-status", "rejected")
        expect(bad.locator(".pi-tool-status")).to_have_text("malformed call: not run")
        expect(bad.locator(".pi-tool-not-run")).to_have_text(
            "The model's call was malformed (no tool of that name): the tool did not run."
        )
        note = static.locator(".pi-message-note")
        expect(note).to_have_text(
            "[length] cut off: the reply reached the output limit (64 tokens); "
            "raise it with %%agent --max-tokens N"
        )
        expect(static.locator(".pi-tool-card[data-tool-call-id=asked]")).to_have_attribute(
            "data-status", "done"
        )
        expect(static).not_to_contain_text("shown in the card")
        for part in (note, bad.locator(".pi-tool-not-run"), static.locator(".pi-tokens")):
            seen = part.evaluate(CONTRAST)
            assert seen["ratio"] >= 4.5, (theme, seen)
        nb.snap(f"static-{short}", static)
        _assert_clean(nb)
    finally:
        server.user_settings(THEMES_PLUGIN, None)
