"""The timeline drawn: an SVG picture for the static transcript, and rows of text.

The picture must read where the panel's stylesheet does not reach, untrusted too. Jupyter's
HTML sanitizer drops inline ``<svg>`` elements (JupyterLab's allowed tags hold no SVG), keeping
their text as a jumble, but it keeps an ``<img>`` whose ``src`` is a data URL; and an SVG shown
as an image runs nothing (no script, no links, no external loads). So the static transcript
shows the SVG as ``<img src="data:image/svg+xml;base64,...">`` with an ``alt`` text, and the
same timeline as text rows beside it (:func:`timeline_rows`, also ``%agent timeline``).

The SVG carries its own background and colours, light or dark by the reader's colour scheme
(a ``prefers-color-scheme`` rule inside it), so it reads on either theme; kinds of span differ
by opacity and dash pattern too, not by colour alone. It is built only of ``svg``, ``style``,
``g``, ``rect``, ``line``, ``text`` and ``title``, every text escaped. Each tool call's lane is
named by its call's label and each model request by its number, once, on a line under the
model lane's bars; each bar's ``<title>`` says what it was and when. Labels are placed
(:func:`place_labels`) so that none covers another and none passes the right edge: a label
near the edge moves in, one with no room left is cut with an ellipsis and carries its full
text as its ``<title>`` (an instant replay puts every request at nearly one moment). Pure.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass

from .contract import Timeline, TimelineSpan
from .markdown import escape_html
from .timeline import MODEL_LANE as MODEL

WIDTH = 760
LABEL_WIDTH = 190
ROW = 22
BAR = 12
TOP = 30
#: The model lane is taller: its requests are named under their bars, on a line of their own
#: (above the bar they met the turn labels).
NAMES_ROW = 11
#: A label's width is estimated at this many ems a character (a sans-serif's average is about
#: 0.55): labels are placed so that no two on one line overlap and none passes the right edge.
EM_PER_CHAR = 0.6
#: The least room between two labels on one line, and the margin kept at the right edge.
GAP = 6
MARGIN = 4
#: A label cut to fewer characters than this is left out (its bar's <title> still names it).
FEWEST_CHARS = 4
#: How each kind of span is drawn: (fill opacity, dash pattern of its outline or "").
LOOK = {
    "waiting": (0.15, "3 2"),
    "streaming": (0.65, ""),
    "prepared": (0.12, "3 2"),
    "running": (0.65, ""),
    "held": (0.35, "1 2"),
    "queued": (0.25, "4 2"),
}
#: How the legend names an outline's dash pattern (any other is "dashed").
OUTLINE_WORDS = {"": "solid", "1 2": "dotted"}
WORDS = {
    "waiting": "waiting for the first token",
    "streaming": "streaming",
    "prepared": "prepared, not running",
    "running": "running",
    "held": "held (step mode)",
    "queued": "queued",
}


#: The colour of each kind of span (by class), and of text, rules and the background.
SPAN_CLASS = {
    "waiting": "model",
    "streaming": "model",
    "prepared": "tool",
    "running": "tool",
    "held": "held",
    "queued": "queue",
}
COLOURS = (
    ".bg{fill:#ffffff}.fg{fill:#1f2328}.rule{stroke:#59636e}.cursor{stroke:#cf222e}"
    ".model{fill:#8250df;stroke:#8250df}.tool{fill:#0969da;stroke:#0969da}"
    ".held{fill:#bc4c00;stroke:#bc4c00}.queue{fill:#1a7f37;stroke:#1a7f37}"
    "@media (prefers-color-scheme: dark){.bg{fill:#0d1117}.fg{fill:#e6edf3}"
    ".rule{stroke:#9198a1}.cursor{stroke:#ff7b72}.model{fill:#ab7df8;stroke:#ab7df8}"
    ".tool{fill:#4493f8;stroke:#4493f8}.held{fill:#f0883e;stroke:#f0883e}"
    ".queue{fill:#3fb950;stroke:#3fb950}}"
)


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.2f}s"


def _tick(ms: float, end: float) -> str:
    """A tick's label: milliseconds on a run shorter than a second (an instant replay's
    ticks would all read 0.00s), else seconds."""
    if end >= 1000:
        return _seconds(ms)
    return f"{ms:.1f}ms" if end < 10 else f"{ms:.0f}ms"


def _end_of(timeline: Timeline) -> float:
    times = [0.0, *timeline["turns"]]
    for span in timeline["spans"]:
        times.append(span["start"])
        if span["end"] is not None:
            times.append(span["end"])
    return max(times)


def _ticks(end: float) -> list[float]:
    step = end / 5 if end > 0 else 1.0
    return [step * i for i in range(6)]


@dataclass(frozen=True, slots=True)
class Placed:
    """A label where it is drawn: at ``x`` (its left end), ``text`` cut to fit when ``cut``."""

    x: float
    text: str
    full: str

    @property
    def cut(self) -> bool:
        return self.text != self.full


def text_width(text: str, size: float) -> float:
    """The estimated width of ``text`` at font ``size`` (see :data:`EM_PER_CHAR`)."""
    return len(text) * size * EM_PER_CHAR


def place_labels(
    labels: list[tuple[float, str]], size: float, left: float, right: float
) -> list[Placed]:
    """``(x, text)`` labels of one line placed left to right: each at its ``x``, moved left to
    end at ``right`` if it would pass it, but never over the label before (then just after
    that one, cut with an ellipsis to fit); left out when too little of it would fit.
    js/timeline.js places the same."""
    placed: list[Placed] = []
    free = left
    for x, text in sorted(labels, key=lambda label: label[0]):
        at = max(free, min(x, right - text_width(text, size)))
        room = int((right - at) / (size * EM_PER_CHAR))
        shown = text if len(text) <= room else text[: room - 1] + "…"
        if len(shown) < min(FEWEST_CHARS, len(text)) or room < 1:
            continue
        placed.append(Placed(round(at, 1), shown, text))
        free = at + text_width(shown, size) + GAP
    return placed


def _label(placed: Placed, y: float, size: float | None = None, cls: str = "fg") -> str:
    """A placed label as ``<text>``; a cut one carries its full text as its ``<title>``."""
    font = f' font-size="{size:g}"' if size is not None else ""
    title = f"<title>{escape_html(placed.full)}</title>" if placed.cut else ""
    return (
        f'<text class="{cls}" x="{placed.x}" y="{y}"{font}>{title}{escape_html(placed.text)}</text>'
    )


def timeline_svg(timeline: Timeline) -> str:
    """The timeline as one ``<svg>`` (see the module docstring); "" when it is empty."""
    lanes = timeline["lanes"]
    if not lanes:
        return ""
    end = _end_of(timeline) or 1.0
    plot = WIDTH - LABEL_WIDTH - 12

    def x(ms: float) -> float:
        return round(LABEL_WIDTH + plot * max(0.0, min(ms, end)) / end, 1)

    top_of: dict[str, float] = {}  # each lane's top edge (the model lane is taller)
    bottom = TOP
    for lane in lanes:
        top_of[lane["id"]] = bottom
        bottom += ROW + (NAMES_ROW if lane["kind"] == "model" else 0)
    height = bottom + 24
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" '
        f'width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        'font-family="sans-serif" font-size="11">',
        f"<title>Timeline of the run: {len(lanes)} lanes over {_seconds(end)}</title>",
        f"<style>{COLOURS}</style>",
        f'<rect class="bg" x="0" y="0" width="{WIDTH}" height="{height}" rx="4"/>',
    ]
    ticks = _ticks(end)
    for n, tick in enumerate(ticks):
        anchor = "start" if n == 0 else "end" if n == len(ticks) - 1 else "middle"
        out.append(
            f'<text class="fg" x="{x(tick)}" y="12" text-anchor="{anchor}" fill-opacity="0.7">'
            f"{_tick(tick, end)}</text>"
        )
    turns = [(x(start) + 2, f"turn {n}") for n, start in enumerate(timeline["turns"], 1)]
    for start in timeline["turns"]:
        out.append(
            f'<line class="rule" x1="{x(start)}" y1="16" x2="{x(start)}" '
            f'y2="{bottom}" stroke-opacity="0.6" stroke-dasharray="2 3"/>'
        )
    out.extend(_label(p, 25) for p in place_labels(turns, 11, LABEL_WIDTH, WIDTH - MARGIN))
    for lane in lanes:
        y = top_of[lane["id"]]
        below = y + ROW - 3 + (NAMES_ROW if lane["kind"] == "model" else 0)
        name = place_labels([(4, lane["label"])], 11, 4, LABEL_WIDTH - GAP)
        out.append(
            f'<g data-lane="{escape_html(lane["id"])}">{"".join(_label(p, y + BAR) for p in name)}'
            f'<line class="rule" x1="{LABEL_WIDTH}" y1="{below}" x2="{WIDTH - 12}" '
            f'y2="{below}" stroke-opacity="0.2"/></g>'
        )
    # Each request named once, under its first span, by its fullest label ("request 2" and
    # "request 2 (turn 2)" are one request).
    requests: dict[str, tuple[float, str]] = {}
    for span in timeline["spans"]:
        top = top_of.get(span["lane"])
        if top is not None:
            out.append(_bar(span, top, x, end))
            if span["lane"] == MODEL and span["label"]:
                key = span["label"].split(" (")[0]
                at, label = requests.get(key, (x(span["start"]), ""))
                requests[key] = (at, max(label, span["label"], key=len))
    if MODEL in top_of:
        names = list(requests.values())
        under = top_of[MODEL] + BAR + NAMES_ROW - 1
        placed = place_labels(names, 9, LABEL_WIDTH, WIDTH - MARGIN)
        out.extend(_label(p, under, 9) for p in placed)
    cursor = next((s for s in timeline["spans"] if s["kind"] == "held" and s["end"] is None), None)
    if cursor is not None:
        out.append(
            f'<line class="cursor" x1="{x(cursor["start"])}" y1="16" '
            f'x2="{x(cursor["start"])}" y2="{bottom}" stroke-width="2">'
            f"<title>held now: {escape_html(cursor['label'])}</title></line>"
        )
    legend = " · ".join(
        f"{word}: {OUTLINE_WORDS.get(LOOK[kind][1], 'dashed')}"
        for kind, word in (("prepared", "prepared"), ("running", "running"), ("held", "held"))
    )
    out.append(f'<text class="fg" x="4" y="{bottom + 16}" fill-opacity="0.8">{legend}</text>')
    out.append("</svg>")
    return "".join(out)


def _bar(span: TimelineSpan, y: float, scale: Callable[[float], float], end: float) -> str:
    start = span["start"]
    stop = span["end"] if span["end"] is not None else end
    left, right = scale(start), scale(stop)
    width = max(1.5, round(right - left, 1))
    opacity, dash = LOOK.get(span["kind"], (0.4, ""))
    outline = f' stroke-dasharray="{dash}"' if dash else ""
    what = WORDS.get(span["kind"], span["kind"])
    outcome = f", {span['outcome']}" if span["outcome"] else ""
    until = _seconds(stop) if span["end"] is not None else "now"
    title = f"{span['label']}: {what}{outcome}, {_seconds(start)} to {until}"
    return (
        f'<g data-kind="{span["kind"]}" data-start="{start}" '
        f'data-end="{stop}" data-lane="{escape_html(span["lane"])}">'
        f'<rect class="{SPAN_CLASS.get(span["kind"], "tool")}" x="{left}" y="{y + 2}" '
        f'width="{width}" height="{BAR - 2}" fill-opacity="{opacity}" '
        f'stroke-opacity="0.9"{outline}><title>{escape_html(title)}</title></rect></g>'
    )


def timeline_box(timeline: Timeline) -> str:
    """The static transcript's timeline: the SVG as an image (see the module docstring) and
    its rows as text, in an open ``<details>`` ("" when there is no timeline)."""
    svg = timeline_svg(timeline)
    if not svg:
        return ""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    names = ", ".join(lane["label"] for lane in timeline["lanes"])
    alt = escape_html(f"Timeline of the run, lanes: {names}")
    rows = escape_html(timeline_rows(timeline))
    return (
        '<details class="pi-timeline-box" open><summary>Timeline</summary>'
        f'<img class="pi-timeline" alt="{alt}" src="data:image/svg+xml;base64,{data}">'
        '<details class="pi-timeline-text"><summary>as text</summary>'
        f"<pre>{rows}</pre></details></details>"
    )


def timeline_rows(timeline: Timeline) -> str:
    """The timeline as text rows, one per span in time order, turn starts among them."""
    if not timeline["lanes"]:
        return "no timeline: no run was shown in a panel yet"
    names = {lane["id"]: lane["label"] for lane in timeline["lanes"]}
    width = max(len(name) for name in names.values())
    rows: list[tuple[float, int, str]] = []
    for n, start in enumerate(timeline["turns"], start=1):
        rows.append((start, 0, f"{start / 1000:>8.3f}s {'':>9} ── turn {n} starts"))
    for span in timeline["spans"]:
        stop = span["end"]
        until = f"{stop / 1000:>8.3f}s" if stop is not None else "     now "
        outcome = f" ({span['outcome']})" if span["outcome"] else ""
        what = WORDS.get(span["kind"], span["kind"])
        lane = names.get(span["lane"], span["lane"])
        rows.append(
            (
                span["start"],
                1,
                f"{span['start'] / 1000:>8.3f}s {until} {lane:<{width}}  {what}"
                f"{': ' + span['label'] if span['label'] != lane else ''}{outcome}",
            )
        )
    rows.sort(key=lambda row: (row[0], row[1]))
    head = f"{'start':>9} {'end':>9} {'lane':<{width}}  what"
    return "\n".join([head, *(text for _, _, text in rows)])


__all__ = ["timeline_box", "timeline_rows", "timeline_svg"]
