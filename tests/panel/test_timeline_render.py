"""The timeline picture's labels (issue 29.2): none drawn twice, none over another, none past
the right edge (cut with an ellipsis and a <title> instead), on the timeline of an instant
replay, where every request and turn falls at nearly the same moment or at the very end."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from pi_notebook.notebook.panel.contract import Timeline
from pi_notebook.notebook.panel.timeline_render import (
    EM_PER_CHAR,
    WIDTH,
    place_labels,
    timeline_svg,
)

NS = "{http://www.w3.org/2000/svg}"


def span(lane: str, kind: str, label: str, start: float, end: float | None) -> dict[str, Any]:
    return {"lane": lane, "kind": kind, "label": label, "start": start, "end": end, "outcome": ""}


def replayed() -> Timeline:
    """The lesson's replay as the panel keeps it: a long first hold, then everything at once."""
    lanes = [
        {"id": "model", "kind": "model", "label": "model requests"},
        {"id": "tool:n", "kind": "tool", "label": "read_station (north)"},
        {"id": "tool:s", "kind": "tool", "label": "read_station (south)"},
        {"id": "steer", "kind": "steer", "label": "steering queue"},
        {"id": "tool:r", "kind": "tool", "label": "record_answer " + "with a long label " * 3},
    ]
    spans = [
        span("model", "waiting", "request 1 (turn 1)", 0.5, 1),
        span("model", "streaming", "request 1", 1, 2),  # one request, named once
        span("model", "waiting", "request 2 (turn 2)", 2.2, 2.3),
        span("model", "streaming", "request 2 (turn 2)", 2.3, 2.4),
        span("tool:n", "running", "read_station (north)", 2, 2.1),
        span("tool:s", "running", "read_station (south)", 2, 2.1),
        span("steer", "queued", "Give the temperatures in Fahrenheit too.", 2.1, 2.2),
        span("model", "waiting", "request 3 (turn 3)", 2690, 2695),
        span("model", "streaming", "request 3 (turn 3)", 2695, 2700),
        span("tool:r", "running", "record_answer", 2700, 2700.5),
    ]
    return {"lanes": lanes, "spans": spans, "turns": [0, 2.2, 2689]}  # type: ignore[typeddict-item]


def texts(svg: str) -> list[dict[str, Any]]:
    """Every drawn <text> (its own text, not its <title>) with its estimated box."""
    root = ET.fromstring(svg)
    found = []
    for node in root.iter(f"{NS}text"):
        text = (node.text or "") + "".join(child.tail or "" for child in node)
        size = float(node.get("font-size", root.get("font-size", "11")))
        x, y = float(node.get("x", "0")), float(node.get("y", "0"))
        width = len(text) * size * EM_PER_CHAR
        anchor = node.get("text-anchor", "start")
        left = x - width if anchor == "end" else x - width / 2 if anchor == "middle" else x
        title = node.find(f"{NS}title")
        found.append(
            {
                "text": text,
                "title": title.text if title is not None else None,
                "box": (left, left + width, y - 0.8 * size, y + 0.2 * size),
            }
        )
    return found


def test_no_label_is_drawn_twice() -> None:
    drawn = [t["text"] for t in texts(timeline_svg(replayed()))]
    assert drawn.count("request 1 (turn 1)") == 1, "a request is named once, not per span"
    assert len(drawn) == len(set(drawn)), drawn


def test_no_two_labels_overlap_and_none_passes_the_right_edge() -> None:
    found = texts(timeline_svg(replayed()))
    for t in found:
        left, right, _, _ = t["box"]
        assert left >= 0 and right <= WIDTH, (t["text"], t["box"])
    for n, a in enumerate(found):
        for b in found[n + 1 :]:
            (al, ar, at, ab), (bl, br, bt, bb) = a["box"], b["box"]
            overlap = al < br and bl < ar and at < bb and bt < ab
            assert not overlap, f"{a['text']!r} over {b['text']!r}"
    drawn = [t["text"] for t in found]
    assert "turn 3" in drawn and "request 3 (turn 3)" in drawn, "the last ones are kept, moved in"


def test_a_cut_label_ends_with_an_ellipsis_and_has_its_full_text_as_title() -> None:
    found = texts(timeline_svg(replayed()))
    cut = [t for t in found if t["text"].endswith("…")]
    assert cut, "the long lane label is cut"
    for t in cut:
        assert t["title"] is not None and t["title"].startswith(t["text"][:-1])
    assert all(t["title"] is None for t in found if not t["text"].endswith("…"))


def test_an_instant_run_s_ticks_read_in_milliseconds_not_all_0_00s() -> None:
    quick = replayed()
    quick["turns"], quick["spans"] = [0], [span("model", "streaming", "request 1", 0, 60)]
    drawn = [t["text"] for t in texts(timeline_svg(quick))]
    assert drawn[:6] == ["0ms", "12ms", "24ms", "36ms", "48ms", "60ms"]
    quick["spans"] = [span("model", "streaming", "request 1", 0, 3)]
    drawn = [t["text"] for t in texts(timeline_svg(quick))]
    assert drawn[:6] == ["0.0ms", "0.6ms", "1.2ms", "1.8ms", "2.4ms", "3.0ms"]
    assert "0.00s" in [t["text"] for t in texts(timeline_svg(replayed()))]


def test_placing_labels_on_one_line() -> None:
    size, char = 10, 10 * EM_PER_CHAR
    placed = place_labels([(0, "aaaa"), (5, "bbbb"), (100, "cccccccccc")], size, 0, 110)
    assert [(p.x, p.text) for p in placed] == [(0, "aaaa"), (30.0, "bbbb"), (60.0, "ccccccc…")]
    assert placed[2].cut and placed[2].full == "cccccccccc"
    assert placed[1].x >= placed[0].x + 4 * char  # after the one before, not over it
    # Moved left to end at the edge when there is room; left out when almost nothing fits.
    assert [(p.x, p.text) for p in place_labels([(100, "dd")], size, 0, 110)] == [(98.0, "dd")]
    assert place_labels([(0, "aaaaaaaaaaaaaaaaa"), (1, "bbbbbb")], size, 0, 110)[1:] == []


def test_the_legend_names_each_look_as_it_is_drawn() -> None:
    """Held spans are dotted (1 2), prepared ones dashed (3 2): the legend said both were
    dashed (seen in a screenshot)."""
    drawn = [t["text"] for t in texts(timeline_svg(replayed()))]
    assert drawn[-1] == "prepared: dashed · running: solid · held: dotted"
