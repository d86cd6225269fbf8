"""Step mode tells the truth at every hold, and the run's timeline (issue 29), in the browser.

The lesson's recorded run (three parallel ``read_station`` calls, a steer, ``record_answer``)
replays under ``--step`` and the test clicks *Next* at every hold, checking at each: the
status line says "held (step mode)", never the state before; its clock never goes back; held
before a tool runs, no card reads running. After the run: the three same-named calls carry
distinct labels, the delivered steer is marked, and the static transcript shows the timeline
(an SVG image that survives Jupyter's sanitizer: the notebook is then reopened untrusted).
Nothing sleeps: each step waits on the step bar's ``data-count``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .driver import Notebook, write_notebook
from .server import JupyterServer
from .test_panel import CONTRAST, THEMES_PLUGIN, _assert_clean, _panel, expect

LESSON = Path(__file__).resolve().parents[2] / "notebooks" / "02_loop_lifecycle.run.jsonl"
STATIONS = ("north", "south", "east")


def _seconds(text: str) -> float:
    """The panel's clock (format.js's formatElapsed: ``12.3s`` or ``1m4s``) in seconds."""
    minutes = re.fullmatch(r"(\d+)m(\d+)s", text)
    if minutes:
        return int(minutes.group(1)) * 60 + int(minutes.group(2))
    return float(text.rstrip("s"))


@pytest.mark.notebook7
def test_every_hold_tells_the_truth_and_the_timeline_shows_the_run(
    nb: Notebook, workdir: Path
) -> None:
    (workdir / LESSON.name).write_text(LESSON.read_text(encoding="utf-8"), encoding="utf-8")
    name = write_notebook(
        workdir / "truth.ipynb",
        ["%load_ext pi_notebook", f"%agent replay {LESSON.name} --step"],
    )
    nb.open(name)
    nb.start_run_all()
    panel = _panel(nb)
    bar = panel.locator(".pi-step")
    label = panel.locator(".pi-status .pi-state-label")
    clock: list[float] = []
    held: list[str] = []
    while not held or held[-1] != "agent_end":
        expect(bar).to_have_attribute("data-count", str(len(held) + 1))
        event = bar.locator(".pi-step-event").inner_text()
        held.append(event)
        expect(label).to_contain_text("held (step mode)")
        shown = label.inner_text()
        assert not re.search(r"waiting for the model|streaming|running tools", shown), shown
        clock.append(_seconds(panel.locator(".pi-status .pi-elapsed").inner_text()))
        if event == "tool_execution_start":
            expect(panel.locator(".pi-tool-card[data-status=running]")).to_have_count(0)
            expect(panel.locator(".pi-tool-card[data-status=prepared]").first).to_contain_text(
                "prepared, waiting to run"
            )
            if held.count("tool_execution_start") == 2:
                expect(bar.locator(".pi-step-next")).to_contain_text(
                    "the batch runs when all 3 are prepared"
                )
                expect(panel.locator(".pi-timeline-cursor")).to_have_count(1)
                nb.snap("held-second-call", panel)
        bar.locator("button.pi-next").click()
    nb.wait_run_done()
    assert clock == sorted(clock), f"the clock ran backwards: {clock}"
    assert held.count("tool_execution_start") == 4
    static = nb.output(1).locator(".pi-panel.pi-static")
    names = static.locator(".pi-tool-card .pi-tool-name")
    expect(names).to_have_count(4)
    assert names.all_inner_texts() == [f"read_station ({s})" for s in STATIONS] + ["record_answer"]
    steer = static.locator(".pi-message[data-role=user]").nth(1)
    expect(steer.locator(".pi-role")).to_have_text(
        re.compile(r"^user \(steer, after turn \d+('s tools)?\)$")
    )
    expect(steer).to_contain_text("Give the temperatures in Fahrenheit too.")
    image = static.locator("img.pi-timeline")
    expect(image).to_be_visible()
    assert image.evaluate("(img) => img.complete && img.naturalWidth") > 0, "the SVG loads"
    nb.snap("timeline-static", image)
    _assert_clean(nb)
    # Opened untrusted (saved elsewhere): the sanitizer keeps the picture and its rows.
    nb.save()
    shared = json.loads((workdir / name).read_text())
    shared["metadata"]["shared_by"] = "a colleague"
    (workdir / "truth-shared.ipynb").write_text(json.dumps(shared))
    nb.open("truth-shared.ipynb")
    untrusted = nb.output(1).locator(".pi-panel.pi-static")
    image = untrusted.locator("img.pi-timeline")
    expect(image).to_be_visible()
    assert image.evaluate("(img) => img.complete && img.naturalWidth") > 0
    expect(untrusted.locator(".pi-timeline-text pre")).to_contain_text("read_station (south)")
    nb.snap("timeline-untrusted", untrusted.locator(".pi-timeline-box"))


#: CONTRAST (test_panel) for an SVG text: its fill against the background under it.
FILL_CONTRAST = CONTRAST.replace("getComputedStyle(el).color", "getComputedStyle(el).fill")


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_the_live_timeline_reads_in_light_and_dark_with_a_cursor_at_the_hold(
    nb: Notebook, workdir: Path, server: JupyterServer, theme: str
) -> None:
    shade = theme.split()[-1].lower()
    (workdir / LESSON.name).write_text(LESSON.read_text(encoding="utf-8"), encoding="utf-8")
    name = write_notebook(
        workdir / f"timeline-{shade}.ipynb",
        ["%load_ext pi_notebook", f"%agent replay {LESSON.name} --step tools"],
    )
    server.user_settings(THEMES_PLUGIN, {"theme": theme})
    try:
        nb.open(name)
        nb.start_run_all()
        panel = _panel(nb)
        bar = panel.locator(".pi-step")
        expect(bar).to_have_attribute("data-count", "1")  # before the first request
        bar.locator("button.pi-next").click()
        expect(bar).to_have_attribute("data-count", "2")  # north is announced
        bar.locator("button.pi-next").click()
        expect(bar).to_have_attribute("data-count", "3")  # south is announced
        timeline = panel.locator(".pi-timeline-box")
        expect(timeline).to_have_attribute("open", "")
        svg = timeline.locator("svg.pi-timeline")
        expect(svg.locator(".pi-timeline-cursor")).to_have_count(1)
        expect(svg.locator(".pi-timeline-span[data-kind=running]")).to_have_count(0)
        expect(svg.locator(".pi-timeline-span[data-kind=prepared]")).to_have_count(2)
        lane = svg.locator(".pi-timeline-lane text").first
        seen = lane.evaluate(FILL_CONTRAST)
        assert seen["ratio"] >= 4.5, (theme, seen)
        nb.snap(f"timeline-live-{shade}", timeline)
        bar.locator("button.pi-run-to-end").click()
        nb.wait_run_done()
        image = nb.output(1).locator(".pi-panel.pi-static img.pi-timeline")
        expect(image).to_be_visible()
        nb.snap(f"timeline-static-{shade}", image)
        _assert_clean(nb)
    finally:
        server.user_settings(THEMES_PLUGIN, None)


#: Every drawn label of an <svg> as laid out: its own text (not its <title>) and its box.
LABEL_BOXES = """(svg) => {
  const view = svg.viewBox.baseVal;
  const boxes = [...svg.querySelectorAll("text")].map((t) => {
    const box = t.getBBox();
    const text = [...t.childNodes].filter((c) => c.nodeType === 3).map((c) => c.textContent);
    return { text: text.join(""), x: box.x, y: box.y, w: box.width, h: box.height };
  });
  return { width: view.width, height: view.height, boxes };
}"""

#: The static transcript's timeline image, its SVG put in the page to be measured (then gone).
STATIC_LABEL_BOXES = """(img) => {
  const bytes = Uint8Array.from(atob(img.src.split(",")[1]), (c) => c.charCodeAt(0));
  const holder = document.createElement("div");
  holder.innerHTML = new TextDecoder().decode(bytes);
  document.body.append(holder);
  try { return (MEASURE)(holder.querySelector("svg")); } finally { holder.remove(); }
}""".replace("MEASURE", LABEL_BOXES)


def _check_labels(seen: dict[str, object], where: str) -> list[str]:
    """No label drawn twice, none over another, none outside the picture (1 px of slack)."""
    boxes = seen["boxes"]
    assert isinstance(boxes, list)
    texts = [b["text"] for b in boxes]
    assert len(texts) == len(set(texts)), (where, texts)
    for b in boxes:
        assert b["x"] >= -1 and b["x"] + b["w"] <= float(seen["width"]) + 1, (where, b)  # type: ignore[arg-type]
    for n, a in enumerate(boxes):
        for b in boxes[n + 1 :]:
            apart = (
                a["x"] + a["w"] <= b["x"] + 1
                or b["x"] + b["w"] <= a["x"] + 1
                or a["y"] + a["h"] <= b["y"] + 1
                or b["y"] + b["h"] <= a["y"] + 1
            )
            assert apart, (where, a, b)
    return texts


@pytest.mark.parametrize(
    "theme",
    ["JupyterLab Light", pytest.param("JupyterLab Dark", marks=pytest.mark.notebook7)],
)
def test_the_lessons_replayed_timeline_labels_neither_overlap_nor_clip(
    nb: Notebook, workdir: Path, server: JupyterServer, theme: str
) -> None:
    """The lesson's replay, as JupyterLab lays it out: every label of the live and the static
    timeline measured (getBBox), in light and dark."""
    shade = theme.split()[-1].lower()
    (workdir / LESSON.name).write_text(LESSON.read_text(encoding="utf-8"), encoding="utf-8")
    name = write_notebook(
        workdir / f"labels-{shade}.ipynb",
        ["%load_ext pi_notebook", f"%agent replay {LESSON.name} --step"],
    )
    server.user_settings(THEMES_PLUGIN, {"theme": theme})
    try:
        nb.open(name)
        nb.start_run_all()
        panel = _panel(nb)
        bar = panel.locator(".pi-step")
        count = 1  # --step holds at every lifecycle event, the last one agent_end
        expect(bar).to_have_attribute("data-count", "1")
        while bar.locator(".pi-step-event").inner_text() != "agent_end":
            bar.locator("button.pi-next").click()
            count += 1
            expect(bar).to_have_attribute("data-count", str(count))
        svg = panel.locator(".pi-timeline-box svg.pi-timeline")
        live = _check_labels(svg.evaluate(LABEL_BOXES), "live")
        assert "request 1 (turn 1)" in live and "turn 2" in live, live
        nb.snap(f"timeline-labels-live-{shade}", panel.locator(".pi-timeline-box"))
        # The context view: what changed since turn 1's request first, the rest collapsed.
        context = panel.locator("details.pi-context")
        context.locator(":scope > summary").click()
        changes = context.locator(".pi-context-changes")
        expect(changes.locator(".pi-context-changes-head")).to_have_text(
            re.compile(r"^What changed since turn 1's request \(≈ \+\d+ tokens\)$")
        )
        assert changes.locator(".pi-context-why").all_inner_texts() == [
            "the model's reply to turn 1's request",
            *["a tool result"] * 3,
            "steer, entered after turn 1's tools",
        ]
        expect(changes.locator(".pi-context-unchanged")).to_have_text("unchanged: 1 message")
        expect(context.locator("details.pi-context-all")).not_to_have_attribute("open", "")
        seen = changes.locator(".pi-context-why").first.evaluate(CONTRAST)
        assert seen["ratio"] >= 4.5, (theme, seen)
        nb.snap(f"context-changes-{shade}", changes)
        bar.locator("button.pi-run-to-end").click()
        nb.wait_run_done()
        image = nb.output(1).locator(".pi-panel.pi-static img.pi-timeline")
        expect(image).to_be_visible()
        drawn = _check_labels(image.evaluate(STATIC_LABEL_BOXES), "static")
        assert "request 2 (turn 2)" in drawn and "read_station (east)" in drawn, drawn
        nb.snap(f"timeline-labels-static-{shade}", image)
        _assert_clean(nb)
    finally:
        server.user_settings(THEMES_PLUGIN, None)
