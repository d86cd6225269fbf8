"""Step mode, the context view and the lifecycle tree in JupyterLab and Notebook 7.

A full walk at the default granularity clicks *Next* at every hold of a two-turn run with a
tool call, to the end: one hold per lifecycle event, none for a streamed chunk, a visible
*Next* at each, also at ``agent_end`` where the run's state is already final (issue 16.1).
``--step tools`` holds before each model request and shows what the model is sent. The tree's
leaves link to their message and tool card, live and in the static transcript. Nothing sleeps:
each step waits on the step bar's ``data-count``.
"""

from __future__ import annotations

import re
from pathlib import Path

from .driver import Notebook, write_notebook
from .server import JupyterServer
from .test_panel import CONTRAST, THEMES_PLUGIN, _assert_clean, _notebook, _panel, expect

ADD_TOOL = """
async def _add(tool_call_id, params, signal, on_update):
    on_update(AgentToolResult(content=[TextContent(text="adding...")]))
    return AgentToolResult(content=[TextContent(text=str(params["a"] + params["b"]))])

ADD = AgentTool(
    name="add", description="Add two numbers.", execute=_add,
    parameters={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
)
"""
#: A long answer, so the transcript is taller than the page and the tree's links must scroll.
ANSWER = "2 + 3 = 5.\n\n" + "\n\n".join(f"Line {i} of the explanation." for i in range(60))
RESPONSES = (
    '[faux_assistant_message([faux_tool_call("add", {"a": 2, "b": 3}, id="t1")],'
    f' stop_reason="toolUse"), faux_assistant_message({ANSWER!r})]'
)
#: The eight lifecycle events of that run, in order: 16 holds.
WALK = [
    "agent_start",
    "turn_start",
    "message_start",
    "message_end",
    "message_start",
    "message_end",
    "tool_execution_start",
    "tool_execution_end",
    "message_start",
    "message_end",
    "turn_end",
    "turn_start",
    "message_start",
    "message_end",
    "turn_end",
    "agent_end",
]


#: The issue's run (21): the same, answered "2 + 3 = 5". One token per chunk: the tool call's
#: arguments stream in 4 deltas (+ start + end), the answer in 3 (+ start + end), the tool
#: reports once: 12 streamed events on top of the 16 lifecycle events, 28 events in all.
SHORT = RESPONSES.replace(repr(ANSWER), repr("2 + 3 = 5"))


def _step_notebook(workdir: Path, name: str, step: str, responses: str = RESPONSES) -> str:
    cell = f"%%agent --model faux --tools ADD --step{step}\nWhat is 2 + 3?"
    return _notebook(workdir, name, responses, cell, extra=ADD_TOOL, tps=None)


def _click_through(nb: Notebook) -> list[str]:
    """Click Next at every hold up to the last one, agent_end; the held points, in order."""
    bar = _panel(nb).locator(".pi-step")
    seen: list[str] = []
    while not seen or seen[-1] != "agent_end":
        expect(bar).to_have_attribute("data-count", str(len(seen) + 1))
        expect(bar.locator("button.pi-next")).to_be_visible()
        seen.append(bar.locator(".pi-step-event").inner_text())
        bar.locator("button.pi-next").click()
    nb.wait_run_done()
    return seen


def test_the_issues_run_holds_16_times_by_default_and_28_plus_2_with_all(
    nb: Notebook, workdir: Path
) -> None:
    nb.open(_step_notebook(workdir, "sixteen.ipynb", "", SHORT))
    nb.start_run_all()
    assert _click_through(nb) == WALK
    times = nb.output(1).locator(".pi-static .pi-lifecycle .pi-node-times").all_text_contents()
    streamed = sum(int(n) for text in times for n in re.findall(r"· (\d+) updates?$", text))
    assert streamed == 12
    nb.open(_step_notebook(workdir, "twenty-eight.ipynb", " all", SHORT))
    nb.start_run_all()
    every = _click_through(nb)
    assert len(every) == 16 + 12 + 2, every  # every event, and the two model requests
    assert [e for e in every if e in set(WALK)] == WALK
    assert every.count("model_request") == 2
    print(f"\nheld: {len(WALK)} at --step, {len(every)} at --step all "
          f"({len(every) - 2} events, the 28 of the issue, + 2 model requests)")  # fmt: skip
    _assert_clean(nb)


def test_a_full_walk_holds_once_per_lifecycle_event_with_a_visible_next(
    nb: Notebook, workdir: Path
) -> None:
    nb.open(_step_notebook(workdir, "walk.ipynb", ""))
    nb.start_run_all()
    panel = _panel(nb)
    bar = panel.locator(".pi-step")
    next_button = bar.locator("button.pi-next")
    held: list[tuple[str, str]] = []
    for count, event in enumerate(WALK, 1):
        expect(bar).to_have_attribute("data-count", str(count))
        expect(bar).to_be_visible()
        expect(next_button).to_be_visible()
        expect(next_button).to_be_enabled()
        expect(bar.locator(".pi-step-event")).to_have_text(event)
        held.append((event, bar.locator(".pi-step-text").inner_text()))
        if event == "tool_execution_end":
            nb.snap("walk-held-after-tool", bar)
        if count == len(WALK):  # agent_end: the state is final, the loop still held
            expect(panel).to_have_attribute("data-state", "done")
            expect(panel.locator("button.pi-abort")).to_be_enabled()
            assert nb.execution_count(1) is None  # the cell still runs: it waits on this Next
            _check_live_tree(nb, panel)
        next_button.click()
    nb.wait_run_done()
    assert dict(held)["tool_execution_end"] == (
        "held after tool add finished — next: the tool results enter the conversation"
    )
    assert held[-1][1] == "held at the end of the run — next: the run is over and the cell finishes"
    static = nb.output(1).locator(".pi-panel.pi-static")
    expect(static).to_have_attribute("data-state", "done")
    # What step mode held and what it let stream: the updates are in the tree, one line each.
    updates = sum(
        int(m.group(1))
        for m in re.finditer(
            r"· (\d+) updates?\b", static.locator(".pi-lifecycle").text_content() or ""
        )
    )
    assert updates > len(held), "the long answer streams in many chunks, none held"
    _check_static_tree(nb, static)
    _assert_clean(nb)


def _check_live_tree(nb: Notebook, panel: object) -> None:
    box = panel.locator(".pi-lifecycle-box")  # type: ignore[attr-defined]
    box.locator(":scope > summary").click()
    tree = box.locator(".pi-lifecycle")
    leaves = tree.locator(".pi-node.pi-leaf")
    expect(leaves).to_have_count(5)  # 3 + 1 messages and the tool
    expect(tree.locator(".pi-leaf summary")).to_have_count(0)  # no empty disclosure
    expect(tree.locator("details.pi-node")).to_have_count(3)  # the run and its two turns
    run_line = tree.locator("details[data-kind=run] > summary").inner_text()
    assert re.search(r"Agent Run · \d+\.\d{3}s · held \d+\.\ds", run_line), run_line
    card = panel.locator('.pi-tool-card[data-tool-call-id="t1"]')  # type: ignore[attr-defined]
    tool = tree.locator(".pi-leaf[data-kind=tool] .pi-node-link")
    tool.scroll_into_view_if_needed()
    expect(card).not_to_be_in_viewport()  # the long answer lies between them
    nb.snap("walk-tree-live", box)
    tool.click()
    expect(card).to_be_in_viewport()
    expect(card).to_have_class(re.compile("pi-flash"))


def _check_static_tree(nb: Notebook, static: object) -> None:
    box = static.locator(".pi-lifecycle-box")  # type: ignore[attr-defined]
    box.locator(":scope > summary").click()
    tree = box.locator(".pi-lifecycle")
    expect(tree.locator(".pi-leaf summary")).to_have_count(0)
    link = tree.locator(".pi-leaf[data-kind=tool] a.pi-node-link")
    card = static.locator('.pi-tool-card[data-tool-call-id="t1"]')  # type: ignore[attr-defined]
    link.scroll_into_view_if_needed()
    expect(card).not_to_be_in_viewport()
    nb.snap("walk-tree-static", box)
    link.click()
    expect(card).to_be_in_viewport()


def check_step_tools_holds_before_each_request_and_shows_what_the_model_is_sent(
    nb: Notebook, workdir: Path, server: JupyterServer, theme: str
) -> None:
    shade = theme.split()[-1].lower()
    server.user_settings(THEMES_PLUGIN, {"theme": theme})
    try:
        nb.open(_step_notebook(workdir, f"context-{shade}.ipynb", " tools"))
        nb.start_run_all()
        panel = _panel(nb)
        bar = panel.locator(".pi-step")
        context = panel.locator("details.pi-context")
        expect(bar).to_have_attribute("data-count", "1")
        expect(bar.locator(".pi-step-event")).to_have_text("model_request")
        expect(bar.locator(".pi-step-what")).to_have_text("held before the model request of turn 1")
        expect(context).to_have_attribute("data-held", "true")
        expect(context).not_to_have_attribute("open", "")  # collapsed by default
        bar.locator("button.pi-next").click()
        expect(bar).to_have_attribute("data-count", "2")
        expect(bar.locator(".pi-step-what")).to_have_text(
            "held before tool add runs (prepared, not running yet)"
        )
        bar.locator("button.pi-next").click()
        expect(bar).to_have_attribute("data-count", "3")
        expect(bar.locator(".pi-step-what")).to_have_text("held before the model request of turn 2")
        summary = context.locator(":scope > summary")
        expect(summary).to_have_text(
            re.compile(r"^What the model will be sent — turn 2: 3 messages, 1 tool, ≈ \d+ tokens$")
        )
        summary.click()
        # What changed since turn 1 comes first; the whole request is collapsed under it.
        changes = context.locator(".pi-context-changes")
        expect(changes.locator(".pi-context-why")).to_have_text(
            ["the model's reply to turn 1's request", "a tool result"]
        )
        whole = context.locator("details.pi-context-all")
        expect(whole).not_to_have_attribute("open", "")
        whole.locator(":scope > summary").click()
        items = whole.locator(".pi-context-item")
        expect(items).to_have_count(4)
        roles = [items.nth(i).locator(".pi-context-role").inner_text() for i in range(4)]
        assert roles == ["system prompt", "1. user", "2. assistant", "3. toolResult add"]
        expect(items.nth(3).locator(".pi-context-text")).to_have_text("5")
        raw = context.locator("details.pi-context-json")
        raw.locator(":scope > summary").click()
        expect(raw.locator("pre")).to_contain_text('"toolCallId": "t1"')
        nb.snap(f"context-held-{shade}", context)
        for part in (bar, bar.locator(".pi-step-what"), summary, items.nth(1)):
            seen = part.evaluate(CONTRAST)
            assert seen["ratio"] >= 4.5, (theme, seen)
        raw.locator(":scope > summary").click()  # close the raw JSON again
        bar.locator("button.pi-run-to-end").click()
        nb.wait_run_done()
        static = nb.output(1).locator(".pi-panel.pi-static")
        box = static.locator("details.pi-context")
        expect(box.locator(":scope > summary")).to_have_text(
            re.compile(r"^What the model was sent — turn 2: 3 messages")
        )
        box.locator(":scope > summary").click()
        static.locator(".pi-lifecycle-box > summary").click()
        nb.snap(f"context-static-{shade}", box)
        _assert_clean(nb)
    finally:
        server.user_settings(THEMES_PLUGIN, None)


def test_a_recorded_run_replays_step_by_step_with_no_model(nb: Notebook, workdir: Path) -> None:
    lesson = Path(__file__).resolve().parents[2] / "notebooks" / "02_loop_lifecycle.run.jsonl"
    (workdir / lesson.name).write_text(lesson.read_text(encoding="utf-8"), encoding="utf-8")
    name = write_notebook(
        workdir / "replay.ipynb",
        ["%load_ext pi_notebook", f"%agent replay {lesson.name} --step"],
    )
    nb.open(name)
    nb.start_run_all()
    held = _click_through(nb)
    assert len(held) == 30 and held[0] == "agent_start" and held[-1] == "agent_end"
    assert held.count("tool_execution_end") == 4 and "message_update" not in held
    static = nb.output(1).locator(".pi-panel.pi-static")
    expect(static).to_have_attribute("data-state", "done")
    expect(static.locator(".pi-message[data-role=user]").nth(1)).to_contain_text(
        "Give the temperatures in Fahrenheit too."
    )
    expect(static.locator(".pi-tool-card[data-status=done]")).to_have_count(4)
    _assert_clean(nb)
